package onnx

import (
	"fmt"
	"math"

	"github.com/gml-dev/gml/onnx/internal/onnxpb"
	"github.com/gml-dev/gml/tensor"
)

// ctx is what an op's lowering sees: the node, its input values, the graph to build
// into, and helpers that read attributes and host values. Helpers fail by panicking
// with lowerError, which lowerNode turns into an error naming the node.
type ctx struct {
	n    *nodeDef
	ins  []*value
	outs []*value
	g    *tensor.Graph
	b    *builder // nil while folding
	used map[string]bool
}

// failf aborts the lowering with an error.
func (c *ctx) failf(format string, args ...any) {
	panic(lowerError{fmt.Errorf(format, args...)})
}

// unsupported aborts the lowering with an error that wraps ErrUnsupported.
func (c *ctx) unsupported(format string, args ...any) {
	panic(lowerError{fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrUnsupported)})
}

// opset is the version of the default operator set the node binds to.
func (c *ctx) opset() int { return c.n.opset }

// has reports whether optional input i is present.
func (c *ctx) has(i int) bool { return i < len(c.ins) && c.ins[i] != nil }

// nin is the number of inputs listed (omitted optional ones included).
func (c *ctx) nin() int { return len(c.ins) }

// in returns input i, failing when it is absent.
func (c *ctx) in(i int) *value {
	if !c.has(i) {
		c.failf("input %d is missing", i)
	}
	return c.ins[i]
}

// dtype is the ONNX type of input i.
func (c *ctx) dtype(i int) DataType { return c.in(i).dtype }

// shape is the shape of input i.
func (c *ctx) shape(i int) tensor.Shape { return c.in(i).shape }

// rank is the rank of input i.
func (c *ctx) rank(i int) int { return len(c.in(i).shape) }

// x returns input i as a node of the graph being built.
func (c *ctx) x(i int) *tensor.Node {
	v := c.in(i)
	if c.b == nil {
		return constNode(c.g, v)
	}
	return c.b.node(v)
}

// host returns the contents of input i, which must be known while building (a
// constant, or data of an earlier stage).
func (c *ctx) host(i int) *tensor.Tensor {
	v := c.in(i)
	if c.b == nil {
		return v.host
	}
	return c.b.host(c.n.inputs[i], v)
}

// ints returns the integer contents of input i.
func (c *ctx) ints(i int) []int {
	t := c.host(i)
	if !t.DType().IsInt() {
		c.failf("input %d must be an integer tensor, is %v", i, c.dtype(i))
	}
	out := make([]int, t.Len())
	for k := range out {
		if t.DType() == tensor.I64 {
			out[k] = int(t.Int64s()[k])
		} else {
			out[k] = int(t.Int32s()[k])
		}
	}
	return out
}

// floats returns the contents of input i as float64 values.
func (c *ctx) floats(i int) []float64 { return c.host(i).Float64s() }

// scalarInt reads a one-element integer input.
func (c *ctx) scalarInt(i int) int {
	v := c.ints(i)
	if len(v) != 1 {
		c.failf("input %d must hold one value, has shape %v", i, c.shape(i))
	}
	return v[0]
}

// measure returns the contents of node n, a quantity the lowering needs on the host
// (NonZero's count): evaluated at once while folding, else measured by running the
// graph up to this node (a stage boundary). key names it among the node's quantities.
func (c *ctx) measure(key string, n *tensor.Node) *tensor.Tensor {
	if c.b == nil {
		res, err := evalCPU([]*tensor.Node{n})
		if err != nil {
			c.failf("%v", err)
		}
		return res[0]
	}
	return c.b.measure(c.n.name+"#"+key, n)
}

// wants reports whether output i is requested.
func (c *ctx) wants(i int) bool { return i < len(c.n.outputs) && c.n.outputs[i] != "" }

// set makes node n, of ONNX type dt, output i.
func (c *ctx) set(i int, n *tensor.Node, dt DataType) {
	if i >= len(c.outs) {
		return
	}
	if n.DType() != dt.Carrier() {
		c.failf("internal: output %d is %v, its type %v is carried as %v", i, n.DType(), dt, dt.Carrier())
	}
	v := &value{dtype: dt, shape: n.Shape()}
	if c.b != nil && n.Op() == tensor.OpInput {
		v.data = n.Name()
	}
	switch n.Op() {
	case tensor.OpConst:
		v.host = n.Value()
	case tensor.OpVariable:
		v.host = n.Variable().Init()
	default:
		v.node = n
	}
	c.outs[i] = v
}

// setHost makes the host tensor t, of ONNX type dt, output i.
func (c *ctx) setHost(i int, t *tensor.Tensor, dt DataType) {
	if i >= len(c.outs) {
		return
	}
	c.outs[i] = &value{dtype: dt, shape: t.Shape(), host: t}
}

// pass makes input j output i unchanged.
func (c *ctx) pass(i, j int) {
	if i < len(c.outs) {
		c.outs[i] = c.in(j)
	}
}

// constant adds a host tensor to the graph being built.
func (c *ctx) constant(t *tensor.Tensor) *tensor.Node { return c.g.Const(t) }

// scalar adds a rank-0 constant of engine dtype dt.
func (c *ctx) scalar(dt tensor.DType, v float64) *tensor.Node { return c.g.Scalar(dt, v) }

// attr returns attribute name, or nil, and marks it as read.
func (c *ctx) attr(name string) *onnxpb.AttributeProto {
	c.used[name] = true
	return c.n.attrs[name]
}

// ignore marks attributes that do not change inference results as read.
func (c *ctx) ignore(names ...string) {
	for _, n := range names {
		c.used[n] = true
	}
}

// attrType checks an attribute's declared type (files from old exporters may omit it).
func (c *ctx) attrType(a *onnxpb.AttributeProto, want onnxpb.AttributeProto_AttributeType) {
	if a.Type != nil && a.GetType() != want {
		c.failf("attribute %q is %v, want %v", a.GetName(), a.GetType(), want)
	}
}

// attrInt returns an integer attribute, or def when absent.
func (c *ctx) attrInt(name string, def int) int {
	a := c.attr(name)
	if a == nil {
		return def
	}
	c.attrType(a, onnxpb.AttributeProto_INT)
	v := a.GetI()
	if v > math.MaxInt32 || v < math.MinInt32 {
		if v == math.MaxInt64 || v == math.MinInt64 {
			return int(v)
		}
		c.failf("attribute %q = %d is out of range", name, v)
	}
	return int(v)
}

// attrInts returns an integer-list attribute and whether it is present.
func (c *ctx) attrInts(name string) ([]int, bool) {
	a := c.attr(name)
	if a == nil {
		return nil, false
	}
	c.attrType(a, onnxpb.AttributeProto_INTS)
	out := make([]int, len(a.Ints))
	for i, v := range a.Ints {
		out[i] = int(v)
	}
	return out, true
}

// attrFloat returns a float attribute, or def when absent.
func (c *ctx) attrFloat(name string, def float32) float32 {
	a := c.attr(name)
	if a == nil {
		return def
	}
	c.attrType(a, onnxpb.AttributeProto_FLOAT)
	return a.GetF()
}

// attrFloats returns a float-list attribute and whether it is present.
func (c *ctx) attrFloats(name string) ([]float32, bool) {
	a := c.attr(name)
	if a == nil {
		return nil, false
	}
	c.attrType(a, onnxpb.AttributeProto_FLOATS)
	return a.Floats, true
}

// attrString returns a string attribute, or def when absent.
func (c *ctx) attrString(name, def string) string {
	a := c.attr(name)
	if a == nil {
		return def
	}
	c.attrType(a, onnxpb.AttributeProto_STRING)
	return string(a.GetS())
}

// attrStrings returns a string-list attribute.
func (c *ctx) attrStrings(name string) []string {
	a := c.attr(name)
	if a == nil {
		return nil
	}
	c.attrType(a, onnxpb.AttributeProto_STRINGS)
	out := make([]string, len(a.Strings))
	for i, s := range a.Strings {
		out[i] = string(s)
	}
	return out
}

// attrTensor returns a tensor attribute, or nil when absent.
func (c *ctx) attrTensor(name string) *Array {
	a := c.attr(name)
	if a == nil {
		return nil
	}
	c.attrType(a, onnxpb.AttributeProto_TENSOR)
	arr, err := decodeTensor(a.GetT(), "")
	if err != nil {
		c.failf("attribute %q: %v", name, err)
	}
	return arr
}

// axis resolves a possibly negative axis against rank.
func (c *ctx) axis(a, rank int) int {
	r, err := tensor.ResolveAxis(c.n.op, a, rank)
	if err != nil {
		c.failf("%v", err)
	}
	return r
}

// axes resolves a list of possibly negative axes.
func (c *ctx) axes(as []int, rank int) []int {
	out := make([]int, len(as))
	for i, a := range as {
		out[i] = c.axis(a, rank)
	}
	return out
}

// wrap reduces a narrow integer result into its type's range (x mod 2^bits, offset to
// the signed range), as arithmetic on that type would: the carrier is wider, so the
// engine's own result may lie outside it.
func (c *ctx) wrap(x *tensor.Node, dt DataType) *tensor.Node {
	lo, hi, ok := dt.intRange()
	if !ok {
		return x
	}
	cd := x.DType()
	span := c.scalar(cd, float64(hi-lo+1))
	y := x
	if lo != 0 {
		y = tensor.Sub(y, c.scalar(cd, float64(lo)))
	}
	y = floorMod(y, span)
	if lo != 0 {
		y = tensor.Add(y, c.scalar(cd, float64(lo)))
	}
	return y
}

// floorMod is x - floor(x/y)*y for integers: the remainder with the divisor's sign.
func floorMod(x, y *tensor.Node) *tensor.Node {
	r := tensor.Mod(x, y)
	zero := x.Graph().Scalar(x.DType(), 0)
	fix := tensor.And(tensor.NotEqual(r, zero), tensor.Xor(tensor.Less(r, zero), tensor.Less(y, zero)))
	return tensor.Where(fix, tensor.Add(r, y), r)
}
