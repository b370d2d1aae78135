package nn

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// Trainer runs training one step at a time, for loops the caller drives (reinforcement
// learning, curricula, custom schedules). Weights, optimizer moments and the compiled
// graphs stay alive between steps.
type Trainer struct {
	m     *Net
	accum int
	count int
	grads []*tensor.Variable // accumulated gradients (accumulation only)
	freed bool
}

// trainerSettings collects NewTrainer's options.
type trainerSettings struct{ accum int }

// GradientAccumulation makes a Trainer sum gradients over n steps and apply the
// optimizer once, on their mean.
func GradientAccumulation(n int) TrainerOption {
	return trainerOpt{"GradientAccumulation", func(s *trainerSettings) error { s.accum = n; return positive("accumulation steps", n) }}
}

// NewTrainer returns a step-wise trainer for a compiled model.
func (m *Net) NewTrainer(opts ...TrainerOption) (*Trainer, error) {
	s := trainerSettings{accum: 1}
	if err := applyOptions("NewTrainer", &s, nil, opts, TrainerOption.trainerSetting); err != nil {
		return nil, err
	}
	if m.comp == nil || m.comp.opt == nil {
		return nil, errors.New("nn: NewTrainer: compile the model first")
	}
	if s.accum > 1 && m.comp.par != nil {
		return nil, errors.New("nn: NewTrainer: gradient accumulation is not offered with DataParallel (each step already spans the replicas' batch)")
	}
	return &Trainer{m: m, accum: s.accum}, nil
}

// Step trains on one batch and returns its loss. With gradient accumulation the
// optimizer is applied on every n-th step.
func (t *Trainer) Step(x, y any) (float64, error) {
	b, specs, err := t.batch(x, y)
	if err != nil {
		return 0, err
	}
	if t.accum == 1 {
		vals, err := t.m.trainStep(b, specs)
		if err != nil {
			return 0, err
		}
		return vals[0], nil
	}
	p, err := t.accumProgram(b.n, specs, weightShapes(b.ws, b.n))
	if err != nil {
		return 0, err
	}
	feeds := t.m.feeds(p, b)
	p.feedSeeds(feeds, t.m.comp.seed, t.count)
	out, err := p.exe.Run(feeds)
	if err != nil {
		return 0, err
	}
	t.count++
	if t.count%t.accum == 0 {
		if err := t.apply(); err != nil {
			return 0, err
		}
	}
	return out[0].Float(0), nil
}

// batch prepares one step's data.
func (t *Trainer) batch(x, y any) (*batch, []Spec, error) {
	if t.freed {
		return nil, nil, errors.New("nn: the Trainer was freed")
	}
	d, specs, err := t.m.load(x, y, &weighting{})
	if err != nil {
		return nil, nil, err
	}
	return &batch{xs: d.xs, ys: d.ys, ws: d.ws, n: d.n}, specs, nil
}

// accumProgram builds the graph that adds a batch's gradients to the accumulators.
func (t *Trainer) accumProgram(n int, specs []Spec, ws []tensor.Shape) (*program, error) {
	m := t.m
	key := programKey("accum", n, specs, ws)
	if p, ok := m.comp.progs[key]; ok {
		return p, nil
	}
	params := m.Params()
	if t.grads == nil {
		for _, v := range params {
			t.grads = append(t.grads, tensor.NewVariable("optimizer/"+v.Name()+"/grad_sum", tensor.New(v.DType(), v.Shape()...)))
		}
	}
	rt, err := m.comp.runtime()
	if err != nil {
		return nil, err
	}
	p := &program{}
	var fetch []*tensor.Node
	err = tensor.Catch(func() {
		g := tensor.NewGraph()
		c := m.compiledFwd(g, true)
		for i, in := range m.inputs {
			p.xs = append(p.xs, g.Input(fmt.Sprintf("x%d", i), in.spec.DType, append([]int{n}, in.spec.Shape...)...))
		}
		fetch = m.lossGraph(g, c, p, m.forward(c, p.xs), n, specs, ws)[:1]
		p.seeds = c.seeds
		nodes := make([]*tensor.Node, len(params))
		for i, v := range params {
			nodes[i] = g.Var(v)
		}
		for i, gr := range tensor.Grad(fetch[0], nodes) {
			acc := g.Var(t.grads[i])
			fetch = append(fetch, tensor.Assign(acc, tensor.Add(acc, gr)))
		}
		fetch = append(fetch, c.updates...)
	})
	if err != nil {
		return nil, fmt.Errorf("nn: building the accumulation graph: %w", err)
	}
	if p.exe, err = rt.Compile(fetch); err != nil {
		return nil, fmt.Errorf("nn: compiling the accumulation graph: %w", err)
	}
	m.comp.progs[key] = p
	return p, nil
}

// apply runs the optimizer on the mean accumulated gradient and clears the sums.
func (t *Trainer) apply() error {
	m := t.m
	p, ok := m.comp.progs["apply"]
	if !ok {
		rt, err := m.comp.runtime()
		if err != nil {
			return err
		}
		p = &program{}
		var fetch []*tensor.Node
		err = tensor.Catch(func() {
			g := tensor.NewGraph()
			lr, step, advance := m.comp.opt.base().hyper(g)
			for i, v := range m.Params() {
				acc := g.Var(t.grads[i])
				mean := tensor.MulScalar(acc, 1/float64(t.accum))
				fetch = append(fetch, m.comp.opt.update(g, v, mean, lr, step), tensor.Assign(acc, tensor.ZerosLike(acc)))
			}
			fetch = append(fetch, advance)
		})
		if err != nil {
			return fmt.Errorf("nn: building the update graph: %w", err)
		}
		if p.exe, err = rt.Compile(fetch); err != nil {
			return fmt.Errorf("nn: compiling the update graph: %w", err)
		}
		m.comp.progs["apply"] = p
	}
	o := m.comp.opt.base()
	if err := o.sync(m.comp.rt); err != nil {
		return err
	}
	_, err := p.exe.Run(map[*tensor.Node]*tensor.Tensor{})
	if err == nil {
		o.steps++
	}
	return err
}

// Eval returns loss and metrics on a batch without training.
func (t *Trainer) Eval(x, y any) (Logs, error) {
	b, _, err := t.batch(x, y)
	if err != nil {
		return nil, err
	}
	return t.m.evaluate(&dataset{xs: b.xs, ys: b.ys, ws: b.ws, n: b.n}, b.n)
}

// SetLR changes the learning rate from the next step on.
func (t *Trainer) SetLR(lr float64) { t.m.comp.opt.SetLR(lr) }

// LR returns the learning rate.
func (t *Trainer) LR() float64 { return t.m.comp.opt.LR() }

// Model returns an independent copy of the model with its current weights (and
// optimizer state), on the same device: training the Trainer further does not change
// it.
func (t *Trainer) Model() (*Net, error) { return t.m.Clone() }

// Free releases the compiled graphs and the device memory of the model's variables,
// optimizer state and gradient sums. The model's weights are lost unless saved.
func (t *Trainer) Free() {
	if t.freed {
		return
	}
	t.freed = true
	t.m.Free()
	if rt := t.m.comp.rt; rt != nil {
		for _, v := range t.grads {
			rt.Release(v)
		}
	}
}

// Clone returns an independent copy of a built model with its current weights and, when
// compiled, its optimizer and state. The copy runs where the model runs.
func (m *Net) Clone() (*Net, error) {
	head, values, err := m.serialize()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := encode(&buf, head, values); err != nil {
		return nil, err
	}
	// The copy runs in the same runtime. Custom layers are rebuilt from the same
	// CustomLayer values: their variables belong to the layers, not to those values.
	device, rt := keepDevice, (*runtime.Runtime)(nil)
	if m.comp != nil {
		device, rt = m.comp.device, m.comp.rt
	}
	return decode(&buf, device, rt, func(sl savedLayer) (CustomLayer, error) {
		for _, l := range m.layers {
			if c, ok := l.(*custom); ok && c.name == sl.Name {
				return c.impl, nil
			}
		}
		return nil, fmt.Errorf("nn: Clone: no custom layer named %s", sl.Name)
	})
}

// Free releases the model's compiled graphs and the device buffers of its variables.
func (m *Net) Free() {
	if m.comp == nil {
		return
	}
	m.comp.free()
	if rt := m.comp.rt; rt != nil {
		for _, v := range m.variables() {
			rt.Release(v)
		}
		if m.comp.opt != nil {
			o := m.comp.opt.base()
			for _, v := range o.allSlots(m.Params()) {
				rt.Release(v)
			}
			if o.lrVar != nil {
				rt.Release(o.lrVar)
				rt.Release(o.stepVar)
				o.lrSynced, o.stepSynced = 0, false
			}
		}
	}
}
