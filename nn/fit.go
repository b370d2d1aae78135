package nn

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gml-dev/gml/display"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// Logs holds the values reported after a batch or an epoch: "loss", metrics, per-output
// losses of multi-output models, and "val_" versions after validation.
type Logs map[string]float64

// barInterval is the least time between two progress-bar updates, so fast steps do not
// pay for formatting.
const barInterval = 50 * time.Millisecond

// Batch is one step of data from a generator: inputs and labels, one tensor per model
// input and output.
type Batch struct {
	X, Y []*tensor.Tensor
}

// Fit trains the model on inputs x and labels y (each a *tensor.Tensor, a
// []*tensor.Tensor for several inputs or outputs, or [][]float64 rows). Each step runs
// one compiled graph — forward, gradients and optimizer update — and downloads only the
// loss and metric values. It returns the History of per-epoch logs, with the learning
// rate of each epoch as "lr". The data is checked first: class ids must be classes of
// the head, and inputs and labels finite (CheckFinite); a loss that turns NaN or
// infinite stops training with an error. An interrupt (the notebook's Interrupt
// button) stops after the current batch; the weights trained so far are kept and Fit
// returns the history with runtime.ErrInterrupted.
func (m *Net) Fit(x, y any, opts ...FitOption) (*History, error) {
	s := defaultFitSettings()
	if err := applyOptions("Fit", &s, []string{"Epochs", "BatchSize", "Shuffle", "ValidationSplit", "ValidationData",
		"ClassWeights", "SampleWeights", "Callbacks", "InitialEpoch", "Verbose", "Seed", "CheckFinite"}, opts, FitOption.fitSetting); err != nil {
		return nil, err
	}
	all, specs, err := m.load(x, y, &s.weighting)
	if err != nil {
		return nil, err
	}
	if !s.seedSet {
		s.seed = m.comp.seed
	}
	if s.checkFinite {
		if err := m.checkFinite(all, ""); err != nil {
			return nil, err
		}
	}
	val, err := m.validationData(&s)
	if err != nil {
		return nil, err
	}
	train := all
	if val == nil && s.validationSplit > 0 {
		cut := all.n - int(float64(all.n)*s.validationSplit)
		if cut <= 0 || cut >= all.n {
			return nil, fmt.Errorf("nn: validation split %v of %d samples leaves no training or no validation data", s.validationSplit, all.n)
		}
		if train, err = all.split(0, cut); err != nil {
			return nil, err
		}
		if val, err = all.split(cut, all.n); err != nil {
			return nil, err
		}
		val.ws = make([]*tensor.Tensor, len(val.ys))
	}
	steps := (train.n + s.batchSize - 1) / s.batchSize
	next := func(epoch int) func() (*batch, error) {
		idx := order(train.n, s.shuffle, s.seed, epoch)
		i := 0
		return func() (*batch, error) {
			if i >= train.n {
				return nil, nil
			}
			j := min(i+s.batchSize, train.n)
			b, err := train.take(idx[i:j])
			i = j
			return b, err
		}
	}
	return m.loop(&s, specs, steps, next, val)
}

// FitGenerator trains from a function returning the next Batch, or nil at the end of
// an epoch (it is called again for the next epoch). For a generator that never ends,
// StepsPerEpoch says how many batches make an epoch; one that ends before that is an
// error. Options as Fit, except the validation split and weights.
func (m *Net) FitGenerator(gen func() *Batch, opts ...FitOption) (*History, error) {
	s := defaultFitSettings()
	allowed := []string{"Epochs", "StepsPerEpoch", "ValidationData", "Callbacks", "InitialEpoch", "Verbose", "CheckFinite"}
	if err := applyOptions("FitGenerator", &s, allowed, opts, FitOption.fitSetting); err != nil {
		return nil, err
	}
	if gen == nil {
		return nil, errors.New("nn: FitGenerator: nil generator")
	}
	first := gen()
	if first == nil {
		return nil, errors.New("nn: FitGenerator: the generator returned no batch")
	}
	if err := m.ready(first.X); err != nil {
		return nil, err
	}
	val, err := m.validationData(&s)
	if err != nil {
		return nil, err
	}
	pending := first
	count := 0
	next := func(epoch int) func() (*batch, error) {
		step := 0
		return func() (*batch, error) {
			if s.stepsPerEpoch > 0 && step == s.stepsPerEpoch {
				return nil, nil
			}
			b := pending
			pending = nil
			if b == nil {
				b = gen()
			}
			count++
			if b == nil {
				if s.stepsPerEpoch > 0 {
					return nil, fmt.Errorf("nn: FitGenerator: the generator ended after %d of %d steps of epoch %d (short epoch)", step, s.stepsPerEpoch, epoch+1)
				}
				return nil, nil
			}
			step++
			d, _, err := m.prepare(b.X, b.Y, &s.weighting)
			if err != nil {
				return nil, fmt.Errorf("%w (generator batch %d)", err, count)
			}
			return &batch{xs: d.xs, ys: d.ys, ws: d.ws, n: d.n}, nil
		}
	}
	return m.loop(&s, nil, s.stepsPerEpoch, next, val)
}

// validationData returns the ValidationData of s conformed to the model (nil without
// it), checked to be finite when s asks so.
func (m *Net) validationData(s *fitSettings) (*dataset, error) {
	if len(s.validationX) == 0 {
		return nil, nil
	}
	vx, vn, err := m.conformInputs(s.validationX)
	if err != nil {
		return nil, fmt.Errorf("%w (validation data)", err)
	}
	vy, _, err := m.conformLabels(s.validationY, vn)
	if err != nil {
		return nil, fmt.Errorf("%w (validation data)", err)
	}
	val := &dataset{xs: vx, ys: vy, ws: make([]*tensor.Tensor, len(vy)), n: vn}
	if s.checkFinite {
		if err := m.checkFinite(val, "validation "); err != nil {
			return nil, err
		}
	}
	return val, nil
}

// load converts x and y (tensors, slices, or a slice of them per input/output), builds
// the model for x if needed, and prepares the dataset for training or evaluation,
// weighted as w says.
func (m *Net) load(x, y any, w *weighting) (*dataset, []Spec, error) {
	xs, err := toTensors(x)
	if err != nil {
		return nil, nil, err
	}
	ys, err := toTensors(y)
	if err != nil {
		return nil, nil, err
	}
	if err := m.ready(xs); err != nil {
		return nil, nil, err
	}
	return m.prepare(xs, ys, w)
}

// ready builds a Sequential model from its first data and resolves the loss heads.
func (m *Net) ready(xs []*tensor.Tensor) error {
	if err := m.ensureBuilt(xs); err != nil {
		return err
	}
	if m.comp == nil || m.comp.opt == nil {
		return errors.New("nn: the model is not compiled: call Compile(optimizer, nn.Loss(...)) first")
	}
	if m.comp.heads == nil {
		return m.resolveHeads()
	}
	return nil
}

// loop runs the epochs: batches from next(epoch), validation, callbacks and progress.
func (m *Net) loop(s *fitSettings, specs []Spec, steps int, next func(epoch int) func() (*batch, error), val *dataset) (*History, error) {
	if m.History == nil {
		m.History = newHistory()
	}
	hist := m.History
	tr := &Training{Model: m}
	cbs := s.callbacks
	for _, cb := range cbs {
		if b, ok := cb.(TrainBeginCallback); ok {
			if err := b.OnTrainBegin(tr); err != nil {
				return hist, err
			}
		}
	}
	var runErr error
	for epoch := s.initialEpoch; epoch < s.epochs && !tr.StopTraining && runErr == nil; epoch++ {
		tr.Epoch = epoch
		for _, cb := range cbs {
			if b, ok := cb.(EpochBeginCallback); ok {
				if err := b.OnEpochBegin(tr, epoch); err != nil {
					return hist, err
				}
			}
		}
		var bar *display.Progress
		if s.verbose == 1 {
			bar = display.NewProgress(steps, display.WithLabel(fmt.Sprintf("Epoch %d/%d", epoch+1, s.epochs)))
		}
		start, shown := time.Now(), time.Time{}
		acc := newAccumulator(m.scalarNames())
		nextBatch := next(epoch)
		for step := 0; ; step++ {
			b, err := nextBatch()
			if err != nil {
				runErr = err
				break
			}
			if b == nil {
				break
			}
			if specs == nil {
				specs = m.labelSpecsOf(b)
			}
			vals, err := m.trainStep(b, specs)
			if err != nil {
				runErr = err
				break
			}
			if loss := vals[0]; s.checkFinite && (math.IsNaN(loss) || math.IsInf(loss, 0)) {
				runErr = divergence(loss, epoch, step, steps)
				break
			}
			acc.add(vals, b.n)
			logs := acc.logs()
			if bar != nil && time.Since(shown) > barInterval {
				shown = time.Now()
				bar.Postfix(logs.String())
				bar.Set(step + 1)
			}
			for _, cb := range cbs {
				if bc, ok := cb.(BatchCallback); ok {
					if err := bc.OnBatchEnd(tr, step, logs); err != nil {
						runErr = err
					}
				}
			}
			if runErr != nil {
				break
			}
			if err := runtime.Interrupted(); err != nil {
				runErr = err
				break
			}
		}
		if acc.n == 0 {
			if bar != nil {
				bar.Done()
			}
			break
		}
		logs := acc.logs()
		if o, err := m.optimizer(); err == nil {
			logs["lr"] = o.LR()
		}
		if val != nil && runErr == nil {
			vl, err := m.evaluate(val, s.batchSize)
			if err != nil {
				runErr = err
			}
			for k, v := range vl {
				logs["val_"+k] = v
			}
		}
		if bar != nil {
			bar.Postfix(logs.String())
			bar.Set(acc.steps)
			bar.Done()
		} else if s.verbose == 2 {
			fmt.Printf("Epoch %d/%d - %.1fs - %s\n", epoch+1, s.epochs, time.Since(start).Seconds(), logs)
		}
		hist.add(epoch, logs)
		if runErr != nil {
			break
		}
		for _, cb := range cbs {
			if err := cb.OnEpochEnd(tr, epoch, logs); err != nil {
				return hist, err
			}
		}
	}
	for _, cb := range cbs {
		if e, ok := cb.(TrainEndCallback); ok {
			if err := e.OnTrainEnd(tr); err != nil && runErr == nil {
				runErr = err
			}
		}
	}
	return hist, runErr
}

// divergence is the error of a non-finite loss at a 0-based epoch and step of steps
// (0 when unknown).
func divergence(loss float64, epoch, step, steps int) error {
	of := ""
	if steps > 0 {
		of = fmt.Sprintf(" of %d", steps)
	}
	return fmt.Errorf("nn: Fit: the loss became %v at epoch %d, batch %d%s, so training stopped and the weights may hold "+
		"non-finite values now: lower the learning rate, scale the inputs, or check the labels "+
		"(nn.CheckFinite(false) trains on regardless)", loss, epoch+1, step+1, of)
}

// labelSpecsOf returns the label specs of a prepared batch.
func (m *Net) labelSpecsOf(b *batch) []Spec {
	specs := make([]Spec, len(b.ys))
	for i, y := range b.ys {
		specs[i] = Spec{DType: y.DType(), Shape: y.Shape()[1:].Clone()}
	}
	return specs
}

// trainStep runs one training step and returns the fetched scalars.
func (m *Net) trainStep(b *batch, specs []Spec) ([]float64, error) {
	p, err := m.buildProgram("train", b.n, specs, weightShapes(b.ws, b.n))
	if err != nil {
		return nil, err
	}
	o := m.comp.opt.base()
	if par := m.comp.par; par != nil {
		rt, err := m.comp.open()
		if err != nil {
			return nil, err
		}
		if err := par.push(rt); err != nil {
			return nil, fmt.Errorf("nn: DataParallel: copying the weights to the replicas: %w", err)
		}
		if err := o.sync(par.meta); err != nil {
			return nil, err
		}
		par.ahead = true
	} else if err := o.sync(m.comp.rt); err != nil {
		return nil, err
	}
	feeds := m.feeds(p, b)
	p.feedSeeds(feeds, m.comp.seed, o.steps)
	out, err := p.exe.Run(feeds)
	if err != nil {
		return nil, err
	}
	o.steps++
	return scalars(out[:len(p.names)]), nil
}

// feeds maps a program's data inputs to a batch's tensors.
func (m *Net) feeds(p *program, b *batch) map[*tensor.Node]*tensor.Tensor {
	f := make(map[*tensor.Node]*tensor.Tensor, len(p.xs)+2*len(p.ys)+3)
	for i, x := range p.xs {
		f[x] = b.xs[i]
	}
	for i, y := range p.ys {
		f[y] = b.ys[i]
		if p.ws[i] != nil {
			f[p.ws[i]] = b.ws[i]
		}
	}
	return f
}

// scalars reads the first element of each tensor.
func scalars(ts []*tensor.Tensor) []float64 {
	out := make([]float64, len(ts))
	for i, t := range ts {
		out[i] = t.Float(0)
	}
	return out
}

// accumulator averages per-batch scalars weighted by batch size.
type accumulator struct {
	names []string
	sums  []float64
	n     int
	steps int
}

func newAccumulator(names []string) *accumulator {
	return &accumulator{names: names, sums: make([]float64, len(names))}
}

func (a *accumulator) add(vals []float64, n int) {
	for i, v := range vals {
		a.sums[i] += v * float64(n)
	}
	a.n += n
	a.steps++
}

// logs returns the running means.
func (a *accumulator) logs() Logs {
	l := Logs{}
	for i, nm := range a.names {
		l[nm] = a.sums[i] / float64(max(a.n, 1))
	}
	return l
}

// String formats logs in a stable order: loss first, then the rest sorted.
func (l Logs) String() string {
	keys := sortedKeys(l)
	var b strings.Builder
	if v, ok := l["loss"]; ok {
		fmt.Fprintf(&b, "loss=%.4f", v)
	}
	for _, k := range keys {
		if k == "loss" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if k == "lr" {
			fmt.Fprintf(&b, "lr=%.3g", l[k]) // rates span decades: 1e-05, not 0.0000
			continue
		}
		fmt.Fprintf(&b, "%s=%.4f", k, l[k])
	}
	return b.String()
}

// feedSeeds feeds the dropout seeds of a training step: distinct per step and site,
// reproducible from the Compile seed.
func (p *program) feedSeeds(feeds map[*tensor.Node]*tensor.Tensor, seed uint64, step int) {
	for k, s := range p.seeds {
		v := uint32(seed) + uint32(step)*2654435761 + uint32(k)*7919
		feeds[s] = tensor.Scalar(tensor.I32, float64(int32(v)))
	}
}
