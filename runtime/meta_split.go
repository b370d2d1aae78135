package runtime

import (
	"fmt"
	"slices"

	"github.com/gml-dev/gml/tensor"
)

// How a meta device's split travels through a graph. Every node gets the axis along
// which its parts hold slices of it, or -1 when every part holds all of it (nodes that
// read no split value are computed whole in every part). An op whose result would not
// be the slices of the whole result (it sums, normalises, sorts, scans or contracts
// along the split axis, or mixes axes in a way the rules below do not follow) is an
// error naming the node: a meta device never returns a wrong result.

// splitAxes assigns a split axis to every node (in schedule order).
func splitAxes(nodes []*tensor.Node, split SplitFunc) (map[*tensor.Node]int, error) {
	axes := make(map[*tensor.Node]int, len(nodes))
	for _, n := range nodes {
		if isSource(n) {
			axes[n] = -1
			if ax, ok := split(n); ok {
				r := n.Shape().Rank()
				if ax < 0 {
					ax += r
				}
				if ax < 0 || ax >= r {
					return nil, fmt.Errorf("runtime: meta: the split function chose axis %d of %v", ax, n)
				}
				axes[n] = ax
			}
			continue
		}
		if len(n.Op().Writes()) > 0 {
			return nil, fmt.Errorf("runtime: meta: %v updates a variable; a meta device computes graphs without updates (each part would update a copy of its own)", n)
		}
		in := make([]int, len(n.Inputs()))
		anySplit := false
		for i, x := range n.Inputs() {
			in[i] = axes[x]
			anySplit = anySplit || in[i] >= 0
		}
		if !anySplit {
			axes[n] = -1
			continue
		}
		ax, err := splitRule(n, in)
		if err != nil {
			return nil, fmt.Errorf("runtime: meta: %v cannot be computed in slices: %w", n, err)
		}
		axes[n] = ax
	}
	return axes, nil
}

// resolve makes an axis non-negative for a rank.
func resolve(ax, rank int) int {
	if ax < 0 {
		return ax + rank
	}
	return ax
}

// splitRule returns the split axis of n's output from its inputs' (-1: whole).
func splitRule(n *tensor.Node, in []int) (int, error) {
	out := n.Shape()
	r := out.Rank()
	switch n.Op().Kind() {
	case tensor.KindUnary, tensor.KindBinary:
		return broadcastAxis(n, in)
	case tensor.KindReduce:
		return reduceAxis(n, in[0])
	case tensor.KindMatMul:
		return matmulAxis(n, in)
	}
	switch n.Op() {
	case tensor.OpSoftmax, tensor.OpLogSoftmax:
		if resolve(n.Attr().(tensor.SoftmaxAttr).Axis, r) == in[0] {
			return 0, fmt.Errorf("it normalises along the split axis %d", in[0])
		}
		return in[0], nil
	case tensor.OpLayerNorm, tensor.OpRMSNorm:
		for i := 1; i < len(in); i++ {
			if in[i] >= 0 {
				return 0, fmt.Errorf("its input %d (scale or bias) is split", i)
			}
		}
		for _, a := range n.Attr().(tensor.NormAttr).Axes {
			if resolve(a, r) == in[0] {
				return 0, fmt.Errorf("it normalises along the split axis %d", in[0])
			}
		}
		return in[0], nil
	case tensor.OpAttention, tensor.OpRoPE:
		// Rows of a sequence attend to (or are rotated by position along) the others:
		// only axes before the last two (batch, heads) can be split, the same in all.
		ax := -1
		for i, a := range in {
			x := n.Input(i)
			if a < 0 {
				continue
			}
			if a >= x.Shape().Rank()-2 {
				return 0, fmt.Errorf("input %d is split along axis %d, one of its last two (sequence, features)", i, a)
			}
			if ax >= 0 && ax != a+(r-x.Shape().Rank()) {
				return 0, fmt.Errorf("inputs are split along different axes")
			}
			ax = a + (r - x.Shape().Rank())
		}
		for i, a := range in {
			if a < 0 && n.Input(i).Shape().Rank() > 2 {
				x := n.Input(i)
				if j := ax - (r - x.Shape().Rank()); j >= 0 && x.Shape()[j] != 1 {
					return 0, fmt.Errorf("input %d is whole but has the split axis at full size", i)
				}
			}
		}
		return ax, nil
	case tensor.OpReshape:
		x := n.Input(0).Shape()
		a := in[0]
		lead := x[:a].Size()
		for j := 0; j < r; j++ {
			if out[:j].Size() == lead && out[j] == x[a] {
				return j, nil
			}
		}
		return 0, fmt.Errorf("the reshape to %v regroups the split axis %d of %v", out, a, x)
	case tensor.OpPermute:
		perm := n.Attr().(tensor.PermuteAttr).Perm
		for j, p := range perm {
			if p == in[0] {
				return j, nil
			}
		}
	case tensor.OpSlice:
		at := n.Attr().(tensor.SliceAttr)
		a, d := in[0], n.Input(0).Shape()[in[0]]
		if at.Starts[a] != 0 || at.Ends[a] != d || at.Steps[a] != 1 {
			return 0, fmt.Errorf("it slices the split axis %d", a)
		}
		return a, nil
	case tensor.OpPad:
		at := n.Attr().(tensor.PadAttr)
		if a := in[0]; (a < len(at.Before) && at.Before[a] != 0) || (a < len(at.After) && at.After[a] != 0) {
			return 0, fmt.Errorf("it pads the split axis %d", a)
		}
		return in[0], nil
	case tensor.OpTile:
		at := n.Attr().(tensor.TileAttr)
		if a := in[0]; a < len(at.Reps) && at.Reps[a] != 1 {
			return 0, fmt.Errorf("it tiles the split axis %d", a)
		}
		return in[0], nil
	case tensor.OpExpand:
		a := in[0] + (r - n.Input(0).Shape().Rank())
		if n.Input(0).Shape()[in[0]] != out[a] {
			return 0, fmt.Errorf("it broadcasts along the split axis")
		}
		return a, nil
	case tensor.OpConcat:
		axis := resolve(n.Attr().(tensor.AxisAttr).Axis, r)
		ax := -1
		for i, a := range in {
			switch {
			case a == axis:
				return 0, fmt.Errorf("it concatenates along the split axis %d", a)
			case a < 0:
				return 0, fmt.Errorf("input %d is whole while others are split", i)
			case ax >= 0 && a != ax:
				return 0, fmt.Errorf("inputs are split along different axes")
			}
			ax = a
		}
		return ax, nil
	case tensor.OpGather, tensor.OpTakeAlong:
		axis := resolve(n.Attr().(tensor.AxisAttr).Axis, n.Input(0).Shape().Rank())
		x, idx := in[0], in[1]
		switch {
		case x == axis:
			return 0, fmt.Errorf("it indexes along the split axis %d", x)
		case n.Op() == tensor.OpTakeAlong && (x < 0) != (idx < 0), n.Op() == tensor.OpTakeAlong && x != idx:
			return 0, fmt.Errorf("its values and indices are split differently")
		case n.Op() == tensor.OpTakeAlong:
			return x, nil
		case x >= 0 && idx >= 0:
			return 0, fmt.Errorf("both its values and its indices are split")
		case idx >= 0:
			return axis + idx, nil
		case x < axis:
			return x, nil
		default:
			return x + n.Input(1).Shape().Rank() - 1, nil
		}
	case tensor.OpOneHot:
		return in[0], nil
	case tensor.OpConv, tensor.OpConvTranspose, tensor.OpMaxPool, tensor.OpAvgPool:
		if in[0] != 0 || slices.ContainsFunc(in[1:], func(a int) bool { return a >= 0 }) {
			return 0, fmt.Errorf("only its batch (axis 0 of the data) can be split")
		}
		return 0, nil
	}
	return 0, fmt.Errorf("the meta device does not know how %s splits; compute it on one device", n.Op())
}

// broadcastAxis follows NumPy broadcasting: every split input's axis must land on the
// same output axis, and no whole input may span that axis at full size.
func broadcastAxis(n *tensor.Node, in []int) (int, error) {
	r := n.Shape().Rank()
	ax := -1
	for i, a := range in {
		if a < 0 {
			continue
		}
		o := a + r - n.Input(i).Shape().Rank()
		if ax >= 0 && o != ax {
			return 0, fmt.Errorf("inputs are split along different axes")
		}
		ax = o
	}
	for i, a := range in {
		x := n.Input(i).Shape()
		if j := ax - (r - x.Rank()); a < 0 && j >= 0 && x[j] != 1 {
			return 0, fmt.Errorf("input %d is whole but spans the split axis (%v)", i, x)
		}
	}
	return ax, nil
}

func reduceAxis(n *tensor.Node, a int) (int, error) {
	rank := n.Input(0).Shape().Rank()
	var reduced []int
	keep := false
	switch at := n.Attr().(type) {
	case tensor.ReduceAttr:
		reduced, keep = at.Axes, at.KeepDims // normalised: every reduced axis listed
	case tensor.ArgReduceAttr:
		reduced, keep = []int{at.Axis}, at.KeepDims
	case tensor.CumSumAttr:
		reduced, keep = []int{at.Axis}, true
	case tensor.TopKAttr:
		reduced, keep = []int{at.Axis}, true
	default:
		return 0, fmt.Errorf("unknown reduction attribute %T", at)
	}
	before := 0
	for _, x := range reduced {
		x = resolve(x, rank)
		if x == a {
			return 0, fmt.Errorf("it reduces (or scans, or sorts) along the split axis %d", a)
		}
		if x < a {
			before++
		}
	}
	if keep {
		return a, nil
	}
	return a - before, nil
}

// matmulAxis: the left operand's rows and the right operand's columns split the
// product; its contracted axis cannot be split; batch axes broadcast.
func matmulAxis(n *tensor.Node, in []int) (int, error) {
	at, _ := n.Attr().(tensor.MatMulAttr)
	r := n.Shape().Rank()
	a, b := n.Input(0).Shape().Rank(), n.Input(1).Shape().Rank()
	if a < 2 || b < 2 {
		return 0, fmt.Errorf("vector products are not split")
	}
	mA, kA := a-2, a-1
	if at.TransA {
		mA, kA = a-1, a-2
	}
	kB, nB := b-2, b-1
	if at.TransB {
		kB, nB = b-1, b-2
	}
	out := -1
	set := func(o int) error {
		if out >= 0 && out != o {
			return fmt.Errorf("its operands are split along different axes")
		}
		out = o
		return nil
	}
	switch x := in[0]; {
	case x < 0:
	case x == kA:
		return 0, fmt.Errorf("it contracts the split axis of its left operand (partial sums)")
	case x == mA:
		if err := set(r - 2); err != nil {
			return 0, err
		}
	default:
		if err := set(x + r - a); err != nil {
			return 0, err
		}
	}
	switch y := in[1]; {
	case y < 0:
	case y == kB:
		return 0, fmt.Errorf("it contracts the split axis of its right operand (partial sums)")
	case y == nB:
		if err := set(r - 1); err != nil {
			return 0, err
		}
	default:
		if err := set(y + r - b); err != nil {
			return 0, err
		}
	}
	// A whole operand must not span a split batch axis at full size.
	if out < r-2 {
		for i, x := range in {
			s := n.Input(i).Shape()
			if j := out - (r - s.Rank()); x < 0 && j >= 0 && s[j] != 1 {
				return 0, fmt.Errorf("operand %d is whole but spans the split batch axis", i)
			}
		}
	}
	return out, nil
}

// partAttr returns n's attribute for a part whose inputs are in: attributes that state
// the output's size along the split axis ax (Reshape's and Expand's shape, Slice's end)
// take the part's size.
func partAttr(n *tensor.Node, in []*tensor.Node, ax int) any {
	attr := n.Attr()
	if ax < 0 {
		return attr
	}
	switch n.Op() {
	case tensor.OpReshape, tensor.OpExpand:
		shape := n.Shape().Clone()
		shape[ax] = partSize(n, in, ax)
		return tensor.ReshapeAttr{Shape: shape}
	case tensor.OpSlice:
		at := attr.(tensor.SliceAttr)
		ends := slices.Clone(at.Ends)
		ends[ax] = in[0].Shape()[ax]
		return tensor.SliceAttr{Starts: at.Starts, Ends: ends, Steps: at.Steps}
	}
	return attr
}

// partSize is the size of a reshape's or expand's split axis in a part: its input's
// split axis size there (the rule guarantees they correspond).
func partSize(n *tensor.Node, in []*tensor.Node, ax int) int {
	if n.Op() == tensor.OpExpand {
		return in[0].Shape()[ax-(n.Shape().Rank()-in[0].Shape().Rank())]
	}
	// Reshape: the part keeps the rows before the axis and everything after it; the
	// axis takes what remains of the part's elements.
	total := in[0].Shape().Size()
	rest := n.Shape()[:ax].Size() * n.Shape()[ax+1:].Size()
	return total / max(rest, 1)
}
