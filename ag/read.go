package ag

import (
	"fmt"
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Value returns t's value as host data (a copy the caller may keep and change). It runs
// whatever recorded work the value needs.
func (t *Tensor) Value() *tensor.Tensor {
	v := t.value("value")
	return v.Clone()
}

// Item returns the value of a one-element tensor.
func (t *Tensor) Item() float64 {
	if t.shape.Size() != 1 {
		fail("item", "%s has %d elements; Item reads one-element tensors (use Float32s or Value)", t.describe(), t.shape.Size())
	}
	return t.value("item").Float(0)
}

// Float32s returns the elements as float32s, in row-major order.
func (t *Tensor) Float32s() []float32 {
	v := t.value("float32s")
	out := make([]float32, v.Shape().Size())
	for i := range out {
		out[i] = float32(v.Float(i))
	}
	return out
}

// Float64s returns the elements as float64s, in row-major order.
func (t *Tensor) Float64s() []float64 {
	v := t.value("float64s")
	out := make([]float64, v.Shape().Size())
	for i := range out {
		out[i] = v.Float(i)
	}
	return out
}

// Ints returns the elements as ints (class ids, argmax results), in row-major order.
func (t *Tensor) Ints() []int {
	v := t.value("ints")
	out := make([]int, v.Shape().Size())
	for i := range out {
		out[i] = int(math.Round(v.Float(i)))
	}
	return out
}

// value returns t's value, running what it needs; it must not be changed.
func (t *Tensor) value(op string) *tensor.Tensor {
	if t.tape == nil {
		return t.host // a constant no op has used
	}
	tp := t.tape
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.rec != nil {
		fail(op, "reading %s inside a Capture: a captured function runs on the device only; return the value instead", t.describe())
	}
	v, err := tp.valueOf(t)
	if err != nil {
		failErr(op, err)
	}
	return v
}

// valueOf computes t's value on the host. The caller holds the tape's lock.
func (tp *Tape) valueOf(t *Tensor) (*tensor.Tensor, error) {
	if t.p != nil {
		return tp.readVariable(t.p.v)
	}
	if t.tr != nil {
		if err := tp.flush(); err != nil {
			return nil, err
		}
	}
	v, err := t.fetch()
	if err == nil || !t.replayable() || t.emit == nil {
		return v, err
	}
	// The run that computed t has been overwritten, but its recipe still holds:
	// compute it again.
	tr := tp.trace()
	n := tr.emitRecipe("value", t)
	t.tr, t.node = tr, n
	tr.vis = append(tr.vis, t)
	if err := tp.flush(); err != nil {
		return nil, err
	}
	return t.fetch()
}

// readVariable returns a variable's value after the pending writes. The caller holds
// the tape's lock.
func (tp *Tape) readVariable(v *tensor.Variable) (*tensor.Tensor, error) {
	if tp.open != nil && tp.open.pendingWrite(v) {
		if err := tp.flush(); err != nil {
			return nil, err
		}
	}
	t, err := tp.rt.Read(v)
	if err != nil {
		return nil, fmt.Errorf("reading %v: %w", v, err)
	}
	return t, nil
}
