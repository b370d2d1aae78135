package onnx

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Reductions. The axes are an attribute up to opset 12 for ReduceSum and up to 17 for
// the others, then an optional input; with no axes every axis is reduced, unless
// noop_with_empty_axes asks for the identity.

func init() {
	register(7, lowerReduce, "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
		"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp")
}

func lowerReduce(c *ctx) {
	dt := c.dtype(0)
	since := 18
	if c.n.op == "ReduceSum" {
		since = 13
	}
	s := c.shape(0)
	axes, _ := c.axesArg(since, 1)
	keep := c.attrInt("keepdims", 1) != 0
	noop := c.attrInt("noop_with_empty_axes", 0) != 0
	if len(axes) == 0 {
		if noop {
			c.pass(0, 0)
			return
		}
		axes = make([]int, len(s))
		for i := range axes {
			axes[i] = i
		}
	}
	axes = c.axes(axes, len(s))
	empty := false
	for _, a := range axes {
		empty = empty || s[a] == 0
	}
	if empty || s.Size() == 0 {
		c.setHost(0, emptyReduction(c, s, axes, keep, dt), dt)
		return
	}
	x := c.x(0)
	if dt == Bool {
		// Any and all: the maximum and minimum of 0s and 1s.
		if c.n.op != "ReduceMax" && c.n.op != "ReduceMin" {
			c.failf("input is bool")
		}
		x = tensor.Cast(x, tensor.I32)
	}
	var y *tensor.Node
	switch c.n.op {
	case "ReduceSum":
		y = tensor.Sum(x, axes, keep)
	case "ReduceMean":
		y = tensor.Mean(x, axes, keep)
	case "ReduceMax":
		y = tensor.Max(x, axes, keep)
	case "ReduceMin":
		y = tensor.Min(x, axes, keep)
	case "ReduceProd":
		y = tensor.Prod(x, axes, keep)
	case "ReduceL1":
		y = tensor.Sum(tensor.Abs(x), axes, keep)
	case "ReduceL2":
		y = tensor.Sqrt(tensor.Sum(tensor.Mul(x, x), axes, keep))
		if !dt.IsFloat() {
			c.requireFloat(0)
		}
	case "ReduceSumSquare":
		y = tensor.Sum(tensor.Mul(x, x), axes, keep)
	case "ReduceLogSum":
		c.requireFloat(0)
		y = tensor.Log(tensor.Sum(x, axes, keep))
	case "ReduceLogSumExp":
		c.requireFloat(0)
		// Shifted by the maximum so large values do not overflow; an all -inf slice
		// shifts by 0.
		m := tensor.Max(x, axes, true)
		finite := tensor.Less(tensor.Abs(m), c.scalar(m.DType(), math.Inf(1)))
		m = tensor.Where(finite, m, c.scalar(m.DType(), 0))
		y = tensor.Log(tensor.Sum(tensor.Exp(tensor.Sub(x, m)), axes, true))
		y = tensor.Add(y, m)
		if !keep {
			y = tensor.Reshape(y, reducedShape(s, axes)...)
		}
	}
	if dt == Bool {
		y = tensor.NotEqual(y, c.scalar(tensor.I32, 0))
	}
	c.set(0, c.wrap(y, dt), dt)
}

// reducedShape drops axes from s.
func reducedShape(s tensor.Shape, axes []int) tensor.Shape {
	out := tensor.Shape{}
	for i, d := range s {
		drop := false
		for _, a := range axes {
			drop = drop || a == i
		}
		if !drop {
			out = append(out, d)
		}
	}
	return out
}

// emptyReduction is the result of reducing over no elements: each reduction's
// identity (0, 1, -inf for a maximum, +inf for a minimum, NaN for a mean).
func emptyReduction(c *ctx, s tensor.Shape, axes []int, keep bool, dt DataType) *tensor.Tensor {
	out := s.Clone()
	for _, a := range axes {
		out[a] = 1
	}
	if !keep {
		out = reducedShape(s, axes)
	}
	v := 0.0
	switch c.n.op {
	case "ReduceProd":
		v = 1
	case "ReduceMax":
		v = math.Inf(-1)
		if !dt.IsFloat() {
			v, _ = intLimits(dt)
		}
	case "ReduceMin":
		v = math.Inf(1)
		if !dt.IsFloat() {
			_, v = intLimits(dt)
		}
	case "ReduceMean":
		v = math.NaN()
	case "ReduceLogSum", "ReduceLogSumExp":
		v = math.Inf(-1)
	}
	t := tensor.New(dt.Carrier(), out...)
	for i := range t.Len() {
		t.SetFloat(i, v)
	}
	return t
}

// intLimits is the range of an integer type.
func intLimits(dt DataType) (lo, hi float64) {
	if l, h, ok := dt.intRange(); ok {
		return float64(l), float64(h)
	}
	switch dt {
	case Int32:
		return math.MinInt32, math.MaxInt32
	case Uint64:
		return 0, math.MaxUint64
	}
	return math.MinInt64, math.MaxInt64
}
