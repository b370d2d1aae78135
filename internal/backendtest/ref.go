package backendtest

import (
	"fmt"
	"math"
	"slices"

	"github.com/gml-dev/gml/internal/quantref"
	"github.com/gml-dev/gml/tensor"
)

// Array is a value of the reference interpreter: row-major float64 elements of a
// node's dtype and shape, each rounded to the dtype (integers and bool are whole
// numbers).
type Array struct {
	DType tensor.DType
	Shape tensor.Shape
	Data  []float64
}

// newArray is a zero array of node n's dtype and shape.
func newArray(dt tensor.DType, s tensor.Shape) *Array {
	return &Array{DType: dt, Shape: s.Clone(), Data: make([]float64, s.Size())}
}

// FromTensor converts a host tensor to an array; quantised blocks are decoded in
// float64 from their definition (internal/quantref).
func FromTensor(t *tensor.Tensor) *Array {
	if f, ok := t.DType().Format(); ok {
		return &Array{DType: t.DType(), Shape: t.Shape().Clone(), Data: quantref.Decode(f, t.Bytes(), t.Len())}
	}
	return &Array{DType: t.DType(), Shape: t.Shape().Clone(), Data: t.Float64s()}
}

// quantize rounds a to its quantised dtype: the blocks tensor.Quantize encodes from
// the values rounded to f32 (the encoder defines which representable values a cast
// picks), decoded again in float64.
func (a *Array) quantize() *Array {
	f32, err := tensor.FromFloat64sAs(tensor.F32, a.Shape, a.Data)
	if err != nil {
		panic(err)
	}
	q, err := f32.Quantize(a.DType)
	if err != nil {
		panic(err)
	}
	return FromTensor(q)
}

func (a *Array) clone() *Array {
	return &Array{DType: a.DType, Shape: a.Shape.Clone(), Data: slices.Clone(a.Data)}
}

// round brings every element to the array's dtype: integers truncate toward zero (NaN
// and infinities to 0), bool is nonzero, and the float types round to nearest even
// (the half types through tensor's conversions). With exact set, F32 keeps its float64
// value, overflowing to ±Inf only beyond F32's range. Quantised values are left as
// they are: only a cast makes them (Array.quantize), and requantising them would move
// them (a block's scale follows its largest value).
func (a *Array) round(exact bool) *Array {
	switch {
	case a.DType.IsInt():
		for i, v := range a.Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = 0
			}
			a.Data[i] = math.Trunc(v)
		}
	case a.DType == tensor.Bool:
		for i, v := range a.Data {
			a.Data[i] = b2f(v != 0)
		}
	case a.DType == tensor.F32 && exact:
		for i, v := range a.Data {
			if math.Abs(v) > math.MaxFloat32 && !math.IsInf(v, 0) {
				a.Data[i] = math.Copysign(math.Inf(1), v) // the range of F32, not its rounding
			}
		}
	case a.DType == tensor.F32:
		for i, v := range a.Data {
			a.Data[i] = float64(float32(v))
		}
	case a.DType == tensor.F16 || a.DType == tensor.BF16:
		t := tensor.New(a.DType, len(a.Data))
		for i, v := range a.Data {
			t.SetFloat(i, v)
		}
		a.Data = t.Float64s()
	}
	return a
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// refFunc computes node n from its inputs' values.
type refFunc func(n *tensor.Node, in []*Array) *Array

// refs holds the reference semantics of each op (ref_*.go fill it); the fused ops with
// a decomposition (tensor.Decompose) are evaluated through it instead, since the
// decomposition is what defines them.
var refs [tensor.NumOps]refFunc

func defRef(f refFunc, ops ...tensor.Op) {
	for _, op := range ops {
		if refs[op] != nil {
			panic("backendtest: reference defined twice for " + op.String())
		}
		refs[op] = f
	}
}

// HasReference reports whether the interpreter can evaluate op.
func HasReference(op tensor.Op) bool {
	return refs[op] != nil || writeRefs[op] != nil || tensor.CanDecompose(op) || op.Kind() == tensor.KindSource
}

// Interpreter evaluates graphs in float64, rounding each node's value to its dtype
// (unless ExactF32): every op computed exactly, then rounded once, which is the
// semantics the backends approximate. It keeps the values of the variables the graphs
// update.
type Interpreter struct {
	// ExactF32 leaves F32 values unrounded, for finite differences, whose small steps
	// rounding would swallow.
	ExactF32 bool
	// Vars holds each variable's current value; a variable not in it starts from its
	// initial value (tensor.Variable.Init).
	Vars map[*tensor.Variable]*Array
}

// NewInterpreter returns an interpreter with no variable state.
func NewInterpreter() *Interpreter {
	return &Interpreter{Vars: map[*tensor.Variable]*Array{}}
}

// Eval computes outputs from feeds (one per input node the outputs depend on). In-place
// ops run after every other node, as the runtime orders them, and update Vars; their
// own value is the variable they write. It returns an error, not a panic, for a graph
// the interpreter cannot evaluate.
func (ip *Interpreter) Eval(outputs []*tensor.Node, feeds map[*tensor.Node]*Array) (res []*Array, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("backendtest: reference: %v", r)
		}
	}()
	memo := map[*tensor.Node]*Array{}
	// In-place writers that no output reads through run last, in graph order.
	var sinks []*tensor.Node
	needed := ancestors(outputs)
	consumed := map[*tensor.Node]bool{}
	for _, n := range needed {
		for _, in := range n.Inputs() {
			consumed[in] = true
		}
	}
	for _, n := range needed {
		if len(n.Op().Writes()) > 0 && !consumed[n] {
			sinks = append(sinks, n)
			continue
		}
		if _, err := ip.node(n, feeds, memo); err != nil {
			return nil, err
		}
	}
	for _, n := range sinks {
		if _, err := ip.node(n, feeds, memo); err != nil {
			return nil, err
		}
	}
	res = make([]*Array, len(outputs))
	for i, o := range outputs {
		res[i] = memo[o]
	}
	return res, nil
}

// node evaluates n after its inputs (recursively, for the nodes of decompositions).
func (ip *Interpreter) node(n *tensor.Node, feeds map[*tensor.Node]*Array, memo map[*tensor.Node]*Array) (*Array, error) {
	if v, ok := memo[n]; ok {
		return v, nil
	}
	var v *Array
	switch n.Op() {
	case tensor.OpInput:
		f, ok := feeds[n]
		if !ok {
			return nil, fmt.Errorf("backendtest: input %q was not fed", n.Name())
		}
		if f.DType != n.DType() || !f.Shape.Equal(n.Shape()) {
			return nil, fmt.Errorf("backendtest: input %q wants %v%v, was fed %v%v", n.Name(), n.DType(), n.Shape(), f.DType, f.Shape)
		}
		v = f
	case tensor.OpConst:
		v = FromTensor(n.Value())
	case tensor.OpVariable:
		v = ip.variable(n.Variable())
	default:
		in := make([]*Array, len(n.Inputs()))
		for i, x := range n.Inputs() {
			var err error
			if in[i], err = ip.node(x, feeds, memo); err != nil {
				return nil, err
			}
		}
		switch {
		case writeRefs[n.Op()] != nil:
			written := writeRefs[n.Op()](n, in)
			for k, w := range n.Op().Writes() {
				written[k].round(ip.ExactF32)
				ip.Vars[n.Input(w).Variable()] = written[k]
			}
			v = written[0]
		case refs[n.Op()] != nil:
			v = refs[n.Op()](n, in).round(ip.ExactF32)
		case tensor.CanDecompose(n.Op()):
			var err error
			if v, err = ip.node(tensor.Decompose(n), feeds, memo); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("backendtest: no reference for %v", n.Op())
		}
		if v.DType != n.DType() || !v.Shape.Equal(n.Shape()) {
			return nil, fmt.Errorf("backendtest: the reference of %v gave %v%v", n, v.DType, v.Shape)
		}
	}
	memo[n] = v
	return v, nil
}

// variable returns v's current value.
func (ip *Interpreter) variable(v *tensor.Variable) *Array {
	if a, ok := ip.Vars[v]; ok {
		return a
	}
	a := FromTensor(v.Init())
	ip.Vars[v] = a
	return a
}

// ancestors returns the nodes outputs depend on, in graph order.
func ancestors(outputs []*tensor.Node) []*tensor.Node {
	seen := map[*tensor.Node]bool{}
	stack := slices.Clone(outputs)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !seen[n] {
			seen[n] = true
			stack = append(stack, n.Inputs()...)
		}
	}
	nodes := make([]*tensor.Node, 0, len(seen))
	for n := range seen {
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b *tensor.Node) int { return a.ID() - b.ID() })
	return nodes
}

// Index helpers shared by the reference files.

// unflat converts a row-major flat index into coordinates of shape s.
func unflat(i int, s tensor.Shape) []int {
	c := make([]int, len(s))
	for a := len(s) - 1; a >= 0; a-- {
		if s[a] > 0 {
			c[a] = i % s[a]
			i /= s[a]
		}
	}
	return c
}

// flat converts coordinates of shape s into a row-major flat index.
func flat(c []int, s tensor.Shape) int {
	i := 0
	for a := range s {
		i = i*s[a] + c[a]
	}
	return i
}

// broadcastIndex returns the flat index into an array of shape src, broadcast to out,
// of out's element with coordinates c.
func broadcastIndex(c []int, src, out tensor.Shape) int {
	sc := make([]int, len(src))
	off := len(out) - len(src)
	for a := range src {
		if src[a] != 1 {
			sc[a] = c[off+a]
		}
	}
	return flat(sc, src)
}

// mapInto fills a new array of node n's dtype and shape with f of each output's
// coordinates.
func mapInto(n *tensor.Node, f func(c []int) float64) *Array {
	out := newArray(n.DType(), n.Shape())
	for i := range out.Data {
		out.Data[i] = f(unflat(i, out.Shape))
	}
	return out
}
