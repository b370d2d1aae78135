package nn

import (
	"fmt"
	"math"
	"strings"

	"github.com/gml-dev/gml/tensor"
)

// Training is the state Fit shares with callbacks.
type Training struct {
	Model        *Net
	Epoch        int
	StopTraining bool // set by a callback to stop after the current epoch
}

// Callback is called by Fit after every epoch with that epoch's logs. Callbacks may
// also implement EpochBeginCallback, BatchCallback, TrainBeginCallback and
// TrainEndCallback. An error stops Fit.
type Callback interface {
	OnEpochEnd(t *Training, epoch int, logs Logs) error
}

// EpochBeginCallback is called before each epoch.
type EpochBeginCallback interface {
	OnEpochBegin(t *Training, epoch int) error
}

// BatchCallback is called after each training batch with the epoch's running logs.
type BatchCallback interface {
	OnBatchEnd(t *Training, batch int, logs Logs) error
}

// TrainBeginCallback is called when Fit starts.
type TrainBeginCallback interface {
	OnTrainBegin(t *Training) error
}

// TrainEndCallback is called when Fit ends, also after an interrupt or early stop.
type TrainEndCallback interface {
	OnTrainEnd(t *Training) error
}

// monitor tracks the best value of one logged quantity.
type monitor struct {
	key      string
	maximize bool
	minDelta float64
	best     float64
	seen     bool
}

func newMonitor(key string, minDelta float64) monitor {
	return monitor{key: key, maximize: strings.Contains(key, "acc"), minDelta: minDelta}
}

// improved records logs[key] and reports whether it beats the best so far.
func (m *monitor) improved(logs Logs) (bool, error) {
	v, ok := logs[m.key]
	if !ok {
		return false, fmt.Errorf("nn: callback monitors %q, which the logs lack (have %s)", m.key, strings.Join(sortedKeys(logs), ", "))
	}
	better := !m.seen || (m.maximize && v > m.best+m.minDelta) || (!m.maximize && v < m.best-m.minDelta)
	if better {
		m.best, m.seen = v, true
	}
	return better, nil
}

// Monitor names the logged quantity a callback watches (default "val_loss"; names
// containing "acc" are maximised, others minimised).
func Monitor(key string) Option {
	return opt("Monitor", func(s *settings) error { s.monitor = key; return nil })
}

// Patience is how many epochs without improvement a callback waits.
func Patience(n int) Option {
	return opt("Patience", func(s *settings) error {
		if n < 0 {
			return fmt.Errorf("patience %d is negative", n)
		}
		s.patience = n
		return nil
	})
}

// MinDelta is the least change that counts as an improvement.
func MinDelta(d float64) Option {
	return opt("MinDelta", func(s *settings) error { s.minDelta = math.Abs(d); return nil })
}

// RestoreBest makes EarlyStopping put back the weights of the best epoch when it stops.
func RestoreBest() Option {
	return opt("RestoreBest", func(s *settings) error { s.restoreBest = true; return nil })
}

// Factor is ReduceLROnPlateau's multiplier (default 0.1).
func Factor(f float64) Option {
	return opt("Factor", func(s *settings) error {
		if f <= 0 || f >= 1 {
			return fmt.Errorf("factor %v outside (0, 1)", f)
		}
		s.factor = f
		return nil
	})
}

// MinLR is the floor ReduceLROnPlateau does not go below.
func MinLR(lr float64) Option {
	return opt("MinLR", func(s *settings) error { s.minLR = lr; return nil })
}

// SaveBestOnly makes ModelCheckpoint save only when the monitored value improves.
func SaveBestOnly() Option {
	return opt("SaveBestOnly", func(s *settings) error { s.saveBestOnly = true; return nil })
}

func callbackSettings(call string, allowed []string, opts []Option) (settings, error) {
	s := defaultSettings()
	s.monitor, s.factor = "val_loss", 0.1
	return s, applyOptions(call, &s, allowed, opts)
}

// earlyStopping stops training when the monitored value stops improving.
type earlyStopping struct {
	mon      monitor
	patience int
	restore  bool
	wait     int
	best     map[*tensor.Variable]*tensor.Tensor
	err      error
}

// EarlyStopping stops Fit when Monitor (default val_loss) has not improved for Patience
// epochs (default 0); with RestoreBest the best epoch's weights are put back. Options:
// Monitor, Patience, MinDelta, RestoreBest.
func EarlyStopping(opts ...Option) Callback {
	s, err := callbackSettings("EarlyStopping", []string{"Monitor", "Patience", "MinDelta", "RestoreBest"}, opts)
	return &earlyStopping{mon: newMonitor(s.monitor, s.minDelta), patience: s.patience, restore: s.restoreBest, err: err}
}

func (e *earlyStopping) OnEpochEnd(t *Training, epoch int, logs Logs) error {
	if e.err != nil {
		return e.err
	}
	better, err := e.mon.improved(logs)
	if err != nil {
		return err
	}
	if better {
		e.wait = 0
		if e.restore {
			if e.best, err = t.Model.snapshot(); err != nil {
				return err
			}
		}
		return nil
	}
	e.wait++
	if e.wait > e.patience {
		t.StopTraining = true
		if e.restore && e.best != nil {
			return t.Model.restore(e.best)
		}
	}
	return nil
}

// scheduleCallback sets the learning rate before each epoch.
type scheduleCallback struct {
	f func(epoch int, lr float64) float64
}

// LRSchedule sets the learning rate before each epoch to f(epoch, current rate).
func LRSchedule(f func(epoch int, lr float64) float64) Callback { return &scheduleCallback{f: f} }

func (c *scheduleCallback) OnEpochBegin(t *Training, epoch int) error {
	o, err := t.Model.optimizer()
	if err != nil {
		return err
	}
	lr := c.f(epoch, o.LR())
	if !(lr > 0) {
		return fmt.Errorf("nn: LRSchedule returned learning rate %v for epoch %d", lr, epoch)
	}
	o.SetLR(lr)
	return nil
}

func (c *scheduleCallback) OnEpochEnd(*Training, int, Logs) error { return nil }

// plateau lowers the learning rate when the monitored value stalls.
type plateau struct {
	mon      monitor
	patience int
	factor   float64
	minLR    float64
	wait     int
	err      error
}

// ReduceLROnPlateau multiplies the learning rate by Factor (default 0.1) when Monitor
// (default val_loss) has not improved for Patience epochs, down to MinLR.
func ReduceLROnPlateau(opts ...Option) Callback {
	s, err := callbackSettings("ReduceLROnPlateau", []string{"Monitor", "Patience", "MinDelta", "Factor", "MinLR"}, opts)
	return &plateau{mon: newMonitor(s.monitor, s.minDelta), patience: s.patience, factor: s.factor, minLR: s.minLR, err: err}
}

func (p *plateau) OnEpochEnd(t *Training, epoch int, logs Logs) error {
	if p.err != nil {
		return p.err
	}
	better, err := p.mon.improved(logs)
	if err != nil || better {
		p.wait = 0
		return err
	}
	p.wait++
	if p.wait > p.patience {
		o, err := t.Model.optimizer()
		if err != nil {
			return err
		}
		o.SetLR(math.Max(o.LR()*p.factor, p.minLR))
		p.wait = 0
	}
	return nil
}

// checkpoint saves the model after epochs.
type checkpoint struct {
	path     string
	mon      monitor
	bestOnly bool
	err      error
}

// ModelCheckpoint saves the model to path after every epoch, or only when Monitor
// improves with SaveBestOnly. "{epoch}" in path is replaced by the 1-based epoch.
func ModelCheckpoint(path string, opts ...Option) Callback {
	s, err := callbackSettings("ModelCheckpoint", []string{"Monitor", "SaveBestOnly"}, opts)
	return &checkpoint{path: path, mon: newMonitor(s.monitor, 0), bestOnly: s.saveBestOnly, err: err}
}

func (c *checkpoint) OnEpochEnd(t *Training, epoch int, logs Logs) error {
	if c.err != nil {
		return c.err
	}
	if c.bestOnly {
		better, err := c.mon.improved(logs)
		if err != nil || !better {
			return err
		}
	}
	return t.Model.Save(strings.ReplaceAll(c.path, "{epoch}", fmt.Sprint(epoch+1)))
}

// funcCallback wraps user functions.
type funcCallback struct {
	epoch func(epoch int, logs Logs) error
	batch func(batch int, logs Logs) error
}

// EpochFunc calls f after every epoch; an error from f stops Fit.
func EpochFunc(f func(epoch int, logs Logs) error) Callback { return &funcCallback{epoch: f} }

// BatchFunc calls f after every batch with the epoch's running logs; an error stops Fit.
func BatchFunc(f func(batch int, logs Logs) error) Callback { return &funcCallback{batch: f} }

func (c *funcCallback) OnEpochEnd(_ *Training, epoch int, logs Logs) error {
	if c.epoch == nil {
		return nil
	}
	return c.epoch(epoch, logs)
}

func (c *funcCallback) OnBatchEnd(_ *Training, b int, logs Logs) error {
	if c.batch == nil {
		return nil
	}
	return c.batch(b, logs)
}
