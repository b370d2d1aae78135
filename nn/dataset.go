package nn

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/gml-dev/gml/data"
	"github.com/gml-dev/gml/tensor"
)

// dataset is training or evaluation data converted to what the graphs are fed: inputs
// in the input dtypes and shapes, labels per labelSpec, optional weights per head.
type dataset struct {
	xs, ys, ws []*tensor.Tensor
	n          int
}

// batch is one step's data.
type batch struct {
	xs, ys, ws []*tensor.Tensor
	n          int
}

// conformInputs converts and reshapes input tensors to the model's inputs.
func (m *Net) conformInputs(xs []*tensor.Tensor) ([]*tensor.Tensor, int, error) {
	if len(xs) != len(m.inputs) {
		return nil, 0, fmt.Errorf("nn: the model has %d input(s), got %d tensor(s)", len(m.inputs), len(xs))
	}
	out := make([]*tensor.Tensor, len(xs))
	n := -1
	for i, x := range xs {
		in := m.inputs[i].spec
		if x.Shape().Rank() == 0 {
			return nil, 0, fmt.Errorf("nn: input %d needs a batch axis, got a scalar", i)
		}
		rows := x.Shape()[0]
		if n >= 0 && rows != n {
			return nil, 0, fmt.Errorf("nn: input %d has %d samples, input 0 has %d", i, rows, n)
		}
		n = rows
		if x.Shape()[1:].Size() != in.Shape.Size() {
			return nil, 0, fmt.Errorf("nn: input %d: samples of shape %v do not fit the model input %v", i, x.Shape()[1:], in)
		}
		if x.DType() != in.DType {
			if in.DType.IsInt() && x.DType().IsFloat() {
				return nil, 0, fmt.Errorf("nn: input %d: the model wants int ids (%v), got %v data", i, in.DType, x.DType())
			}
			x = x.Convert(in.DType)
		}
		if !x.Shape()[1:].Equal(in.Shape) {
			m.noteReshape(i, x.Shape()[1:], in.Shape)
		}
		x, err := withShape(x, append(tensor.Shape{rows}, in.Shape...))
		if err != nil {
			return nil, 0, err
		}
		out[i] = x
	}
	return out, n, nil
}

// conformLabels checks labels against each head's loss and converts them.
func (m *Net) conformLabels(ys []*tensor.Tensor, n int) ([]*tensor.Tensor, []Spec, error) {
	if len(ys) != len(m.outputs) {
		return nil, nil, fmt.Errorf("nn: the model has %d output(s) (%v), got %d label tensor(s)", len(m.outputs), m.OutputNames(), len(ys))
	}
	out := make([]*tensor.Tensor, len(ys))
	specs := make([]Spec, len(ys))
	for i, y := range ys {
		if y.Shape().Rank() == 0 || y.Shape()[0] != n {
			return nil, nil, fmt.Errorf("nn: labels %d have shape %v, want %d samples first", i, y.Shape(), n)
		}
		h, o := m.comp.heads[i], m.outputs[i]
		ys := Spec{DType: y.DType(), Shape: y.Shape()[1:].Clone()}
		act := ""
		if d, ok := o.layer.(*dense); ok {
			act = d.C.Activation
		} else if a, ok := o.layer.(*actLayer); ok {
			act = a.C.Activation
		}
		if err := checkLoss(o.layer.Name(), h.loss, o.spec, act, ys); err != nil {
			return nil, nil, fmt.Errorf("nn: %w", err)
		}
		if h.loss.sparse {
			if err := checkClassIDs(o.layer.Name(), y, o.spec.Shape[0]); err != nil {
				return nil, nil, err
			}
		}
		specs[i] = labelSpec(h, o.spec, ys)
		c := y
		if y.DType() != specs[i].DType {
			c = y.Convert(specs[i].DType)
		}
		c, err := withShape(c, append(tensor.Shape{n}, specs[i].Shape...))
		if err != nil {
			return nil, nil, err
		}
		out[i] = c
	}
	return out, specs, nil
}

// notes is where nn writes one-time notes on what it did with the data (stderr, which a
// notebook shows under the cell).
var notes io.Writer = os.Stderr

// noteReshape says once per model and shape that input i's samples were reshaped.
func (m *Net) noteReshape(i int, from, to tensor.Shape) {
	key := fmt.Sprintf("%d%v", i, from)
	if m.noted[key] {
		return
	}
	if m.noted == nil {
		m.noted = map[string]bool{}
	}
	m.noted[key] = true
	what := "input"
	if len(m.inputs) > 1 {
		what = fmt.Sprintf("input %d", i)
	}
	fmt.Fprintf(notes, "nn: %s samples of shape %v are reshaped to the model's input shape %v (same values, row-major order)\n", what, from, to)
}

// checkClassIDs checks that the class-id labels y of output head are ids of its classes.
func checkClassIDs(head string, y *tensor.Tensor, classes int) error {
	for i := range y.Len() {
		v := y.Float(i)
		if v >= 0 && v < float64(classes) && v == math.Trunc(v) {
			continue
		}
		return fmt.Errorf("nn: output %s: label %v at index %d is not a class id of the head, which has %d classes (ids 0 to %d): "+
			"class ids count from 0, and the last layer needs one unit per class", head, v, i, classes, classes-1)
	}
	return nil
}

// checkFinite reports the first NaN or infinite value in the float inputs and labels of
// d; what ("", "validation ") qualifies them in the message.
func (m *Net) checkFinite(d *dataset, what string) error {
	for i, x := range d.xs {
		name := "the " + what + "inputs"
		if len(d.xs) > 1 {
			name = fmt.Sprintf("%sinput %d", what, i)
		}
		if err := finite(name, x); err != nil {
			return err
		}
	}
	for i, y := range d.ys {
		if err := finite(fmt.Sprintf("the %slabels of output %s", what, m.outputs[i].layer.Name()), y); err != nil {
			return err
		}
	}
	return nil
}

// finite reports the first NaN or infinite element of t, with its sample and position.
func finite(what string, t *tensor.Tensor) error {
	if !t.DType().IsFloat() {
		return nil
	}
	bad := -1
	if t.DType() == tensor.F32 {
		for i, v := range t.Float32s() {
			if v != v || v > math.MaxFloat32 || v < -math.MaxFloat32 {
				bad = i
				break
			}
		}
	} else {
		for i := range t.Len() {
			if v := t.Float(i); math.IsNaN(v) || math.IsInf(v, 0) {
				bad = i
				break
			}
		}
	}
	if bad < 0 {
		return nil
	}
	per := max(t.Shape()[1:].Size(), 1)
	return fmt.Errorf("nn: Fit: %v in %s at sample %d (value %d of the sample): NaN or infinite data trains the model to NaN; "+
		"clean the data, or pass nn.CheckFinite(false) to train anyway", t.Float(bad), what, bad/per, bad%per)
}

// withShape returns t viewed with shape: t itself when it has it already, so that a
// tensor kept on the device (KeepOnDevice) keeps its identity.
func withShape(t *tensor.Tensor, shape tensor.Shape) (*tensor.Tensor, error) {
	if t.Shape().Equal(shape) {
		return t, nil
	}
	return t.Reshape(shape...)
}

// weights builds per-head weights from SampleWeights and ClassWeights (nil when
// neither is given for a head).
func (m *Net) weights(s *weighting, ys []*tensor.Tensor, n int) ([]*tensor.Tensor, error) {
	ws := make([]*tensor.Tensor, len(m.outputs))
	if len(s.sampleWeights) != 0 {
		if len(s.sampleWeights) != len(ws) {
			return nil, fmt.Errorf("nn: %d sample-weight tensors for %d outputs", len(s.sampleWeights), len(ws))
		}
		for i, w := range s.sampleWeights {
			if w == nil {
				continue
			}
			full := append(tensor.Shape{n}, m.outputs[i].spec.Shape...)
			if !w.Shape().Equal(tensor.Shape{n}) && !w.Shape().Equal(full) {
				return nil, fmt.Errorf("nn: sample weights %d have shape %v, want [%d] or %v", i, w.Shape(), n, full)
			}
			if h := m.comp.heads[i]; w.Shape().Rank() > 1 && h.loss.classify && h.loss.name != "binary_crossentropy" {
				return nil, fmt.Errorf("nn: per-element weights on output %d need a regression or binary loss, it has %s", i, h.loss.name)
			}
			ws[i] = w.Convert(tensor.F32)
		}
	}
	if len(s.classWeights) != 0 {
		if !m.comp.heads[0].loss.classify {
			return nil, fmt.Errorf("nn: class weights need a classification loss on output 0, it has %s", m.comp.heads[0].loss.name)
		}
		cw := tensor.New(tensor.F32, n)
		y := ys[0]
		per := y.Len() / n
		for r := 0; r < n; r++ {
			class := 0
			if per == 1 {
				class = int(y.Float(r))
			} else {
				for j := 1; j < per; j++ {
					if y.Float(r*per+j) > y.Float(r*per+class) {
						class = j
					}
				}
			}
			w, ok := s.classWeights[class]
			if !ok {
				w = 1
			}
			cw.Float32s()[r] = float32(w)
		}
		if ws[0] != nil {
			if ws[0].Shape().Rank() != 1 {
				return nil, errors.New("nn: class weights combine with per-sample weights only, not per-element ones")
			}
			for r := range cw.Float32s() {
				cw.Float32s()[r] *= ws[0].Float32s()[r]
			}
		}
		ws[0] = cw
	}
	return ws, nil
}

// weightShapes returns the per-step weight shapes of a batch of size b.
func weightShapes(ws []*tensor.Tensor, b int) []tensor.Shape {
	out := make([]tensor.Shape, len(ws))
	for i, w := range ws {
		if w != nil {
			out[i] = append(tensor.Shape{b}, w.Shape()[1:]...)
		}
	}
	return out
}

// prepare converts x, y and the weight options into a dataset.
func (m *Net) prepare(x, y []*tensor.Tensor, s *weighting) (*dataset, []Spec, error) {
	xs, n, err := m.conformInputs(x)
	if err != nil {
		return nil, nil, err
	}
	ys, specs, err := m.conformLabels(y, n)
	if err != nil {
		return nil, nil, err
	}
	ws, err := m.weights(s, ys, n)
	if err != nil {
		return nil, nil, err
	}
	return &dataset{xs: xs, ys: ys, ws: ws, n: n}, specs, nil
}

// split returns rows [lo, hi) of every tensor of d.
func (d *dataset) split(lo, hi int) (*dataset, error) {
	out := &dataset{n: hi - lo}
	for _, part := range []struct {
		src []*tensor.Tensor
		dst *[]*tensor.Tensor
	}{{d.xs, &out.xs}, {d.ys, &out.ys}, {d.ws, &out.ws}} {
		for _, t := range part.src {
			if t == nil {
				*part.dst = append(*part.dst, nil)
				continue
			}
			r, err := data.Rows(t, lo, hi)
			if err != nil {
				return nil, err
			}
			*part.dst = append(*part.dst, r)
		}
	}
	return out, nil
}

// take gathers rows idx of every tensor of d into a batch.
func (d *dataset) take(idx []int) (*batch, error) {
	b := &batch{n: len(idx)}
	for _, part := range []struct {
		src []*tensor.Tensor
		dst *[]*tensor.Tensor
	}{{d.xs, &b.xs}, {d.ys, &b.ys}, {d.ws, &b.ws}} {
		for _, t := range part.src {
			if t == nil {
				*part.dst = append(*part.dst, nil)
				continue
			}
			r, err := data.Take(t, idx)
			if err != nil {
				return nil, err
			}
			*part.dst = append(*part.dst, r)
		}
	}
	return b, nil
}

// order returns the sample order of an epoch: shuffled with a generator seeded from the
// seed and the epoch, or 0..n-1.
func order(n int, shuffle bool, seed uint64, epoch int) []int {
	if shuffle {
		return rand.New(rand.NewPCG(seed, uint64(epoch)+0x9e3779b9)).Perm(n)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}
