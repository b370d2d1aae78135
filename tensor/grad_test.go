package tensor

import (
	"errors"
	"strings"
	"testing"
)

// Structural tests of the autodiff transform. Numeric checks of every rule against
// finite differences run in float64 in internal/backendtest, whose reference
// interpreter checks the backends too.

func TestEveryOpHasAGradientDecision(t *testing.T) {
	for op := Op(1); op < numOps; op++ {
		if op.Kind() == KindSource {
			continue
		}
		decisions := 0
		if gradRules[op] != nil {
			decisions++
		}
		if opTable[op].noGrad != "" {
			decisions++
		}
		if opTable[op].gradMissing != "" {
			decisions++
		}
		if decisions != 1 {
			t.Errorf("%v: want exactly one of a gradient rule, a no-gradient reason or an unsupported reason, have %d", op, decisions)
		}
		if Differentiable(op) != (gradRules[op] != nil) {
			t.Errorf("Differentiable(%v) = %v disagrees with the rule table", op, Differentiable(op))
		}
	}
	if Differentiable(OpInput) || NoGradReason(OpMatMul) != "" || NoGradReason(OpFloor) == "" {
		t.Errorf("Differentiable/NoGradReason disagree with the table for input, matmul or floor")
	}
}

func TestGradErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func()
		want  string
	}{
		{"non-scalar loss", func() {
			g := NewGraph()
			x := g.Input("x", F32, 2, 3)
			Grad(Exp(x), []*Node{x})
		}, "must be a scalar"},
		{"integer loss", func() {
			g := NewGraph()
			x := g.Input("x", I32)
			Grad(x, []*Node{x})
		}, "floating-point dtype"},
		{"integer wrt", func() {
			g := NewGraph()
			x := g.Input("x", F32, 2)
			i := g.Input("i", I64, 2)
			Grad(Sum(x, nil, false), []*Node{i})
		}, "not floating point"},
		{"wrt of another graph", func() {
			g, h := NewGraph(), NewGraph()
			x := g.Input("x", F32, 2)
			Grad(Sum(x, nil, false), []*Node{h.Input("y", F32, 2)})
		}, "another graph"},
		{"seed shape", func() {
			g := NewGraph()
			x := g.Input("x", F32, 2, 3)
			GradWithSeed([]*Node{Exp(x)}, []*Node{g.Input("s", F32, 3)}, []*Node{x})
		}, "seed 0 is f32[3]"},
		{"seed count", func() {
			g := NewGraph()
			x := g.Input("x", F32, 2)
			GradWithSeed([]*Node{x}, nil, []*Node{x})
		}, "0 seeds for 1 outputs"},
		{"second order through max pooling", func() {
			g := NewGraph()
			x := g.Input("x", F32, 1, 1, 4, 4)
			gy := g.Input("gy", F32, 1, 1, 2, 2)
			gx := MaxPoolGrad(x, gy, PoolAttr{Kernel: []int{2, 2}})
			Grad(Sum(gx, nil, false), []*Node{gy})
		}, "second-order"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Catch(c.build)
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("want *Error, got %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

// ancestors returns the set of nodes n depends on, n included.
func ancestors(n *Node) map[*Node]bool {
	seen := map[*Node]bool{}
	stack := []*Node{n}
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !seen[m] {
			seen[m] = true
			stack = append(stack, m.inputs...)
		}
	}
	return seen
}

func TestGradZerosWhereNoPath(t *testing.T) {
	g := NewGraph()
	x := g.Input("x", F32, 3)
	y := g.Input("y", F32, 2, 2)
	f := Floor(y)
	loss := Add(Sum(Exp(x), nil, false), Sum(f, nil, false))
	grads := Grad(loss, []*Node{x, y, f})
	for i, w := range []*Node{x, y, f} {
		if !grads[i].shape.Equal(w.shape) || grads[i].dtype != w.dtype {
			t.Errorf("gradient %d is %v, want %v%v", i, grads[i], w.dtype, w.shape)
		}
	}
	// y reaches the loss only through floor, which passes no gradient: its gradient
	// depends on nothing in the graph but constants.
	for a := range ancestors(grads[1]) {
		if a.op == OpInput {
			t.Errorf("gradient of y depends on input %v; want a constant zero", a)
		}
	}
	// floor's own output is differentiable: its gradient is the seed broadcast, not zero.
	if ancestors(grads[2])[x] {
		t.Errorf("gradient of floor(y) depends on x")
	}
}

func TestGradBuildsOnlyPathsToWrt(t *testing.T) {
	g := NewGraph()
	x := g.Input("x", F32, 3)
	y := g.Input("y", F32, 3)
	loss := Add(Sum(Exp(x), nil, false), Sum(Tanh(y), nil, false))
	before := g.Len()
	Grad(loss, []*Node{x})
	for _, n := range g.Nodes()[before:] {
		if n.op == OpSquare || ancestors(n)[y] {
			t.Errorf("backward node %v belongs to the tanh branch, which does not reach x", n)
		}
	}
}

func TestGradAccumulatesUses(t *testing.T) {
	g := NewGraph()
	x := g.Input("x", F32, 4)
	// x feeds Mul twice and Sum once: three contributions, summed by two Adds.
	loss := Add(Sum(Mul(x, x), nil, false), Sum(x, nil, false))
	before := g.Len()
	gx := Grad(loss, []*Node{x})[0]
	adds := 0
	for _, n := range g.Nodes()[before:] {
		if n.op == OpAdd && n.shape.Equal(x.shape) && ancestors(n)[x] {
			adds++
		}
	}
	if gx.op != OpAdd || adds != 2 {
		t.Errorf("gradient %v built with %d accumulating adds, want an add of 3 contributions (2 adds)", gx, adds)
	}
}

func TestGradOfLossIsSeed(t *testing.T) {
	g := NewGraph()
	x := g.Input("x", F32, 1)
	loss := Sum(x, nil, false)
	seed := g.Input("s", F32)
	got := GradWithSeed([]*Node{loss}, []*Node{seed}, []*Node{loss})[0]
	if got != seed {
		t.Errorf("gradient of the output with respect to itself is %v, want the seed %v", got, seed)
	}
}

func TestPadSource(t *testing.T) {
	cases := []struct {
		mode PadMode
		size int
		in   []int
		want []int
	}{
		// numpy.pad([0 1 2], 3, "reflect") = [1 2 1 | 0 1 2 | 1 0 1] reads these positions.
		{PadReflect, 3, []int{-3, -2, -1, 0, 1, 2, 3, 4, 5}, []int{1, 2, 1, 0, 1, 2, 1, 0, 1}},
		{PadEdge, 3, []int{-2, -1, 0, 2, 3, 4}, []int{0, 0, 0, 2, 2, 2}},
		{PadReflect, 1, []int{-1, 0, 1}, []int{0, 0, 0}},
	}
	for _, c := range cases {
		for i, p := range c.in {
			if got := padSource(p, c.size, c.mode); got != c.want[i] {
				t.Errorf("padSource(%d, %d, %v) = %d, want %d", p, c.size, c.mode, got, c.want[i])
			}
		}
	}
}

func TestStopGradientCutsOnlyItsPath(t *testing.T) {
	g := NewGraph()
	x := g.Input("x", F32, 3)
	s := StopGradient(Exp(x))
	if !s.StopsGradient() || s.op != OpReshape || !s.shape.Equal(x.shape) {
		t.Fatalf("StopGradient made %v (stops %v)", s, s.StopsGradient())
	}
	// Only through the stopped path: the gradient is a constant zero.
	only := Grad(Sum(s, nil, false), []*Node{x})[0]
	for a := range ancestors(only) {
		if a.op == OpInput {
			t.Errorf("gradient through StopGradient alone depends on %v; want a constant zero", a)
		}
	}
	// x·stop(exp x): the gradient is stop(exp x), the stopped node itself, not x·exp x + exp x.
	both := Grad(Sum(Mul(x, s), nil, false), []*Node{x})[0]
	if !ancestors(both)[s] {
		t.Errorf("gradient of x·stop(exp x) does not read the stopped value")
	}
	for a := range ancestors(both) {
		if a.op == OpExp && !ancestors(s)[a] {
			t.Errorf("gradient differentiates through the stopped exp: %v", a)
		}
	}
}

// TestGradJoinsSplitParts checks that the gradients of slices that tile one axis are
// concatenated rather than padded and summed, and only then.
func TestGradJoinsSplitParts(t *testing.T) {
	cases := []struct {
		name  string
		parts func(x *Node) []*Node
		other bool // x is also used whole
		want  Op   // the gradient's op
	}{
		{"split", func(x *Node) []*Node { return Split(x, 1, 1, 2, 3) }, false, OpConcat},
		{"split_unordered", func(x *Node) []*Node { p := Split(x, 0, 1, 3); return []*Node{p[1], p[0]} }, false, OpConcat},
		{"split_and_whole", func(x *Node) []*Node { return Split(x, 1, 4, 2) }, true, OpAdd},
		{"gap", func(x *Node) []*Node { return []*Node{SliceAxis(x, 1, 0, 2), SliceAxis(x, 1, 3, 6)} }, false, OpAdd},
		{"overlap", func(x *Node) []*Node { return []*Node{SliceAxis(x, 1, 0, 4), SliceAxis(x, 1, 3, 6)} }, false, OpAdd},
		{"two_axes", func(x *Node) []*Node { return []*Node{SliceAxis(x, 0, 0, 2), SliceAxis(x, 1, 0, 3)} }, false, OpAdd},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGraph()
			x := g.Input("x", F32, 4, 6)
			var loss *Node
			if tc.other {
				loss = Sum(x, nil, false)
			}
			for _, p := range tc.parts(x) {
				s := Sum(Mul(p, p), nil, false)
				if loss == nil {
					loss = s
				} else {
					loss = Add(loss, s)
				}
			}
			gx := Grad(loss, []*Node{x})[0]
			if gx.op != tc.want {
				t.Fatalf("gradient %v, want a %v", gx, tc.want)
			}
			pads := 0
			for n := range ancestors(gx) {
				if n.op == OpPad {
					pads++
				}
			}
			if joined := tc.want == OpConcat || tc.other; joined && pads != 0 {
				t.Errorf("%d pads left in the gradient of a split", pads)
			}
		})
	}
}
