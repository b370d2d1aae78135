package cpu

import (
	"fmt"
	"math"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// Unary elementwise kernels. The hot activations (exp, erf, both GELUs, tanh, sigmoid,
// silu) use the float32 functions of package vec, exp and erf vectorised; the other
// transcendental functions go through float64 and package math. Integer inputs are
// accepted by the ops that make sense on them.

func init() {
	for op := range f32UnaryOps {
		register(op, floatTypes, unaryFactory)
		// The integer forms serve the ops whose table row accepts integers.
		if op.DTypes().Has(tensor.I32) {
			register(op, []tensor.DType{tensor.I32}, intUnaryFactory[int32])
		}
		if op.DTypes().Has(tensor.I64) {
			register(op, []tensor.DType{tensor.I64}, intUnaryFactory[int64])
		}
	}
	// BitNot takes integers only.
	register(tensor.OpBitNot, []tensor.DType{tensor.I32}, intUnaryFactory[int32])
	register(tensor.OpBitNot, []tensor.DType{tensor.I64}, intUnaryFactory[int64])
}

// f32UnaryOps maps each op to a constructor of its slice loop from the node's attribute.
var f32UnaryOps = map[tensor.Op]func(attr any) func(d, x []float32){
	tensor.OpNeg: plain(func(d, x []float32) {
		for i, v := range x {
			d[i] = -v
		}
	}),
	tensor.OpAbs: plain(func(d, x []float32) {
		for i, v := range x {
			d[i] = float32(math.Abs(float64(v)))
		}
	}),
	tensor.OpSign:   mapF(func(v float64) float64 { return sign(v) }),
	tensor.OpExp:    plain(vec.Exp),
	tensor.OpLog:    mapF(math.Log),
	tensor.OpSqrt:   mapF(math.Sqrt),
	tensor.OpRsqrt:  mapF(rsqrt64),
	tensor.OpSquare: plain(func(d, x []float32) { vec.Arith(vec.Mul, d, x, 1, x, 1) }),
	tensor.OpSin:    mapF(math.Sin),
	tensor.OpCos:    mapF(math.Cos),
	tensor.OpTanh: plain(func(d, x []float32) {
		for i, v := range x {
			d[i] = vec.Tanhf(v)
		}
	}),
	tensor.OpSigmoid: plain(vec.Sigmoid),
	tensor.OpRelu:    plain(vec.Relu),
	tensor.OpLeakyRelu: func(attr any) func(d, x []float32) {
		a := attr.(tensor.AlphaAttr).Alpha
		return func(d, x []float32) {
			for i, v := range x {
				if v < 0 {
					v *= a
				}
				d[i] = v
			}
		}
	},
	tensor.OpElu: func(attr any) func(d, x []float32) {
		a := float64(attr.(tensor.AlphaAttr).Alpha)
		return mapF(func(v float64) float64 {
			if v > 0 {
				return v
			}
			return a * math.Expm1(v)
		})(nil)
	},
	tensor.OpGelu: func(attr any) func(d, x []float32) {
		if attr.(tensor.GeluAttr).Form == tensor.GeluTanh {
			return func(d, x []float32) {
				const c = 0.7978845608028654 // √(2/π)
				for i, v := range x {
					d[i] = 0.5 * v * (1 + vec.Tanhf(c*(v+0.044715*v*v*v)))
				}
			}
		}
		return vec.Gelu
	},
	tensor.OpSilu:     plain(vec.Silu),
	tensor.OpSoftplus: mapF(softplus),
	tensor.OpSoftsign: plain(func(d, x []float32) {
		for i, v := range x {
			d[i] = v / (1 + float32(math.Abs(float64(v))))
		}
	}),
	tensor.OpHardSigmoid: func(attr any) func(d, x []float32) {
		at := attr.(tensor.HardSigmoidAttr)
		return func(d, x []float32) {
			for i, v := range x {
				d[i] = min(max(at.Alpha*v+at.Beta, 0), 1)
			}
		}
	},
	tensor.OpHardSwish: plain(func(d, x []float32) {
		for i, v := range x {
			d[i] = v * min(max(v/6+0.5, 0), 1)
		}
	}),
	tensor.OpErf:   plain(vec.Erf),
	tensor.OpRound: mapF(math.RoundToEven),
	tensor.OpTan:   mapF(math.Tan),
	tensor.OpAtan:  mapF(math.Atan),
	tensor.OpSinh:  mapF(math.Sinh),
	tensor.OpCosh:  mapF(math.Cosh),
	tensor.OpAsin:  mapF(math.Asin),
	tensor.OpAcos:  mapF(math.Acos),
	tensor.OpAsinh: mapF(math.Asinh),
	tensor.OpAcosh: mapF(math.Acosh),
	tensor.OpAtanh: mapF(math.Atanh),
	tensor.OpFloor: mapF(math.Floor),
	tensor.OpCeil:  mapF(math.Ceil),
	tensor.OpClamp: func(attr any) func(d, x []float32) {
		at := attr.(tensor.ClampAttr)
		return func(d, x []float32) {
			for i, v := range x {
				d[i] = min(max(v, at.Min), at.Max)
			}
		}
	},
	// x·scale + bias, rounded after each operation (as Go computes it on amd64), by
	// vector loops.
	tensor.OpScale: func(attr any) func(d, x []float32) {
		at := attr.(tensor.ScaleAttr)
		c := []float32{at.Scale, at.Bias}
		return func(d, x []float32) {
			vec.Arith(vec.Mul, d, x, 1, c[0:], 0)
			vec.Arith(vec.Add, d, d, 1, c[1:], 0)
		}
	},
}

// plain wraps a loop that takes no attribute.
func plain(f func(d, x []float32)) func(any) func(d, x []float32) {
	return func(any) func(d, x []float32) { return f }
}

// mapF makes a loop applying f in float64.
func mapF(f func(float64) float64) func(any) func(d, x []float32) {
	return func(any) func(d, x []float32) {
		return func(d, x []float32) {
			for i, v := range x {
				d[i] = float32(f(float64(v)))
			}
		}
	}
}

// rsqrt64 is Rsqrt's value, in float64.
func rsqrt64(v float64) float64 { return 1 / math.Sqrt(v) }

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return v // 0, -0 and NaN
}

// softplus is log(1+eˣ) without overflow for large x.
func softplus(v float64) float64 { return max(v, 0) + math.Log1p(math.Exp(-math.Abs(v))) }

// unaryFactory prepares an F32 unary op, split across goroutines when large. The split
// falls on whole vectors of 16 (vecUnit), so only the last share has a tail for package
// vec's functions to pad. The results do not depend on where it falls: those functions
// give an element the same bits wherever a call cuts the slice.
func unaryFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	loop := f32UnaryOps[n.Op()](n.Attr())
	d, x := f32s(out), f32s(in[0])
	body := func(lo, hi int) {
		lo, hi = lo*vecUnit, min(hi*vecUnit, len(d))
		loop(d[lo:hi], x[lo:hi])
	}
	// Ops that cost about as much as a copy split at elemGrain; the others do enough
	// arithmetic per element to pay for goroutines on smaller tensors.
	grain := elemGrain
	if n.Op().Cost() > tensor.CostCheap {
		grain = elemGrain / 4
	}
	units := (len(d) + vecUnit - 1) / vecUnit
	return func() error { parallel.For(units, grain/vecUnit, body); return nil }, nil
}

// vecUnit is the widest vector of package vec, in elements.
const vecUnit = 16

// intUnaryFactory prepares the integer form of the ops that accept integers;
// attributes (slopes, bounds, scales) are applied in float64 and truncated.
func intUnaryFactory[T int32 | int64](n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	d, x := typed[T](out), typed[T](in[0])
	var f func(T) T
	switch n.Op() {
	case tensor.OpNeg:
		f = func(v T) T { return -v }
	case tensor.OpAbs:
		f = func(v T) T { return max(v, -v) }
	case tensor.OpSign:
		f = func(v T) T { return T(sign(float64(v))) }
	case tensor.OpSquare:
		f = func(v T) T { return v * v }
	case tensor.OpRelu:
		f = func(v T) T { return max(v, 0) }
	case tensor.OpBitNot:
		f = func(v T) T { return ^v }
	case tensor.OpLeakyRelu:
		a := float64(n.Attr().(tensor.AlphaAttr).Alpha)
		f = func(v T) T {
			if v < 0 {
				return T(a * float64(v))
			}
			return v
		}
	case tensor.OpClamp:
		at := n.Attr().(tensor.ClampAttr)
		lo, hi := T(math.Ceil(float64(at.Min))), T(math.Floor(float64(at.Max)))
		f = func(v T) T { return min(max(v, lo), hi) }
	case tensor.OpScale:
		at := n.Attr().(tensor.ScaleAttr)
		f = func(v T) T { return T(float64(v)*float64(at.Scale) + float64(at.Bias)) }
	default:
		return nil, fmt.Errorf("no integer kernel for %v", n.Op())
	}
	body := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d[i] = f(x[i])
		}
	}
	return func() error { parallel.For(len(d), elemGrain, body); return nil }, nil
}
