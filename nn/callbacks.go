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

// reset forgets the best value, for a new Fit.
func (m *monitor) reset() { m.seen = false }

// improved records logs[key] and reports whether it beats the best so far.
func (m *monitor) improved(logs Logs) (bool, error) {
	v, ok := logs[m.key]
	if !ok {
		return false, fmt.Errorf("nn: callback monitors %q, which the logs lack (have %s)", m.key, strings.Join(sortedKeys(logs), ", "))
	}
	// NaN never improves on anything, as in Keras, where the best starts at ±Inf.
	better := !math.IsNaN(v) && (!m.seen || (m.maximize && v > m.best+m.minDelta) || (!m.maximize && v < m.best-m.minDelta))
	if better {
		m.best, m.seen = v, true
	}
	return better, nil
}

// callbackSettings collects the options of EarlyStopping, ReduceLROnPlateau and
// ModelCheckpoint.
type callbackSettings struct {
	monitor      string
	patience     int
	minDelta     float64
	restoreBest  bool
	factor       float64
	minLR        float64
	cooldown     int
	saveBestOnly bool
}

// callbackOption builds a callback option.
func callbackOption(name string, set func(*callbackSettings) error) CallbackOption {
	return callbackOpt{name, set}
}

// Monitor names the logged quantity a callback watches (default "val_loss"; names
// containing "acc" are maximised, others minimised).
func Monitor(key string) CallbackOption {
	return callbackOption("Monitor", func(s *callbackSettings) error { s.monitor = key; return nil })
}

// Patience is how many epochs without improvement a callback waits before it acts: the
// patience-th such epoch in a row stops EarlyStopping (as in Keras: Patience(3) stops
// after the third epoch without improvement) or lowers ReduceLROnPlateau's rate.
func Patience(n int) CallbackOption {
	return callbackOption("Patience", func(s *callbackSettings) error {
		if n < 0 {
			return fmt.Errorf("patience %d is negative", n)
		}
		s.patience = n
		return nil
	})
}

// MinDelta is the least change of the monitored value that counts as an improvement.
func MinDelta(d float64) CallbackOption {
	return callbackOption("MinDelta", func(s *callbackSettings) error { s.minDelta = math.Abs(d); return nil })
}

// RestoreBest makes EarlyStopping put back the weights of the best epoch when training
// ends, whether it stopped early or not (as Keras's restore_best_weights).
func RestoreBest() CallbackOption {
	return callbackOption("RestoreBest", func(s *callbackSettings) error { s.restoreBest = true; return nil })
}

// Factor is ReduceLROnPlateau's multiplier (default 0.1).
func Factor(f float64) CallbackOption {
	return callbackOption("Factor", func(s *callbackSettings) error {
		if f <= 0 || f >= 1 {
			return fmt.Errorf("factor %v outside (0, 1)", f)
		}
		s.factor = f
		return nil
	})
}

// MinLR is the floor ReduceLROnPlateau does not go below.
func MinLR(lr float64) CallbackOption {
	return callbackOption("MinLR", func(s *callbackSettings) error {
		if lr < 0 {
			return fmt.Errorf("learning rate %v is negative", lr)
		}
		s.minLR = lr
		return nil
	})
}

// Cooldown is how many epochs ReduceLROnPlateau waits after lowering the rate before it
// counts epochs without improvement again (default 0).
func Cooldown(n int) CallbackOption {
	return callbackOption("Cooldown", func(s *callbackSettings) error {
		if n < 0 {
			return fmt.Errorf("cooldown %d is negative", n)
		}
		s.cooldown = n
		return nil
	})
}

// SaveBestOnly makes ModelCheckpoint save only when the monitored value improves.
func SaveBestOnly() CallbackOption {
	return callbackOption("SaveBestOnly", func(s *callbackSettings) error { s.saveBestOnly = true; return nil })
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
// epochs in a row (default 0: at the first epoch without improvement), as Keras's
// EarlyStopping does; with RestoreBest the best epoch's weights are put back when
// training ends. Options: Monitor, Patience, MinDelta, RestoreBest. Each Fit starts
// afresh, so one callback serves several.
func EarlyStopping(opts ...CallbackOption) Callback {
	s := callbackSettings{monitor: "val_loss"}
	err := applyOptions("EarlyStopping", &s, []string{"Monitor", "Patience", "MinDelta", "RestoreBest"}, opts, CallbackOption.callbackSetting)
	return &earlyStopping{mon: newMonitor(s.monitor, s.minDelta), patience: s.patience, restore: s.restoreBest, err: err}
}

func (e *earlyStopping) OnTrainBegin(*Training) error {
	e.mon.reset()
	e.wait, e.best = 0, nil
	return e.err
}

func (e *earlyStopping) OnEpochEnd(t *Training, epoch int, logs Logs) error {
	better, err := e.mon.improved(logs)
	if err != nil {
		return err
	}
	if better {
		e.wait = 0
		if e.restore {
			e.best, err = t.Model.snapshot()
		}
		return err
	}
	e.wait++
	if e.wait >= e.patience && epoch > 0 { // as Keras: never at the first epoch
		t.StopTraining = true
	}
	return nil
}

func (e *earlyStopping) OnTrainEnd(t *Training) error {
	if e.restore && e.best != nil {
		return t.Model.restore(e.best)
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
	cooldown int
	wait     int
	cooling  int // epochs of cooldown left
	err      error
}

// ReduceLROnPlateau multiplies the learning rate by Factor (default 0.1) when Monitor
// (default val_loss) has not improved by MinDelta (default 1e-4) for Patience epochs in
// a row (default 10), down to MinLR, then waits Cooldown epochs (default 0) before
// counting again: Keras's ReduceLROnPlateau, defaults included. Each Fit starts
// afresh.
func ReduceLROnPlateau(opts ...CallbackOption) Callback {
	s := callbackSettings{monitor: "val_loss", factor: 0.1, patience: 10, minDelta: 1e-4}
	err := applyOptions("ReduceLROnPlateau", &s, []string{"Monitor", "Patience", "MinDelta", "Factor", "MinLR", "Cooldown"}, opts, CallbackOption.callbackSetting)
	return &plateau{mon: newMonitor(s.monitor, s.minDelta), patience: s.patience, factor: s.factor, minLR: s.minLR, cooldown: s.cooldown, err: err}
}

func (p *plateau) OnTrainBegin(*Training) error {
	p.mon.reset()
	p.wait, p.cooling = 0, 0
	return p.err
}

func (p *plateau) OnEpochEnd(t *Training, epoch int, logs Logs) error {
	better, err := p.mon.improved(logs)
	if err != nil {
		return err
	}
	if p.cooling > 0 {
		p.cooling--
		p.wait = 0
	}
	if better {
		p.wait = 0
		return nil
	}
	if p.cooling > 0 {
		return nil
	}
	p.wait++
	if p.wait < p.patience {
		return nil
	}
	o, err := t.Model.optimizer()
	if err != nil {
		return err
	}
	if lr := o.LR(); lr > p.minLR {
		o.SetLR(math.Max(lr*p.factor, p.minLR))
		p.cooling, p.wait = p.cooldown, 0
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
func ModelCheckpoint(path string, opts ...CallbackOption) Callback {
	s := callbackSettings{monitor: "val_loss"}
	err := applyOptions("ModelCheckpoint", &s, []string{"Monitor", "SaveBestOnly"}, opts, CallbackOption.callbackSetting)
	return &checkpoint{path: path, mon: newMonitor(s.monitor, 0), bestOnly: s.saveBestOnly, err: err}
}

func (c *checkpoint) OnTrainBegin(*Training) error {
	c.mon.reset()
	return c.err
}

func (c *checkpoint) OnEpochEnd(t *Training, epoch int, logs Logs) error {
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
