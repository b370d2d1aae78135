package cpu

import (
	"math"
	"slices"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// Reductions. The input is viewed as rows: kept axes outside, reduced axes inside. When
// the reduced axes are not already innermost, Prepare plans a transposing copy into
// scratch memory first (one extra pass over the data, which keeps a single fast row
// loop for every axis pattern). F32 data accumulates in float64, sums in float32 first
// (a row's 256 elements at a time in sixteen lanes, vec.Sum; a column sum's 16 rows at
// a time, foldRuns); integers in int64.
// A reduction of one long row (a full Sum or Mean) is split across goroutines.

func init() {
	for _, op := range []tensor.Op{tensor.OpSum, tensor.OpMean, tensor.OpMax, tensor.OpMin, tensor.OpProd, tensor.OpVar} {
		register(op, floatTypes, reduceF32Factory)
	}
	for _, op := range []tensor.Op{tensor.OpSum, tensor.OpMax, tensor.OpMin, tensor.OpProd} {
		register(op, []tensor.DType{tensor.I32}, reduceIntFactory[int32])
		register(op, []tensor.DType{tensor.I64}, reduceIntFactory[int64])
	}
	for _, op := range []tensor.Op{tensor.OpArgMax, tensor.OpArgMin} {
		register(op, floatTypes, argFactory[float32])
		register(op, []tensor.DType{tensor.I32}, argFactory[int32])
		register(op, []tensor.DType{tensor.I64}, argFactory[int64])
	}
	register(tensor.OpCumSum, floatTypes, cumSumFactory[float32, float64])
	register(tensor.OpCumSum, []tensor.DType{tensor.I32}, cumSumFactory[int32, int64])
	register(tensor.OpCumSum, []tensor.DType{tensor.I64}, cumSumFactory[int64, int64])
	register(tensor.OpTopK, floatTypes, topKFactory[float32])
	register(tensor.OpTopK, []tensor.DType{tensor.I32}, topKFactory[int32])
	register(tensor.OpTopK, []tensor.DType{tensor.I64}, topKFactory[int64])
}

// rowsView returns memory holding x with the given axes moved innermost (in order),
// the number of rows and the row length, and a step to run before reading it (nil when
// x already has that layout).
func rowsView(x tensor.Shape, esz int, axes []int, src []byte) (view []byte, rows, r int, prep func() error, err error) {
	var kept []int
	for i := range x {
		if !slices.Contains(axes, i) {
			kept = append(kept, i)
		}
	}
	r = 1
	for _, a := range axes {
		r *= x[a]
	}
	rows = x.Size() / max(r, 1)
	if r == 0 {
		rows = 1
		for _, a := range kept {
			rows *= x[a]
		}
	}
	perm := append(slices.Clone(kept), axes...)
	// The layout already fits when the axes of size > 1 keep their order in perm.
	fits, last := true, -1
	for _, a := range perm {
		if x[a] == 1 {
			continue
		}
		fits = fits && a > last
		last = a
	}
	if fits {
		return src, rows, r, nil, nil
	}
	xs := x.Strides()
	shape := make(tensor.Shape, len(perm))
	st := make([]int, len(perm))
	for i, a := range perm {
		shape[i], st[i] = x[a], xs[a]
	}
	view = alignedBytes(len(src))
	prep, err = stridedCopy(esz, shape, st, 0, view, src)
	return view, rows, r, prep, err
}

// withPrep runs prep (when set) before step.
func withPrep(prep func() error, step func() error) func() error {
	if prep == nil {
		return step
	}
	return func() error {
		if err := prep(); err != nil {
			return err
		}
		return step()
	}
}

// f32Reducer reduces runs of F32 data: part folds a run into a float64 partial result,
// comb merges partials, fin turns the total of a row of r elements into the output.
type f32Reducer struct {
	part func(x []float32) float64
	comb func(a, b float64) float64
	fin  func(acc float64, r int) float64
}

func add(a, b float64) float64 { return a + b }

// pickMax and pickMin keep NaN once seen, as NumPy does.
func pickMax(a, b float64) float64 {
	if b > a || b != b {
		return b
	}
	return a
}

func pickMin(a, b float64) float64 {
	if b < a || b != b {
		return b
	}
	return a
}

func maxRun(x []float32) float64 {
	m := x[0]
	for _, v := range x[1:] {
		if v > m || v != v {
			m = v
		}
	}
	return float64(m)
}

func minRun(x []float32) float64 {
	m := x[0]
	for _, v := range x[1:] {
		if v < m || v != v {
			m = v
		}
	}
	return float64(m)
}

func identity(acc float64, _ int) float64 { return acc }

// meanOf is a mean's finish: the sum acc of r values over r.
func meanOf(acc float64, r int) float64 { return acc / float64(r) }

var f32Reducers = map[tensor.Op]f32Reducer{
	tensor.OpSum:  {vec.Sum, add, identity},
	tensor.OpMean: {vec.Sum, add, meanOf},
	tensor.OpMax:  {maxRun, pickMax, identity},
	tensor.OpMin:  {minRun, pickMin, identity},
	tensor.OpProd: {func(x []float32) float64 {
		p := 1.0
		for _, v := range x {
			p *= float64(v)
		}
		return p
	}, func(a, b float64) float64 { return a * b }, identity},
}

// emptyResult is a reduction's value over no elements.
func emptyResult(op tensor.Op) float64 {
	switch op {
	case tensor.OpSum:
		return 0
	case tensor.OpProd:
		return 1
	}
	return math.NaN() // mean and variance of nothing
}

func reduceF32Factory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.ReduceAttr)
	if o, r, i, ok := blockPattern(n.Input(0).Shape(), at.Axes); ok && r > 0 {
		bases, rowOffs := make([]int, o), make([]int, r)
		for k := range bases {
			bases[k] = k * r * i
		}
		for k := range rowOffs {
			rowOffs[k] = k * i
		}
		return columnReduce(n.Op(), at.Correction, bases, rowOffs, i, f32s(out), f32s(in[0])), nil
	}
	view, rows, r, prep, err := rowsView(n.Input(0).Shape(), 4, at.Axes, in[0])
	if err != nil {
		return nil, err
	}
	if prep != nil && r > 0 {
		// Reduced and kept axes interleave: reduce in place, in memory order, rather
		// than transpose first (a bias gradient over N, H and W of NCHW).
		if step := interleavedReduce(n.Op(), at.Correction, n.Input(0).Shape(), at.Axes, f32s(out), f32s(in[0])); step != nil {
			return step, nil
		}
	}
	d, x := f32s(out), f32s(view)
	if r == 0 {
		v := float32(emptyResult(n.Op()))
		return func() error {
			for i := range d {
				d[i] = v
			}
			return nil
		}, nil
	}
	var row func(x []float32) float64
	var split func() float64
	sp := newSplitter(x)
	if n.Op() == tensor.OpVar {
		row = func(x []float32) float64 { return variance(x, at.Correction) }
		split = func() float64 { return sp.variance(at.Correction) }
	} else {
		red := f32Reducers[n.Op()]
		row = func(x []float32) float64 { return red.fin(red.part(x), len(x)) }
		split = func() float64 { return red.fin(sp.run(red.part, red.comb), r) }
	}
	if rows == 1 && r >= 2*elemGrain {
		return withPrep(prep, func() error { d[0] = float32(split()); return nil }), nil
	}
	body := func(lo, hi int) {
		for o := lo; o < hi; o++ {
			d[o] = float32(row(x[o*r : (o+1)*r]))
		}
	}
	grain := max(1, elemGrain/r)
	return withPrep(prep, func() error { parallel.For(rows, grain, body); return nil }), nil
}

// blockPattern reports whether the reduced axes, ignoring size-1 axes, form one block
// followed by kept axes: x is then (outer, r, inner) with inner > 1, reduced over r.
func blockPattern(x tensor.Shape, axes []int) (outer, r, inner int, ok bool) {
	outer, r, inner = 1, 1, 1
	stage := 0 // 0: outer kept axes, 1: reduced block, 2: inner kept axes
	for i, d := range x {
		red := slices.Contains(axes, i)
		switch {
		case d == 1:
		case red && stage <= 1:
			stage = 1
			r *= d
		case red:
			return 0, 0, 0, false
		case stage == 0:
			outer *= d
		default:
			stage = 2
			inner *= d
		}
	}
	return outer, r, inner, stage == 2
}

// columnReduce reduces, for each of len(bases)*inner outputs (o, j), the elements
// x[bases[o] + rowOffs[k] + j] over k, by accumulating whole rows of inner elements in
// float64, which reads memory in order (a sum over the batch axis, a bias gradient).
// Work is split over the output positions, or over blocks of rows when there are few
// outputs and many rows (rowSplitReduce).
func columnReduce(op tensor.Op, correction int, bases, rowOffs []int, inner int, d, x []float32) func() error {
	r := len(rowOffs)
	sum := op == tensor.OpSum || op == tensor.OpMean
	if br := splitRows(inner, r); op != tensor.OpVar && (r > br || sum) && len(bases)*inner <= maxRowSplitOutputs {
		// Sums over few rows too, so a fused step's column sums (colSum), which fold
		// any number of rows by blocks, always have the same bits.
		return rowSplitReduce(op, bases, rowOffs, inner, br, d, x)
	}
	acc := make([]float64, len(bases)*inner)
	fin := identity
	into := colFolds[tensor.OpSum]
	if op != tensor.OpVar {
		fin, into = f32Reducers[op].fin, colFolds[op]
	}
	// fold accumulates the rows of x into acc[lo:hi] (flat output positions) with f,
	// after starting from the first row (or from zero when centred around mean).
	fold := func(lo, hi int, f func(a []float64, row []float32), mean []float64) {
		for lo < hi {
			o, i0 := lo/inner, lo%inner
			i1 := min(inner, i0+hi-lo)
			a := acc[o*inner+i0 : o*inner+i1]
			for k, ro := range rowOffs {
				row := x[bases[o]+ro+i0 : bases[o]+ro+i1]
				switch {
				case mean != nil:
					m := mean[o*inner+i0 : o*inner+i1]
					if k == 0 {
						clear(a)
					}
					for j, v := range row {
						dv := float64(v) - m[j]
						a[j] += dv * dv
					}
				case k == 0:
					for j, v := range row {
						a[j] = float64(v)
					}
				default:
					f(a, row)
				}
			}
			lo += i1 - i0
		}
	}
	var means []float64
	if op == tensor.OpVar {
		means = make([]float64, len(acc))
	}
	body := func(lo, hi int) {
		fold(lo, hi, into, nil)
		if op != tensor.OpVar {
			for p := lo; p < hi; p++ {
				d[p] = float32(fin(acc[p], r))
			}
			return
		}
		for p := lo; p < hi; p++ {
			means[p] = acc[p] / float64(r)
		}
		fold(lo, hi, nil, means)
		for p := lo; p < hi; p++ {
			d[p] = float32(acc[p] / float64(r-correction))
		}
	}
	grain := max(1, elemGrain/r)
	return func() error { parallel.For(len(acc), grain, body); return nil }
}

// maxRowSplitOutputs is the most outputs for which a column reduction splits its rows
// rather than its outputs: few outputs over many rows (a bias gradient over 2048 rows
// of 128) give each worker too narrow a strip of every row.
const maxRowSplitOutputs = 4096

// maxSplitBlocks bounds the blocks a row split cuts the rows of one base into: more
// only add partial sums to write and merge (1024 rows of 4096, a wide layer's bias
// gradient, in blocks of 4 rows made 8 MiB of them).
const maxSplitBlocks = 64

// splitRows is the number of rows of a block of the row split of r rows of inner
// elements: about elemGrain elements, or more where that would make more than
// maxSplitBlocks blocks, in whole vectors of 16 (so a fused step that folds the sums
// block by block runs package vec's loops on the same vectors as the unfused nodes).
// It depends on the shape only, so the results do not depend on the thread count.
func splitRows(inner, r int) int {
	br := max(1, elemGrain/max(inner, 1), (r+maxSplitBlocks-1)/maxSplitBlocks)
	unit := vecUnit / gcd(max(inner, 1), vecUnit)
	return (br + unit - 1) / unit * unit
}

// addBlocks adds into p[:w] the w values at p[kb·stride:] of each block kb from 1 to
// nb-1, block after block: how a row split's partial sums merge, whoever folded them
// (rowSplitReduce, or a fused step's column sums), so both give the same bits.
func addBlocks(p []float64, w, stride, nb int) {
	acc := p[:w]
	for kb := 1; kb < nb; kb++ {
		for j, v := range p[kb*stride:][:w] {
			acc[j] += v
		}
	}
}

// sumRun is the rows a column sum adds in float32 (vec.AddRows) before it adds them to
// its float64 sums: one float32 addition per element instead of a widening and a
// float64 one, and the float32 sums err by at most 15 units in the last place of
// the sum of the values' magnitudes.
const sumRun = 16

// foldRuns adds rows [k0, k1) of a block of n rows of a column sum (k counted from the
// block's first row; row k0 at x[0:], the next ones stride elements apart) to the
// block's float64 sums a, through p, the float32 sums of the run of sumRun rows (from
// the block's first row) that row k0 is in. It is how a row split's blocks are summed,
// whoever folds them in whatever stretches, so the bits are always the same.
func foldRuns(a []float64, p, x []float32, k0, k1, n, stride int) {
	off := 0
	for k0 < k1 {
		if k0 == 0 {
			clear(a)
		}
		if k0%sumRun == 0 {
			clear(p)
		}
		e := min(k1, (k0/sumRun+1)*sumRun)
		vec.AddRows(p, x[off:], e-k0, stride)
		if e%sumRun == 0 || e == n {
			vec.SumInto(a, p)
		}
		off += (e - k0) * stride
		k0 = e
	}
}

// rowSplitReduce is columnReduce for few outputs over many rows: the rows of each base
// are cut into blocks of br rows (about elemGrain elements, whatever the number of
// threads), each block folds into its own float64 partials in memory order (a sum
// through foldRuns), and the partials merge block after block. The blocks do not
// depend on the thread count, so neither do the results.
func rowSplitReduce(op tensor.Op, bases, rowOffs []int, inner, br int, d, x []float32) func() error {
	r := len(rowOffs)
	nb := (r + br - 1) / br
	red, into := f32Reducers[op], colFolds[op]
	part := make([]float64, len(bases)*nb*inner)
	sum := op == tensor.OpSum || op == tensor.OpMean // merged without a call per element
	var runs []float32
	// Sums over rows evenly spaced in memory (a bias gradient's) fold a block in one
	// call per run that keeps the running sums in registers (vec.AddRows).
	step := 0
	if sum {
		runs = make([]float32, len(part))
		if r > 1 {
			step = rowOffs[1] - rowOffs[0]
		}
		for k := 2; k < r && step > 0; k++ {
			if rowOffs[k]-rowOffs[k-1] != step {
				step = 0
			}
		}
	}
	blocks := func(lo, hi int) {
		for t := lo; t < hi; t++ {
			o, kb := t/nb, t%nb
			a := part[t*inner : (t+1)*inner]
			rows := rowOffs[kb*br : min(r, (kb+1)*br)] // never empty: kb < nb
			switch {
			case sum && step > 0:
				foldRuns(a, runs[t*inner:(t+1)*inner], x[bases[o]+rows[0]:], 0, len(rows), len(rows), step)
			case sum:
				for k, ro := range rows {
					foldRuns(a, runs[t*inner:(t+1)*inner], x[bases[o]+ro:], k, k+1, len(rows), 0)
				}
			default:
				for j, v := range x[bases[o]+rows[0] : bases[o]+rows[0]+inner] {
					a[j] = float64(v)
				}
				for _, ro := range rows[1:] {
					into(a, x[bases[o]+ro:bases[o]+ro+inner])
				}
			}
		}
	}
	// merge folds the blocks' partials into the first block's, block after block over
	// a stretch of outputs of one base (contiguous memory, unlike a walk down each
	// output's blocks, which is a cache miss per block on long rows).
	merge := func(lo, hi int) {
		for lo < hi {
			o, j0 := lo/inner, lo%inner
			j1 := min(inner, j0+hi-lo)
			base := o * nb * inner
			acc := part[base+j0 : base+j1]
			if sum {
				addBlocks(part[base+j0:], j1-j0, inner, nb)
			} else {
				for kb := 1; kb < nb; kb++ {
					for j, v := range part[base+kb*inner+j0 : base+kb*inner+j1] {
						acc[j] = red.comb(acc[j], v)
					}
				}
			}
			for j, v := range acc {
				d[lo+j] = float32(red.fin(v, r))
			}
			lo += j1 - j0
		}
	}
	return func() error {
		parallel.For(len(bases)*nb, 1, blocks)
		parallel.For(len(bases)*inner, max(1, elemGrain/nb), merge)
		return nil
	}
}

// interleavedReduce reduces x over axes where reduced and kept axes interleave, in
// memory order: with a kept innermost axis through columnReduce, with a reduced one by
// folding each contiguous run into its output. It returns nil for a variance over a
// reduced innermost axis, which the caller transposes first.
func interleavedReduce(op tensor.Op, correction int, x tensor.Shape, axes []int, d, xs []float32) func() error {
	// Merge adjacent axes of the same kind; drop axes of size 1.
	var sizes []int
	var reduced []bool
	for i, s := range x {
		if s == 1 {
			continue
		}
		red := slices.Contains(axes, i)
		if k := len(sizes) - 1; k >= 0 && reduced[k] == red {
			sizes[k] *= s
			continue
		}
		sizes, reduced = append(sizes, s), append(reduced, red)
	}
	strides := tensor.Shape(sizes).Strides()
	var kShape, kSt, rShape, rSt []int
	last := len(sizes) - 1
	for i := 0; i < last; i++ {
		if reduced[i] {
			rShape, rSt = append(rShape, sizes[i]), append(rSt, strides[i])
		} else {
			kShape, kSt = append(kShape, sizes[i]), append(kSt, strides[i])
		}
	}
	bases := offsets(tensor.Shape(kShape), kSt)
	outer := offsets(tensor.Shape(rShape), rSt)
	if !reduced[last] {
		return columnReduce(op, correction, bases, outer, sizes[last], d, xs)
	}
	if op == tensor.OpVar {
		return nil
	}
	red, run := f32Reducers[op], sizes[last]
	r := run * len(outer)
	body := func(lo, hi int) {
		for o := lo; o < hi; o++ {
			b := bases[o]
			acc := red.part(xs[b+outer[0] : b+outer[0]+run])
			for _, ro := range outer[1:] {
				acc = red.comb(acc, red.part(xs[b+ro:b+ro+run]))
			}
			d[o] = float32(red.fin(acc, r))
		}
	}
	grain := max(1, elemGrain/r)
	return func() error { parallel.For(len(bases), grain, body); return nil }
}

// colFolds fold one more row into the running results of a column reduction; each
// loop is written out so no function call happens per element.
var colFolds = map[tensor.Op]func(a []float64, row []float32){
	tensor.OpSum:  vec.SumInto,
	tensor.OpMean: vec.SumInto,
	tensor.OpMax: func(a []float64, row []float32) {
		a = a[:len(row)]
		for j, v := range row {
			if w := float64(v); w > a[j] || w != w {
				a[j] = w
			}
		}
	},
	tensor.OpMin: func(a []float64, row []float32) {
		a = a[:len(row)]
		for j, v := range row {
			if w := float64(v); w < a[j] || w != w {
				a[j] = w
			}
		}
	},
	tensor.OpProd: func(a []float64, row []float32) {
		a = a[:len(row)]
		for j, v := range row {
			a[j] *= float64(v)
		}
	},
}

// splitter reduces one long run in parallel pieces and merges the partials in order;
// its scratch and worker body are made once, in Prepare.
type splitter struct {
	x       []float32
	partial []float64
	part    func(x []float32) float64
	mean    float64                   // the centre of the second variance pass
	centred func(x []float32) float64 // Σ(x-mean)², bound once
	body    func(lo, hi int)
}

func newSplitter(x []float32) *splitter {
	k := max(1, min(parallel.Workers(), len(x)/elemGrain))
	s := &splitter{x: x, partial: make([]float64, k)}
	s.centred = func(x []float32) float64 { return vec.SqDev(x, s.mean) }
	s.body = func(lo, hi int) {
		for p := lo; p < hi; p++ {
			s.partial[p] = s.part(s.x[p*len(s.x)/k : (p+1)*len(s.x)/k])
		}
	}
	return s
}

func (s *splitter) run(part func(x []float32) float64, comb func(a, b float64) float64) float64 {
	s.part = part
	parallel.For(len(s.partial), 1, s.body)
	acc := s.partial[0]
	for _, v := range s.partial[1:] {
		acc = comb(acc, v)
	}
	return acc
}

// variance is the two-pass variance of the run, dividing by its length - correction.
func (s *splitter) variance(correction int) float64 {
	s.mean = s.run(vec.Sum, add) / float64(len(s.x))
	return s.run(s.centred, add) / float64(len(s.x)-correction)
}

// variance is the two-pass variance of x, dividing by len(x)-correction.
func variance(x []float32, correction int) float64 {
	mean := vec.Sum(x) / float64(len(x))
	return vec.SqDev(x, mean) / float64(len(x)-correction)
}

// reduceIntFactory reduces integers exactly in int64 (sums and products wrap on
// overflow, as integer arithmetic does).
func reduceIntFactory[T int32 | int64](n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.ReduceAttr)
	view, rows, r, prep, err := rowsView(n.Input(0).Shape(), n.DType().Size(), at.Axes, in[0])
	if err != nil {
		return nil, err
	}
	d, x := typed[T](out), typed[T](view)
	op := n.Op()
	body := func(lo, hi int) {
		for o := lo; o < hi; o++ {
			run := x[o*r : (o+1)*r]
			var acc int64
			switch op {
			case tensor.OpSum:
				for _, v := range run {
					acc += int64(v)
				}
			case tensor.OpProd:
				acc = 1
				for _, v := range run {
					acc *= int64(v)
				}
			case tensor.OpMax:
				acc = int64(slices.Max(run))
			case tensor.OpMin:
				acc = int64(slices.Min(run))
			}
			d[o] = T(acc)
		}
	}
	grain := max(1, elemGrain/max(r, 1))
	return withPrep(prep, func() error { parallel.For(rows, grain, body); return nil }), nil
}

// argFactory finds the index of the largest (ArgMax) or smallest (ArgMin) element of
// each row, the first one on ties; a NaN counts as the extreme and the first wins.
func argFactory[T float32 | int32 | int64](n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	axis := n.Attr().(tensor.ArgReduceAttr).Axis
	esz := n.Input(0).DType().Size()
	view, rows, r, prep, err := rowsView(n.Input(0).Shape(), esz, []int{axis}, in[0])
	if err != nil {
		return nil, err
	}
	d, x := i64s(out), typed[T](view)
	isMax := n.Op() == tensor.OpArgMax
	body := func(lo, hi int) {
		for o := lo; o < hi; o++ {
			run := x[o*r : (o+1)*r]
			best, bi := run[0], 0
			for i, v := range run {
				if best != best {
					break
				}
				if v != v || (isMax && v > best) || (!isMax && v < best) {
					best, bi = v, i
				}
			}
			d[o] = int64(bi)
		}
	}
	grain := max(1, elemGrain/r)
	return withPrep(prep, func() error { parallel.For(rows, grain, body); return nil }), nil
}

// axisSplit returns the sizes before, along and after axis.
func axisSplit(s tensor.Shape, axis int) (outer, r, inner int) {
	return s[:axis].Size(), s[axis], s[axis+1:].Size()
}

// cumSumFactory scans along the axis in place of the (outer, r, inner) layout, keeping
// running sums of the inner positions in an accumulator of type A.
func cumSumFactory[T float32 | int32 | int64, A float64 | int64](n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.CumSumAttr)
	outer, r, inner := axisSplit(n.Shape(), at.Axis)
	d, x := typed[T](out), typed[T](in[0])
	acc := make([]A, outer*inner)
	body := func(lo, hi int) {
		for o := lo; o < hi; o++ {
			a := acc[o*inner : (o+1)*inner]
			clear(a)
			for s := 0; s < r; s++ {
				k := s
				if at.Reverse {
					k = r - 1 - s
				}
				base := (o*r + k) * inner
				for i := range a {
					v := A(x[base+i])
					if at.Exclusive {
						d[base+i] = T(a[i])
						a[i] += v
					} else {
						a[i] += v
						d[base+i] = T(a[i])
					}
				}
			}
		}
	}
	grain := max(1, elemGrain/max(r*inner, 1))
	return func() error { parallel.For(outer, grain, body); return nil }, nil
}

// topKFactory sorts each line along the axis by value (stable, so ties keep the lower
// index first; NaN sorts as the largest value) and writes the first k indices.
func topKFactory[T float32 | int32 | int64](n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.TopKAttr)
	outer, r, inner := axisSplit(n.Input(0).Shape(), at.Axis)
	d, x := i64s(out), typed[T](in[0])
	order := make([]int, r)
	var base int
	greater := func(a, b T) bool { return a > b || (a != a && b == b) }
	cmp := func(i, j int) int {
		a, b := x[base+i*inner], x[base+j*inner]
		if !at.Largest {
			a, b = b, a
		}
		switch {
		case greater(a, b):
			return -1
		case greater(b, a):
			return 1
		}
		return 0
	}
	return func() error {
		for o := 0; o < outer; o++ {
			for i := 0; i < inner; i++ {
				base = o*r*inner + i
				for j := range order {
					order[j] = j
				}
				slices.SortStableFunc(order, cmp)
				for j := 0; j < at.K; j++ {
					d[(o*at.K+j)*inner+i] = int64(order[j])
				}
			}
		}
		return nil
	}, nil
}
