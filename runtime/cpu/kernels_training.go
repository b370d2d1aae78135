package cpu

import (
	"math"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// Training kernels: dropout from the counter-based mask tensor.DropoutKeep (so the GPU
// draws the same mask), Assign, and the optimizer updates, which write the parameter
// and its state into their variables' buffers (the scheduler aliases the node's output
// to the parameter; when it does not, the output gets a copy). On x86 the updates treat
// subnormal numbers as zero (vec.AdamStep, vec.SGDStep): decaying through that range
// made them tens of times slower on Intel CPUs.

func init() {
	register(tensor.OpDropout, floatTypes, dropoutFactory)
	register(tensor.OpDropoutMask, []tensor.DType{tensor.F32, tensor.I32, tensor.I64, tensor.Bool}, dropoutFactory)
	register(tensor.OpAssign, allTypes, assignFactory)
	register(tensor.OpSGDUpdate, floatTypes, updateFactory)
	register(tensor.OpAdamUpdate, floatTypes, updateFactory)
}

// dropoutFactory computes Dropout (x scaled or zeroed) or DropoutMask (the multiplier).
func dropoutFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	rate := n.Attr().(tensor.DropoutAttr).Rate
	scale := float32(1 / (1 - float64(rate)))
	seedOf := indexReader(n.Input(1).DType(), in[1])
	d := f32s(out)
	var x []float32
	if n.Op() == tensor.OpDropout {
		x = f32s(in[0])
	}
	var draw tensor.DropoutDraw
	body := func(lo, hi int) {
		draw := draw // a local the compiler keeps in registers
		seedHash, threshold := draw.Params()
		d := d[lo:hi]
		if x == nil {
			for j := vec.DropoutVectors(d, nil, uint32(lo), seedHash, threshold, scale); j < len(d); j++ {
				d[j] = 0
				if draw.Keep(uint32(lo + j)) {
					d[j] = scale
				}
			}
			return
		}
		x := x[lo:hi]
		for j := vec.DropoutVectors(d, x, uint32(lo), seedHash, threshold, scale); j < len(d); j++ {
			v := x[j] * scale
			if !draw.Keep(uint32(lo + j)) {
				v = 0
			}
			d[j] = v
		}
	}
	return func() error {
		draw = tensor.NewDropoutDraw(uint32(seedOf(0)), rate)
		parallel.For(len(d), elemGrain, body)
		return nil
	}, nil
}

func assignFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	v, value := in[0], in[1]
	return func() error {
		copy(v, value)
		if !sameMemory(out, v) {
			copy(out, v)
		}
		return nil
	}, nil
}

// update is an optimizer step over one parameter, prepared: before reads its scalars
// (learning rate, step count), body updates elements [lo, hi) of the parameter and its
// state in place, and out gets a copy of the parameter when the scheduler did not alias
// the two. fuseUpdates runs many of them as one parallel job; updateFor makes one.
type update struct {
	count      int
	before     func()
	body       func(lo, hi int)
	out, param []byte
}

// finish copies the parameter to the output when they are not the same memory.
func (u *update) finish() {
	if !sameMemory(u.out, u.param) {
		copy(u.out, u.param)
	}
}

// step runs u alone: its elements in parallel.
func (u *update) step() error {
	u.before()
	parallel.For(u.count, elemGrain, u.body)
	u.finish()
	return nil
}

// updateFor prepares the update of an SGDUpdate or AdamUpdate node on F32 data.
func updateFor(n *tensor.Node, out []byte, in [][]byte) *update {
	if n.Op() == tensor.OpSGDUpdate {
		return sgdUpdate(n, out, in)
	}
	return adamUpdate(n, out, in)
}

func updateFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	return updateFor(n, out, in).step, nil
}

func sgdUpdate(n *tensor.Node, out []byte, in [][]byte) *update {
	at := n.Attr().(tensor.SGDAttr)
	p, g, vel := f32s(in[0]), f32s(in[1]), f32s(in[2])
	lrOf := scalarReader(n.Input(3).DType(), in[3])
	var c vec.SGDConsts
	return &update{
		count:  len(p),
		before: func() { c = vec.SGDConsts{at.Momentum, at.WeightDecay, float32(lrOf())} },
		body:   func(lo, hi int) { vec.SGDStep(&c, at.Nesterov, p[lo:hi], g[lo:hi], vel[lo:hi]) },
		out:    out, param: in[0],
	}
}

func adamUpdate(n *tensor.Node, out []byte, in [][]byte) *update {
	at := n.Attr().(tensor.AdamAttr)
	p, g, m, v := f32s(in[0]), f32s(in[1]), f32s(in[2]), f32s(in[3])
	lrOf := scalarReader(n.Input(4).DType(), in[4])
	stepOf := scalarReader(n.Input(5).DType(), in[5])
	b1, b2, eps, wd := at.Beta1, at.Beta2, at.Eps, at.WeightDecay
	gwd := wd // weight decay folded into the gradient (Adam) or not (AdamW)
	if at.Decoupled {
		gwd = 0
	}
	var c vec.AdamConsts
	before := func() {
		l, t := lrOf(), stepOf()
		decay := float32(1)
		if at.Decoupled {
			decay = float32(1 - l*float64(wd))
		}
		c = vec.AdamConsts{b1, 1 - b1, b2, 1 - b2, gwd, float32(l),
			float32(1 / (1 - math.Pow(float64(b1), t))), float32(1 / (1 - math.Pow(float64(b2), t))), eps, decay}
	}
	return &update{
		count:  len(p),
		before: before,
		body:   func(lo, hi int) { vec.AdamStep(&c, p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi]) },
		out:    out, param: in[0],
	}
}
