package gpu

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Reductions: Sum, Mean, Max, Min and Prod on reduce.comp, and the index-valued or
// multi-pass ones (ArgMax, ArgMin, CumSum, TopK, Var) on reduce_scan.comp.

func init() {
	for op := tensor.Op(1); int(op) < tensor.NumOps; op++ {
		if op.GPU().Shader == "reduce" {
			ops[op] = opImpl{record: reduceRecorder(opCode[op]), supports: func(_ *Device, n *tensor.Node) bool { return planReduce(n).feasible }}
		}
	}
	ordered := func(_ *Device, n *tensor.Node) bool {
		t := n.Input(0).DType()
		_, _, _, ok := scanView(n)
		return ok && t != tensor.Bool && wordSized(n)
	}
	ops[tensor.OpArgMax] = opImpl{typed: true, record: recordScan, supports: ordered}
	ops[tensor.OpArgMin] = opImpl{typed: true, record: recordScan, supports: ordered}
	ops[tensor.OpTopK] = opImpl{typed: true, record: recordScan, supports: ordered}
	f32Only := func(_ *Device, n *tensor.Node) bool {
		_, _, _, ok := scanView(n)
		return ok && n.DType() == tensor.F32 && n.Input(0).DType() == tensor.F32 && wordSized(n)
	}
	ops[tensor.OpCumSum] = opImpl{typed: true, record: recordScan, supports: f32Only}
	ops[tensor.OpVar] = opImpl{typed: true, record: recordScan, supports: f32Only}
}

// reducePlan describes a reduction: which reduce.comp mode runs it and the view it
// needs. Axes of extent 1 are dropped and neighbouring axes of the same kind (kept or
// reduced) merged; one run of reduced axes is [outer, red, inner] (rows when inner is
// 1, columns otherwise); interleaved runs use the general mode with up to four kept and
// four reduced groups.
type reducePlan struct {
	mode              uint32
	outer, red, inner int
	kd, ks, rd, rs    [4]uint32
	keptRuns, redRuns int
	feasible          bool
}

func planReduce(n *tensor.Node) reducePlan {
	s := n.Input(0).Shape()
	axes := n.Attr().(tensor.ReduceAttr).Axes
	reduced := make([]bool, len(s))
	for _, a := range axes {
		reduced[a] = true
	}
	if len(axes) == 0 {
		for i := range reduced {
			reduced[i] = true
		}
	}
	type group struct {
		red         bool
		dim, stride int
	}
	var groups []group
	stride := 1
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 1 {
			if k := len(groups) - 1; k >= 0 && groups[k].red == reduced[i] {
				groups[k].dim *= s[i]
			} else {
				groups = append(groups, group{reduced[i], s[i], stride})
			}
		}
		stride *= s[i]
	}
	p := reducePlan{outer: 1, red: 1, inner: 1, feasible: true}
	for i := range p.kd {
		p.kd[i], p.rd[i] = 1, 1
	}
	// groups run innermost first; fill the four slots of each kind right-aligned.
	for _, g := range groups {
		if g.red {
			p.red *= g.dim
			p.redRuns++
			if p.redRuns <= 4 {
				p.rd[4-p.redRuns], p.rs[4-p.redRuns] = uint32(g.dim), uint32(g.stride)
			}
		} else {
			p.outer *= g.dim
			p.keptRuns++
			if p.keptRuns <= 4 {
				p.kd[4-p.keptRuns], p.ks[4-p.keptRuns] = uint32(g.dim), uint32(g.stride)
			}
		}
	}
	switch {
	case p.redRuns <= 1 && (len(groups) == 0 || groups[0].red):
		p.mode = 0 // [kept..., red]: rows
	case p.redRuns == 1 && p.keptRuns <= 2:
		// [outer, red, inner]: columns, inner the innermost kept group.
		p.mode, p.inner = 1, groups[0].dim
		p.outer /= p.inner
	case p.redRuns <= 4 && p.keptRuns <= 4:
		p.mode = 2
	default:
		p.feasible = false
	}
	return p
}

// reduceView returns the [outer, red, inner] view of a reduction over one contiguous
// run of axes (size-1 axes are ignored when judging contiguity).
func reduceView(n *tensor.Node) (outer, red, inner int, ok bool) {
	p := planReduce(n)
	if !p.feasible || p.mode == 2 {
		return 0, 0, 0, false
	}
	return p.outer, p.red, p.inner, true
}

func reduceRecorder(code uint32) func(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	return func(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
		p := planReduce(n)
		if p.outer*p.inner == 0 {
			return nil
		}
		if p.mode == 1 {
			return r.reduceColumns(code, p.outer, p.red, p.inner, in[0], out, n.Op().String())
		}
		k, err := r.d.Kernel("reduce", 2, groupSize, code, p.mode)
		if err != nil {
			return err
		}
		w := []uint32{uint32(p.outer), uint32(p.red), uint32(p.inner), f32Off(in[0]), f32Off(out)}
		for _, a := range [][4]uint32{p.kd, p.ks, p.rd, p.rs} {
			w = append(w, a[:]...)
		}
		w = append(w, uint32(p.red), uint32(p.red))
		return r.Dispatch(k, rowGrid(p.outer), words(w), n.Op().String(), In(in[0]), Out(out))
	}
}

// reduceColumns records the reduction of [outer, red, inner] f32 values at src over red
// into [outer, inner] at dst (reduce.comp's MODE 1). Long columns with few workgroups
// are cut into chunks whose results a second pass combines, through scratch memory.
func (r *Recorder) reduceColumns(code uint32, outer, red, inner int, src, dst *Buffer, label string) error {
	k, err := r.d.Kernel("reduce", 2, groupSize, code, 1)
	if err != nil {
		return err
	}
	push := func(outer, red, inner int, from, to uint32, chunk, count int) []byte {
		w := make([]uint32, 5+16+2)
		w[0], w[1], w[2], w[3], w[4] = uint32(outer), uint32(red), uint32(inner), from, to
		w[21], w[22] = uint32(chunk), uint32(count)
		return words(w)
	}
	wgs := outer * ((inner + 31) / 32)
	chunks := 1
	if red >= 256 && wgs < 512 {
		chunks = min(64, red/128, (512+wgs-1)/wgs)
	}
	if chunks <= 1 {
		return r.Dispatch(k, rowGrid(wgs), push(outer, red, inner, f32Off(src), f32Off(dst), red, red), label, In(src), Out(dst))
	}
	chunk := (red + chunks - 1) / chunks
	chunks = (red + chunk - 1) / chunk
	scratch, err := r.scratchBuffer(uint64(4 * chunks * outer * inner))
	if err != nil {
		return err
	}
	groups := rowGrid(wgs)
	groups[2] = uint32(chunks)
	if err := r.Dispatch(k, groups, push(outer, red, inner, f32Off(src), f32Off(scratch), chunk, red), label, In(src), Out(scratch)); err != nil {
		return err
	}
	cols := outer * inner
	return r.Dispatch(k, rowGrid((cols+31)/32), push(1, chunks, cols, f32Off(scratch), f32Off(dst), chunks, red), label, In(scratch), Out(dst))
}

// scanView returns the (outer, r, inner) view of a reduce_scan.comp op's input; it reports
// false for an empty reduced run.
func scanView(n *tensor.Node) (outer, r, inner int, ok bool) {
	s := n.Input(0).Shape()
	axis := 0
	switch at := n.Attr().(type) {
	case tensor.ArgReduceAttr:
		axis = at.Axis
	case tensor.CumSumAttr:
		axis = at.Axis
	case tensor.TopKAttr:
		axis = at.Axis
		if len(s) == 0 || at.K > s[axis] {
			return 0, 0, 0, false
		}
	case tensor.ReduceAttr:
		outer, r, inner, ok = reduceView(n)
		return outer, r, inner, ok && r > 0 && r > at.Correction
	}
	if len(s) == 0 {
		return 1, 1, 1, n.Op() == tensor.OpCumSum
	}
	outer, r, inner = s[:axis].Size(), s[axis], s[axis+1:].Size()
	return outer, r, inner, r > 0 || n.Op() == tensor.OpCumSum
}

func recordScan(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	outer, red, inner, _ := scanView(n)
	var k uint32
	var exclusive, reverse, largest bool
	divisor := float32(1)
	switch at := n.Attr().(type) {
	case tensor.CumSumAttr:
		exclusive, reverse = at.Exclusive, at.Reverse
	case tensor.TopKAttr:
		k, largest = uint32(at.K), at.Largest
	case tensor.ReduceAttr:
		divisor = float32(red - at.Correction)
	}
	lines := outer * inner
	if lines == 0 || red == 0 {
		return nil
	}
	kern, err := r.d.Kernel("reduce_scan", 2, groupSize, opCode[n.Op()], uint32(n.Input(0).DType()), b32(exclusive), b32(reverse), b32(largest))
	if err != nil {
		return err
	}
	w := []uint32{uint32(outer), uint32(red), uint32(inner), f32Off(in[0]), f32Off(out), k, math.Float32bits(divisor)}
	return r.Dispatch(kern, rowGrid(lines), words(w), n.Op().String(), In(in[0]), Out(out))
}
