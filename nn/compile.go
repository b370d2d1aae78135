package nn

import (
	"errors"
	"fmt"
	"os"
	"sort"

	_ "github.com/gml-dev/gml/backends" // plain programs get every backend
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// head is one model output's training setup.
type head struct {
	loss    lossInfo
	weight  float64
	metrics []string
}

// compiled is what Compile attaches to a model: the optimizer, one head per output, the
// runtime, and the compiled graphs per kind and batch shape.
type compiled struct {
	opt    Optimizer
	heads  []head
	rt     *runtime.Runtime
	device string
	seed   uint64
	progs  map[string]*program
	opts   compileSettings
	par    *replicas // DataParallel
}

// program is one compiled graph and the nodes it is fed through.
type program struct {
	exe    runner
	xs, ys []*tensor.Node
	ws     []*tensor.Node // sample weights per head (training and evaluation)
	seeds  []*tensor.Node // dropout seeds, one per site
	names  []string       // fetched scalars ("loss", "dense_2_loss", "accuracy", ...)
}

// runner is a compiled graph: on the model's runtime, or over DataParallel's replicas.
type runner interface {
	Run(feeds map[*tensor.Node]*tensor.Tensor) ([]*tensor.Tensor, error)
	Free()
}

// Compile prepares the model for training: an optimizer, one loss per output (Loss,
// LossByName), loss weights (LossWeights, LossWeightsByName), metrics for every output
// (Metrics), the device (Device: "auto", "cpu" or "gpu"), the seed of dropout and
// shuffling (Seed) and the precision policy of matrix products (MixedPrecision).
// Graphs are compiled on first use per batch size. Compiling again keeps the weights
// and starts fresh optimizer state.
func (m *Net) Compile(opt Optimizer, opts ...CompileOption) error {
	if opt == nil {
		return errors.New("nn: Compile needs an optimizer, e.g. nn.Adam(1e-3)")
	}
	if err := opt.base().err; err != nil {
		return err
	}
	s := compileSettings{}
	if err := applyOptions("Compile", &s, nil, opts, CompileOption.compileSetting); err != nil {
		return err
	}
	if len(s.losses) == 0 && len(s.lossMap) == 0 {
		return errors.New("nn: Compile needs a loss, e.g. nn.Loss(\"sparse_categorical_crossentropy\")")
	}
	for i, l := range m.pending {
		// A layer's options are checked when it is made; say so now, not at Fit.
		if l == nil {
			return fmt.Errorf("nn: Sequential: layer %d is nil", i)
		}
		if err := l.base().err; err != nil {
			return err
		}
	}
	if first := m.pending; !m.Built() && len(first) > 0 && first[0].base().inputShape != nil {
		// A Sequential model given its input shape reports its construction error
		// here rather than at the first Fit, and a failed build leaves any earlier
		// compilation in place.
		if err := m.buildSequential(*first[0].base().inputShape); err != nil {
			return err
		}
	}
	c := &compiled{opt: opt, device: s.device, seed: s.seed, progs: map[string]*program{}}
	if m.comp != nil && m.comp.device == s.device {
		c.rt = m.comp.rt
		m.comp.free()
	}
	c.opts = s
	if len(s.parallel) > 0 {
		c.par = &replicas{devices: s.parallel}
	}
	m.comp = c
	if m.Built() {
		return m.resolveHeads()
	}
	return nil
}

// resolveHeads turns the Compile options into one head per output, once the model is
// built (a Sequential model may learn its outputs only at the first Fit).
func (m *Net) resolveHeads() error {
	c := m.comp
	s := c.opts
	n := len(m.outputs)
	names := m.OutputNames()
	losses := make([]string, n)
	switch {
	case len(s.losses) == 1:
		for i := range losses {
			losses[i] = s.losses[0]
		}
	case len(s.losses) == n:
		copy(losses, s.losses)
	case len(s.losses) != 0:
		return fmt.Errorf("nn: Compile: %d losses for %d outputs (%v): give one, or one per output", len(s.losses), n, names)
	}
	weights := make([]float64, n)
	for i := range weights {
		weights[i] = 1
	}
	if len(s.lossWeights) != 0 {
		if len(s.lossWeights) != n {
			return fmt.Errorf("nn: Compile: %d loss weights for %d outputs (%v)", len(s.lossWeights), n, names)
		}
		copy(weights, s.lossWeights)
	}
	index := map[string]int{}
	for i, nm := range names {
		index[nm] = i
	}
	for _, nm := range sortedKeys(s.lossMap) {
		l := s.lossMap[nm]
		i, ok := index[nm]
		if !ok {
			return fmt.Errorf("nn: Compile: loss for %q, which is not an output (outputs: %v)", nm, names)
		}
		losses[i] = l
	}
	for _, nm := range sortedKeys(s.weightMap) {
		w := s.weightMap[nm]
		i, ok := index[nm]
		if !ok {
			return fmt.Errorf("nn: Compile: loss weight for %q, which is not an output (outputs: %v)", nm, names)
		}
		weights[i] = w
	}
	metrics := make([][]string, n)
	for i := range metrics {
		metrics[i] = s.metrics
	}
	for _, nm := range sortedKeys(s.metricMap) {
		i, ok := index[nm]
		if !ok {
			return fmt.Errorf("nn: Compile: metrics for %q, which is not an output (outputs: %v)", nm, names)
		}
		metrics[i] = s.metricMap[nm]
	}
	c.heads = make([]head, n)
	for i := range c.heads {
		if losses[i] == "" {
			return fmt.Errorf("nn: Compile: no loss for output %q", names[i])
		}
		li, err := lossByName(losses[i])
		if err != nil {
			return fmt.Errorf("nn: Compile: output %q: %w", names[i], err)
		}
		if err := checkHeadShape(m.outputs[i], li); err != nil {
			return fmt.Errorf("nn: %w", err)
		}
		for _, mt := range metrics[i] {
			switch {
			case mt == "accuracy" || mt == "acc":
				if !li.classify {
					return fmt.Errorf("nn: Compile: metric accuracy on output %q needs a classification loss, it has %s", names[i], li.name)
				}
			case li.sparse:
				return fmt.Errorf("nn: Compile: metric %s on output %q compares the output with its labels, which are class ids there; use accuracy (MetricsByName sets metrics per output)", mt, names[i])
			}
		}
		c.heads[i] = head{loss: li, weight: weights[i], metrics: metrics[i]}
	}
	return nil
}

// runtime returns the model's runtime, opening it on first use. Under DataParallel it
// first brings back the weights the replicas trained, and takes the runtime's weights
// as the newer ones from then on: whoever asked for it may change them.
func (c *compiled) runtime() (*runtime.Runtime, error) {
	rt, err := c.open()
	if err != nil || c.par == nil {
		return rt, err
	}
	if err := c.par.pull(rt); err != nil {
		return nil, fmt.Errorf("nn: DataParallel: bringing the replicas' weights back: %w", err)
	}
	c.par.stale = true
	return rt, nil
}

// open returns the model's runtime, opening it on first use.
func (c *compiled) open() (*runtime.Runtime, error) {
	if c.rt != nil {
		return c.rt, nil
	}
	var err error
	if c.device == "" {
		c.rt, err = runtime.Default()
	} else {
		c.rt, err = runtime.New(runtime.Device(c.device))
	}
	if err != nil {
		return nil, fmt.Errorf("nn: opening the runtime: %w", err)
	}
	return c.rt, nil
}

// KeepOnDevice keeps tensors the model is fed again and again (a batch reused across
// Trainer steps, an evaluation set) on its device: after the first run that reads
// them they are not uploaded again, as a tensor moved to the GPU stays there in
// PyTorch. Their data must not change while they are kept: call KeepOnDevice again
// after a change (the next run uploads them once more), or UnkeepOnDevice. Only
// tensors fed as they are benefit: inputs must already have the model's input shape
// and dtype, and labels the loss needs in another dtype are converted, and uploaded,
// on every step. The model must be compiled, and compiling it for another device
// forgets what was kept.
func (m *Net) KeepOnDevice(ts ...*tensor.Tensor) error {
	if m.comp == nil {
		return errors.New("nn: KeepOnDevice: compile the model first")
	}
	rt, err := m.comp.runtime()
	if err != nil {
		return err
	}
	for _, t := range ts {
		rt.Keep(t)
	}
	return nil
}

// UnkeepOnDevice ends KeepOnDevice: later runs upload those tensors again.
func (m *Net) UnkeepOnDevice(ts ...*tensor.Tensor) {
	if m.comp == nil || m.comp.rt == nil {
		return
	}
	for _, t := range ts {
		m.comp.rt.Unkeep(t)
	}
}

// free releases every compiled graph, and DataParallel's replicas once their weights
// are back on the model's runtime.
func (c *compiled) free() {
	for k, p := range c.progs {
		p.exe.Free()
		delete(c.progs, k)
	}
	if c.par != nil && c.rt != nil {
		if err := c.par.close(c.rt); err != nil {
			fmt.Fprintf(os.Stderr, "nn: DataParallel: %v\n", err)
		}
	}
}

// scalarNames lists the per-step scalars a training or evaluation graph fetches, in
// order: total loss, per-head losses (with several heads), then metrics per head.
func (m *Net) scalarNames() []string {
	names := []string{"loss"}
	outs := m.OutputNames()
	multi := len(m.outputs) > 1
	if multi {
		for _, o := range outs {
			names = append(names, o+"_loss")
		}
	}
	for i, h := range m.comp.heads {
		for _, mt := range h.metrics {
			if multi {
				names = append(names, outs[i]+"_"+metricName(mt))
			} else {
				names = append(names, metricName(mt))
			}
		}
	}
	return names
}

// labelSpec returns the sample spec a head's labels are fed with, from the user's label
// sample spec y: class ids as I64 (batch), other labels as F32 shaped like the output.
func labelSpec(h head, out Spec, y Spec) Spec {
	if h.loss.sparse {
		return Spec{DType: tensor.I64, Shape: tensor.Shape{}}
	}
	if y.Shape.Size() == out.Shape.Size() {
		return Spec{DType: tensor.F32, Shape: out.Shape.Clone()}
	}
	return Spec{DType: tensor.F32, Shape: y.Shape.Clone()}
}

// programKey identifies a compiled graph: kind, batch size and the label and weight
// shapes it was built for.
func programKey(kind string, batch int, ys []Spec, ws []tensor.Shape) string {
	k := fmt.Sprintf("%s/%d", kind, batch)
	for _, y := range ys {
		k += "/" + y.String()
	}
	for _, w := range ws {
		k += "/w" + w.String()
	}
	return k
}

// buildProgram builds and compiles a graph of kind "train", "eval" or "predict" for a
// batch size; ys are the label specs fed (train, eval) and ws the sample-weight shapes
// (batch axis included; nil entries mean no weights).
func (m *Net) buildProgram(kind string, batch int, ys []Spec, ws []tensor.Shape) (*program, error) {
	key := programKey(kind, batch, ys, ws)
	if m.comp.par != nil && kind != "train" {
		// Evaluation and prediction run on the model's runtime, with the replicas' weights.
		if _, err := m.comp.runtime(); err != nil {
			return nil, err
		}
	}
	if p, ok := m.comp.progs[key]; ok {
		return p, nil
	}
	rt, err := m.comp.runtime()
	if err != nil {
		return nil, err
	}
	p := &program{}
	var fetch []*tensor.Node
	err = tensor.Catch(func() {
		g := tensor.NewGraph()
		c := m.compiledFwd(g, kind == "train")
		for i, in := range m.inputs {
			p.xs = append(p.xs, g.Input(fmt.Sprintf("x%d_%s", i, in.name), in.spec.DType, append([]int{batch}, in.spec.Shape...)...))
		}
		outs := m.forward(c, p.xs)
		if kind == "predict" {
			fetch = outs
			return
		}
		fetch = m.lossGraph(g, c, p, outs, batch, ys, ws)
		p.seeds = c.seeds
		p.names = m.scalarNames()
		if kind == "train" {
			fetch = append(fetch, m.updateGraph(g, p, fetch[0])...)
			fetch = append(fetch, c.updates...)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("nn: building the %s graph: %w", kind, err)
	}
	if m.comp.par != nil && kind == "train" {
		exe, err := m.comp.par.compile(p, fetch)
		if err != nil {
			return nil, fmt.Errorf("nn: compiling the %s graph over the replicas: %w", kind, err)
		}
		p.exe = exe
	} else {
		exe, err := rt.Compile(fetch)
		if err != nil {
			return nil, fmt.Errorf("nn: compiling the %s graph: %w", kind, err)
		}
		p.exe = exe
	}
	m.comp.progs[key] = p
	return p, nil
}

// lossGraph adds label and weight inputs and returns the scalars: the weighted total
// loss, per-head losses (several heads) and metrics.
func (m *Net) lossGraph(g *tensor.Graph, c *fwd, p *program, outs []*tensor.Node, batch int, ys []Spec, ws []tensor.Shape) []*tensor.Node {
	var total *tensor.Node
	var headLoss, metrics []*tensor.Node
	for i, h := range m.comp.heads {
		y := g.Input(fmt.Sprintf("y%d", i), ys[i].DType, append([]int{batch}, ys[i].Shape...)...)
		p.ys = append(p.ys, y)
		var w *tensor.Node
		if ws[i] != nil {
			w = g.Input(fmt.Sprintf("w%d", i), tensor.F32, ws[i]...)
		}
		p.ws = append(p.ws, w)
		pred := outs[i]
		lg := c.logits[pred]
		l := weightedMean(elementLoss(h.loss, pred, lg, y), w)
		headLoss = append(headLoss, l)
		scaled := l
		if h.weight != 1 {
			scaled = tensor.MulScalar(l, h.weight)
		}
		if total == nil {
			total = scaled
		} else {
			total = tensor.Add(total, scaled)
		}
		for _, mt := range h.metrics {
			mn, err := metricNode(mt, h.loss, pred, lg, y)
			if err != nil {
				panic(&tensor.Error{Op: "metric", Err: err})
			}
			metrics = append(metrics, mn)
		}
	}
	fetch := []*tensor.Node{total}
	if len(headLoss) > 1 {
		fetch = append(fetch, headLoss...)
	}
	return append(fetch, metrics...)
}

// updateGraph appends the gradient of loss and one optimizer update per parameter.
func (m *Net) updateGraph(g *tensor.Graph, p *program, loss *tensor.Node) []*tensor.Node {
	params := m.Params()
	nodes := make([]*tensor.Node, len(params))
	for i, v := range params {
		nodes[i] = g.Var(v)
	}
	grads := tensor.Grad(loss, nodes)
	lr, step, advance := m.comp.opt.base().hyper(g)
	ups := make([]*tensor.Node, len(params), len(params)+1)
	for i, v := range params {
		ups[i] = m.comp.opt.update(g, v, grads[i], lr, step)
	}
	return append(ups, advance)
}

// sortedKeys returns a map's keys in order, for stable error messages.
func sortedKeys[V any](mp map[string]V) []string {
	out := make([]string, 0, len(mp))
	for k := range mp {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
