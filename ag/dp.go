package ag

import (
	"fmt"

	"github.com/gml-dev/gml/data"
	"github.com/gml-dev/gml/tensor"
)

// DataParallel is the result of DPTrain: the replicas (identical after every step),
// the optimizer over all of them, and the mean loss of each epoch.
type DataParallel struct {
	Replicas []Module
	Opt      *Optimizer   // the optimizer of the replicas of the first tape
	Losses   []float64    // mean loss per epoch
	opts     []*Optimizer // one per tape
}

// Replicas sets how many model replicas DPTrain trains (2 by default).
func Replicas(n int) Option { return option("Replicas", func(s *settings) { s.replicas = n }) }

// Epochs sets how many passes over the loader DPTrain makes (1 by default).
func Epochs(n int) Option { return option("Epochs", func(s *settings) { s.epochs = n }) }

// ReplicaTapes spreads DPTrain's replicas over tapes (devices), round robin. Without it
// every replica is on the current tape: gml's runtime drives one GPU per process, so
// replicas on one device is the common case, and it costs no transfers.
func ReplicaTapes(tapes ...*Tape) Option {
	return option("ReplicaTapes", func(s *settings) { s.tapes = append([]*Tape(nil), tapes...) })
}

// OptimizerFunc makes DPTrain's optimizer from the parameters (Adam 1e-3 by default).
func OptimizerFunc(f func(params []*Tensor) *Optimizer) Option {
	return option("OptimizerFunc", func(s *settings) { s.optFn = f })
}

// DPTrain trains replicas of a model data-parallel: makeModel builds one replica (it is
// called once per replica, each on its tape, and the replicas start from the first
// one's weights); each batch of the loader is split across the replicas along its
// first axis; each replica computes lossFn on its part; the gradients are averaged over
// replicas, weighted by part size, so the step is the step of the whole batch; and
// every replica applies the same update. Replicas on one tape run as one program per
// step; across tapes the gradients are averaged through the host and the first
// replica's weights copied to the others after each step, so the weights are
// identical across replicas after every step.
func DPTrain(makeModel func() Module, loader *DataLoader, lossFn func(out, y *Tensor) *Tensor, opts ...Option) *DataParallel {
	const op = "dp_train"
	s := settings{replicas: 2, epochs: 1}
	s.apply(op, []string{"Replicas", "Epochs", "ReplicaTapes", "OptimizerFunc"}, opts)
	switch {
	case makeModel == nil || loader == nil || lossFn == nil:
		fail(op, "needs a model maker, a loader and a loss")
	case s.replicas < 1 || s.epochs < 1:
		fail(op, "replicas (%d) and epochs (%d) must be positive", s.replicas, s.epochs)
	case loader.y == nil:
		fail(op, "the loader has no labels")
	}
	if s.optFn == nil {
		s.optFn = func(p []*Tensor) *Optimizer { return Adam(p, 1e-3) }
	}
	tapes := s.tapes
	if len(tapes) == 0 {
		tapes = []*Tape{CurrentTape()}
	}
	dp := &DataParallel{}
	byTape := map[*Tape][]int{}
	var order []*Tape
	for r := 0; r < s.replicas; r++ {
		tp := tapes[r%len(tapes)]
		var m Module
		WithTape(tp, func() { m = makeModel() })
		dp.Replicas = append(dp.Replicas, m)
		if byTape[tp] == nil {
			order = append(order, tp)
		}
		byTape[tp] = append(byTape[tp], r)
	}
	params := make([][]*Tensor, s.replicas)
	for r, m := range dp.Replicas {
		params[r] = Parameters(m)
		if len(params[r]) != len(params[0]) || len(params[r]) == 0 {
			fail(op, "replica %d has %d parameters, replica 0 has %d", r, len(params[r]), len(params[0]))
		}
	}
	// Every replica starts from the first one's weights.
	for r := 1; r < s.replicas; r++ {
		for i, p := range params[r] {
			if !p.shape.Equal(params[0][i].shape) {
				fail(op, "replica %d's parameter %d is %v, replica 0's %v", r, i, p.shape, params[0][i].shape)
			}
			p.Assign(Const(params[0][i].Value()))
		}
	}
	for _, tp := range order {
		var ps []*Tensor
		for _, r := range byTape[tp] {
			ps = append(ps, params[r]...)
		}
		var o *Optimizer
		WithTape(tp, func() { o = s.optFn(ps) })
		dp.opts = append(dp.opts, o)
	}
	dp.Opt = dp.opts[0]
	for epoch := 0; epoch < s.epochs; epoch++ {
		sum, batches := 0.0, 0
		for loader.Next() {
			x, y := loader.Batch()
			sum += dp.step(order, byTape, params, x, y, lossFn)
			batches++
		}
		dp.Losses = append(dp.Losses, sum/float64(batches))
	}
	return dp
}

// step trains every replica on its part of one batch and returns the batch's loss.
func (dp *DataParallel) step(order []*Tape, byTape map[*Tape][]int, params [][]*Tensor, x, y *Tensor, lossFn func(out, y *Tensor) *Tensor) float64 {
	n := len(dp.Replicas)
	total := x.shape[0]
	if total < n {
		fail("dp_train", "a batch of %d cannot feed %d replicas", total, n)
	}
	for _, o := range dp.opts {
		o.ZeroGrad()
	}
	xv, yv := x.value("dp_train"), y.value("dp_train")
	var losses []*Tensor
	lo := 0
	for r := 0; r < n; r++ {
		hi := lo + (total-lo)/(n-r)
		xr, yr := rowsOf(xv, lo, hi), rowsOf(yv, lo, hi)
		var loss *Tensor
		WithTape(dp.tapeOf(r), func() {
			loss = Scale(lossFn(dp.Replicas[r].Forward(xr), yr), float64(hi-lo)/float64(total))
		})
		loss.Backward()
		losses = append(losses, loss)
		lo = hi
	}
	// Average the gradients: one all-reduce per parameter.
	groups := make([][]*Tensor, len(params[0]))
	for i := range groups {
		for r := 0; r < n; r++ {
			groups[i] = append(groups[i], params[r][i])
		}
	}
	if len(order) == 1 {
		order[0].sumGrads(groups)
	} else {
		hostSumGrads(groups)
	}
	for _, o := range dp.opts {
		o.Step()
	}
	if len(order) > 1 {
		for r := 1; r < n; r++ {
			for i, p := range params[r] {
				p.Assign(Const(params[0][i].Value()))
			}
		}
	}
	l := 0.0
	for _, loss := range losses {
		l += loss.Item()
	}
	return l
}

// tapeOf returns the tape of replica r's parameters.
func (dp *DataParallel) tapeOf(r int) *Tape {
	ps := Parameters(dp.Replicas[r])
	return ps[0].tape
}

// sumGrads sets every parameter of each group to the group's summed gradient, in the
// tape's open step: the replicas' gradients never leave the device.
func (t *Tape) sumGrads(groups [][]*Tensor) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tr := t.trace()
	build("dp_train", func() {
		for _, g := range groups {
			var sum *tensor.Node
			for _, p := range g {
				gr := tr.read(p.p.g)
				if sum == nil {
					sum = gr
				} else {
					sum = tensor.Add(sum, gr)
				}
			}
			for _, p := range g {
				tr.assign(p.p.g, sum)
			}
		}
	})
}

// hostSumGrads averages across tapes: the gradients cross to the host, are summed
// there, and each replica's gradient is set to the sum.
func hostSumGrads(groups [][]*Tensor) {
	for _, g := range groups {
		var sum *tensor.Tensor
		for _, p := range g {
			v := p.Grad().Value()
			if sum == nil {
				sum = v
				continue
			}
			for j := 0; j < v.Shape().Size(); j++ {
				sum.SetFloat(j, sum.Float(j)+v.Float(j))
			}
		}
		for _, p := range g {
			p.setGrad(sum)
		}
	}
}

// setGrad overwrites a parameter's gradient with host data.
func (t *Tensor) setGrad(v *tensor.Tensor) {
	tp := t.tape
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tr := tp.trace()
	tr.assign(t.p.g, tr.feed(v))
}

// String summarises the run.
func (dp *DataParallel) String() string {
	return fmt.Sprintf("DataParallel(%d replicas, %d epochs, loss %v)", len(dp.Replicas), len(dp.Losses), dp.Losses)
}

// rowsOf is rows lo..hi-1 of host data as a constant.
func rowsOf(t *tensor.Tensor, lo, hi int) *Tensor {
	r, err := data.Rows(t, lo, hi)
	if err != nil {
		failErr("dp_train", err)
	}
	return Const(r)
}
