package runtime

import (
	"fmt"
	"slices"

	"github.com/gml-dev/gml/tensor"
)

// How a meta device's split travels through a graph. Every node gets a placement: the
// axis along which its parts hold slices of it, whole (every part holds all of it) or
// partial (every part holds a summand: a sum or a product contracting the split axis).
// Where an op cannot take its inputs as they are, the plan converts them: a whole input
// that must match split ones is sliced in each part; a partial input is summed across
// the parts first (an all-reduce); a split input of an op whose result would not be the
// slices of the whole result (a softmax along the split axis, say) is gathered first (an
// all-gather). The conversions that need every part's value cut the graph into phases,
// run one after another, with the exchange through the host between them. A meta device
// so computes any graph, and its results are those of one device.

// Placements other than a split axis.
const (
	whole   = -1
	partial = -2
)

// conversion is what a node does to one of its inputs before computing.
type conversion uint8

const (
	asIs    conversion = iota
	slice              // a whole input sliced along an axis in each part
	reduce             // a partial input summed across the parts
	gatherd            // a split input gathered from the parts
)

// metaPlan is where every node of a graph stands on a meta device.
type metaPlan struct {
	nodes  []*tensor.Node
	axis   map[*tensor.Node]int          // split axis, whole or partial
	conv   map[*tensor.Node][]conversion // per input of each computed node
	sliceA map[*tensor.Node][]int        // per input: the axis a slice conversion cuts
	phase  map[*tensor.Node]int
	phases int
	// granule: an extent whose parts' slices must hold whole groups (heads' features
	// when a reshape turns the split axis into heads and features); 1 when unset.
	granule map[int]int
}

// planMeta places every node (in schedule order).
func planMeta(nodes []*tensor.Node, split SplitFunc) (*metaPlan, error) {
	p := &metaPlan{nodes: nodes, axis: map[*tensor.Node]int{}, conv: map[*tensor.Node][]conversion{},
		sliceA: map[*tensor.Node][]int{}, phase: map[*tensor.Node]int{}, phases: 1, granule: map[int]int{}}
	for _, n := range nodes {
		if isSource(n) {
			p.axis[n] = whole
			if ax, ok := split(n); ok {
				r := n.Shape().Rank()
				if ax < 0 {
					ax += r
				}
				if ax < 0 || ax >= r {
					return nil, fmt.Errorf("runtime: meta: the split function chose axis %d of %v", ax, n)
				}
				if n.Shape()[ax] > 1 { // an axis of 1 broadcasts: every part takes it
					p.axis[n] = ax
				}
			}
			continue
		}
		if err := p.place(n); err != nil {
			return nil, fmt.Errorf("runtime: meta: %v cannot be computed in parts: %w", n, err)
		}
		ph := 0
		for i, x := range n.Inputs() {
			q := p.phase[x]
			if c := p.conv[n][i]; c == reduce || (c == gatherd && !p.localWhole(x)) {
				q++ // the exchange happens between phases
			}
			ph = max(ph, q)
		}
		p.phase[n] = ph
		p.phases = max(p.phases, ph+1)
	}
	return p, p.checkWrites()
}

// granuleOf is the granule of an extent's slices.
func (p *metaPlan) granuleOf(extent int) int {
	if g := p.granule[extent]; g > 0 {
		return g
	}
	return 1
}

// align asks that slices of an axis of extent coarse hold whole groups of g, and that
// an axis of extent fine (= coarse/g) be sliced plainly, so that the slices of the two
// correspond; it reports false when an earlier request conflicts.
func (p *metaPlan) align(coarse, g, fine int) bool {
	if c := p.granule[coarse]; c != 0 && c != g {
		return false
	}
	if f := p.granule[fine]; f != 0 && f != 1 {
		return false
	}
	p.granule[coarse] = g
	p.granule[fine] = 1
	return true
}

// reshapeAxis follows a split axis a of x through a reshape: kept whole, divided into
// an outer axis and inner ones (the features of heads), or merged with the axes after
// it; the slices then hold whole groups of the inner size.
func (p *metaPlan) reshapeAxis(n *tensor.Node, a int) (int, bool) {
	x, out := n.Input(0).Shape(), n.Shape()
	lead := x[:a].Size()
	for j := 0; j < out.Rank(); j++ {
		if out[:j].Size() != lead {
			continue
		}
		switch d, o := x[a], out[j]; {
		case o == d:
			return j, true
		case o < d && d%o == 0 && out[j+1:].Size() == d/o*x[a+1:].Size():
			return j, p.align(d, d/o, o) // [.., H*D] -> [.., H, D]
		case o > d && o%d == 0 && x[a+1:].Size() == o/d*out[j+1:].Size():
			return j, p.align(o, o/d, d) // [.., H, D] -> [.., H*D]
		}
	}
	return 0, false
}

// localWhole reports whether a part can make the whole of source x itself (an input is
// fed whole, a constant is known), so gathering it needs no exchange.
func (p *metaPlan) localWhole(x *tensor.Node) bool {
	return x.Op() == tensor.OpInput || x.Op() == tensor.OpConst
}

// place decides n's placement and its inputs' conversions.
func (p *metaPlan) place(n *tensor.Node) error {
	in := make([]int, len(n.Inputs()))
	conv := make([]conversion, len(in))
	sliceA := make([]int, len(in))
	p.conv[n], p.sliceA[n] = conv, sliceA
	anySplit := false
	for i, x := range n.Inputs() {
		in[i] = p.axis[x]
		if in[i] == partial {
			conv[i], in[i] = reduce, whole
		}
		anySplit = anySplit || in[i] >= 0
	}
	gatherAll := func() {
		for i, a := range in {
			if a >= 0 {
				conv[i], in[i] = gatherd, whole
			}
		}
		p.axis[n] = whole
	}
	if !anySplit {
		p.axis[n] = whole
		return nil
	}
	if w := n.Op().Writes(); len(w) > 0 {
		// An update keeps its variable's placement: identical in every part when whole
		// (so replicas stay identical), slice by slice when split.
		target := in[w[0]]
		if target < 0 {
			gatherAll()
			return nil
		}
		ax, slices, err := broadcastAxis(n, in)
		if err != nil || ax != target+n.Shape().Rank()-n.Input(w[0]).Shape().Rank() {
			return fmt.Errorf("its operands are not split as the variable it updates (axis %d)", target)
		}
		p.sliced(n, conv, sliceA, slices)
		p.axis[n] = ax
		return nil
	}
	switch n.Op().Kind() {
	case tensor.KindUnary, tensor.KindBinary:
		if ax, slices, err := broadcastAxis(n, in); err == nil {
			p.sliced(n, conv, sliceA, slices)
			p.axis[n] = ax
			return nil
		}
		gatherAll()
		return nil
	case tensor.KindMatMul:
		if ok := p.partialProduct(n, in, conv, sliceA); ok {
			p.axis[n] = partial
			return nil
		}
	case tensor.KindLayout:
		if n.Op() == tensor.OpReshape {
			if ax, ok := p.reshapeAxis(n, in[0]); ok {
				p.axis[n] = ax
				return nil
			}
			gatherAll()
			return nil
		}
	case tensor.KindReduce:
		if n.Op() == tensor.OpSum || n.Op() == tensor.OpMean {
			if _, err := reduceAxis(n, in[0]); err != nil {
				p.axis[n] = partial // each part sums its slice (a mean is scaled by the whole count)
				return nil
			}
		}
	}
	ax, err := splitRule(n, in)
	if err != nil {
		gatherAll()
		return nil
	}
	p.axis[n] = ax
	return nil
}

// sliced records slice conversions (slices[i] >= 0: cut input i along that axis).
func (p *metaPlan) sliced(n *tensor.Node, conv []conversion, sliceA, slices []int) {
	for i, a := range slices {
		if a >= 0 {
			conv[i], sliceA[i] = slice, a
		}
	}
}

// partialProduct reports whether product n can be summed from the parts: its
// contracted axis split in one operand and split the same way, or sliced, in the other,
// and nothing else split.
func (p *metaPlan) partialProduct(n *tensor.Node, in []int, conv []conversion, sliceA []int) bool {
	at, _ := n.Attr().(tensor.MatMulAttr)
	a, b := n.Input(0).Shape().Rank(), n.Input(1).Shape().Rank()
	if a < 2 || b < 2 {
		return false
	}
	kA, kB := a-1, b-2
	if at.TransA {
		kA = a - 2
	}
	if at.TransB {
		kB = b - 1
	}
	k := []int{kA, kB}
	for i, x := range in {
		if x >= 0 && x != k[i] {
			return false
		}
	}
	for i, x := range in {
		if x < 0 {
			conv[i], sliceA[i] = slice, k[i]
		}
	}
	return true
}

// checkWrites refuses a graph that reads a variable in a phase after the one that
// updates it: the later phase would see the update, where one device would not.
func (p *metaPlan) checkWrites() error {
	written := map[*tensor.Variable]int{}
	for _, n := range p.nodes {
		for _, i := range n.Op().Writes() {
			if v := n.Input(i).Variable(); v != nil {
				written[v] = p.phase[n]
			}
		}
	}
	for _, n := range p.nodes {
		for _, x := range n.Inputs() {
			if v := x.Variable(); v != nil {
				if w, ok := written[v]; ok && p.phase[n] > w {
					return fmt.Errorf("runtime: meta: %v reads %v after its update (phase %d of %d); compute it on one device", n, v, p.phase[n]+1, p.phases)
				}
			}
		}
	}
	return nil
}

// resolve makes an axis non-negative for a rank.
func resolve(ax, rank int) int {
	if ax < 0 {
		return ax + rank
	}
	return ax
}

// splitRule returns the split axis of n's output from its inputs' (-1: whole), for ops
// other than the elementwise ones (see place).
func splitRule(n *tensor.Node, in []int) (int, error) {
	out := n.Shape()
	r := out.Rank()
	switch n.Op().Kind() {
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
		// only batch and head axes can be split, the same in all inputs.
		toOut, fromOut := rowAxes(n)
		ax := -1
		for i, a := range in {
			if a < 0 {
				continue
			}
			o, ok := toOut(i, a)
			if !ok {
				return 0, fmt.Errorf("input %d is split along axis %d, a sequence or feature axis", i, a)
			}
			if ax >= 0 && ax != o {
				return 0, fmt.Errorf("inputs are split along different axes")
			}
			ax = o
		}
		for i, a := range in {
			if a < 0 && n.Input(i).Shape().Rank() > 2 {
				if j, ok := fromOut(i, ax); ok && n.Input(i).Shape()[j] != 1 {
					return 0, fmt.Errorf("input %d is whole but has the split axis at full size", i)
				}
			}
		}
		return ax, nil
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

// rowAxes maps the batch and head axes of an attention's or RoPE's inputs to its
// output's and back: toOut(i, a) is the output axis of input i's axis a (false for a
// sequence or feature axis), fromOut(i, o) input i's axis for output axis o (false
// where the input has none). Inputs align with the output from the right, but in
// attention's AttentionBTHD layout, (..., T, H, D), whose mask aligns with the scores
// (..., H, Tq, Tk): there the heads are the output's axis r-2 and the scores' r-3.
func rowAxes(n *tensor.Node) (toOut, fromOut func(i, a int) (int, bool)) {
	r := n.Shape().Rank()
	rank := func(i int) int { return n.Input(i).Shape().Rank() }
	if at, ok := n.Attr().(tensor.AttentionAttr); !ok || at.Layout != tensor.AttentionBTHD {
		return func(i, a int) (int, bool) { return a + r - rank(i), a < rank(i)-2 },
			func(i, o int) (int, bool) { return o - (r - rank(i)), o-(r-rank(i)) >= 0 }
	}
	const mask = 3
	toOut = func(i, a int) (int, bool) {
		if i == mask {
			switch s := a + r - rank(i); {
			case s < r-3:
				return s, true
			case s == r-3:
				return r - 2, true
			}
			return 0, false
		}
		return a, a < r-3 || a == r-2
	}
	fromOut = func(i, o int) (int, bool) {
		if i != mask {
			return o, true
		}
		if o == r-2 {
			o = r - 3
		}
		j := o - (r - rank(i))
		return j, j >= 0
	}
	return toOut, fromOut
}

// broadcastAxis follows NumPy broadcasting: every split input's axis must land on the
// same output axis; a whole input spanning that axis at full size is sliced in each
// part (slices[i], -1 for none).
func broadcastAxis(n *tensor.Node, in []int) (int, []int, error) {
	r := n.Shape().Rank()
	ax := -1
	for i, a := range in {
		if a < 0 {
			continue
		}
		o := a + r - n.Input(i).Shape().Rank()
		if ax >= 0 && o != ax {
			return 0, nil, fmt.Errorf("inputs are split along different axes")
		}
		ax = o
	}
	slices := make([]int, len(in))
	for i, a := range in {
		slices[i] = -1
		x := n.Input(i).Shape()
		if j := ax - (r - x.Rank()); a < 0 && j >= 0 && x[j] != 1 {
			slices[i] = j
		}
	}
	return ax, slices, nil
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
