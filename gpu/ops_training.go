package gpu

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Training ops: Dropout and its mask (training_dropout.comp), the optimizer updates
// (training_optim.comp), and Assign (a layout.comp copy into the variable).

func init() {
	dropoutOK := func(_ *Device, n *tensor.Node) bool {
		x := n.Input(0).DType()
		return n.DType() == tensor.F32 && isIndex(n.Input(1)) && (n.Op() == tensor.OpDropoutMask || x == tensor.F32) && wordSized(n)
	}
	ops[tensor.OpDropout] = opImpl{typed: true, record: recordDropout, supports: dropoutOK}
	ops[tensor.OpDropoutMask] = opImpl{typed: true, record: recordDropout, supports: dropoutOK}
	// The learning rate and the step count may have any numeric dtype: recordOptim
	// converts them to F32 first.
	ops[tensor.OpSGDUpdate] = opImpl{record: recordOptim, anyType: []int{3}}
	ops[tensor.OpAdamUpdate] = opImpl{record: recordOptim, anyType: []int{4, 5}}
	ops[tensor.OpAssign] = opImpl{typed: true, record: recordAssignCopy, supports: func(_ *Device, n *tensor.Node) bool {
		return n.Input(1).DType() == n.DType() && wordSized(n)
	}}
}

// recordOptim writes SGD (param, grad, velocity, lr) and Adam (param, grad, m, v, lr,
// step) updates in place.
func recordOptim(r *Recorder, n *tensor.Node, _ *Buffer, in []*Buffer) error {
	adam := n.Op() == tensor.OpAdamUpdate
	var mu, wd, b1, b2, eps float32
	nesterov, decoupled := false, false
	prm, grad, m, v, lr, step := in[0], in[1], in[2], in[2], in[3], in[3]
	if adam {
		at := n.Attr().(tensor.AdamAttr)
		b1, b2, eps, wd, decoupled = at.Beta1, at.Beta2, at.Eps, at.WeightDecay, at.Decoupled
		v, lr, step = in[3], in[4], in[5]
	} else {
		at := n.Attr().(tensor.SGDAttr)
		mu, wd, nesterov = at.Momentum, at.WeightDecay, at.Nesterov
	}
	count := n.Input(0).Shape().Size()
	if count == 0 {
		return nil
	}
	// training_optim.comp reads the scalars as F32: an integer step (or a half learning rate)
	// is converted into scratch first.
	scalars := map[int]**Buffer{3: &lr}
	if adam {
		scalars = map[int]**Buffer{4: &lr, 5: &step}
	}
	for i, s := range scalars {
		x := n.Input(i)
		if x.DType() == tensor.F32 {
			continue
		}
		t, err := r.scratchBuffer(4)
		if err != nil {
			return err
		}
		if err := r.cast(n.Op().String()+"_scalar", x.DType(), tensor.F32, 1, *s, t); err != nil {
			return err
		}
		*s = t
	}
	k, err := r.d.Kernel("training_optim", 6, groupSize, b32(adam), b32(nesterov), b32(decoupled))
	if err != nil {
		return err
	}
	push := words([]uint32{uint32(count), f32Off(prm), f32Off(grad), f32Off(m), f32Off(v), f32Off(lr), f32Off(step),
		math.Float32bits(b1), math.Float32bits(b2), math.Float32bits(eps), math.Float32bits(wd), math.Float32bits(mu),
		math.Float32bits(float32(math.Log(float64(b1)))), math.Float32bits(float32(math.Log(float64(b2))))})
	args := []Arg{Out(prm), In(grad), Out(m), Out(v), In(lr), In(step)}
	if !adam {
		args[3] = In(v)
	}
	return r.Dispatch(k, gridFor(count), push, n.Op().String(), args...)
}

// recordDropout draws tensor.DropoutKeep's mask in training_dropout.comp.
func recordDropout(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	count := n.Shape().Size()
	if count == 0 {
		return nil
	}
	rate := n.Attr().(tensor.DropoutAttr).Rate
	scale := float32(1 / (1 - float64(rate)))
	mask := n.Op() == tensor.OpDropoutMask
	k, err := r.d.Kernel("training_dropout", 3, groupSize, b32(mask))
	if err != nil {
		return err
	}
	w := []uint32{uint32(count), f32Off(in[0]), f32Off(in[1]), f32Off(out), math.Float32bits(rate), math.Float32bits(scale)}
	return r.Dispatch(k, gridFor(count), words(w), n.Op().String(), In(in[0]), In(in[1]), Out(out))
}

// recordAssignCopy copies the value into the variable's buffer, and into the output's when
// the scheduler did not alias the two.
func recordAssignCopy(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	count := n.Shape().Size()
	p := layoutPlan{axes: []layoutAxis{{dim: count, stride: 1, inDim: count}}}
	for _, dst := range []*Buffer{in[0], out} {
		if err := r.layoutCopy("assign", p, n.DType().Size(), count, 0, count, in[1], dst); err != nil {
			return err
		}
		if out == in[0] {
			break
		}
	}
	return nil
}
