package cpu

import (
	"slices"
	"unsafe"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// Fusion of the layers of a CNN (conv, bias, ReLU, 2×2 max pool), which fuse hands to
// fuseConvPool before it groups elementwise chains. Three patterns:
//
//   - A convolution whose only user adds a per-channel bias: the convolution adds the
//     bias as it writes each image (conv.Forward's bias), into the Add's output, and the
//     Add does nothing. A pass over the output is saved.
//   - relu(z) pooled by a halving max pool whose gradient is taken (z → relu → max_pool,
//     and in the backward max_pool_grad(relu, dy) → where(z > 0, ·, 0)): the pool takes
//     the maximum of z and applies ReLU to that (max(relu(z)) = relu(max(z))), and the
//     backward is one pass from z and dy (maxPoolReluGradStep) that writes Where's output
//     straight away. The ReLU's output is never written, the max_pool_grad's output
//     never exists, and Greater and Where do nothing: of four passes over the layer's
//     full-size activations (ReLU's write, the gradient's write, Where's two reads and a
//     write) one write is left. When the bias's gradient sums Where's output over
//     images and pixels, the step also sums each plane it has just written, and the Sum
//     adds those sums: the pass that read the layer's gradient back is gone too.
//   - Both at once, with nothing else between the convolution and the pool: the pool
//     runs in the convolution's step, on each image as soon as it is written
//     (poolInConv), so z is not read back from memory.
//
// The results are the unfused nodes' bits, but for a window holding NaN, where the
// gradient (of a loss that is NaN anyway) may go to another element of the window.

// fuseConvPool adds the steps of the patterns it finds in nodes to steps, and updates
// mem to what the fused steps read and write, so that the later elementwise fusion
// checks its moves against the memory that is really used.
func fuseConvPool(nodes []*tensor.Node, index map[*tensor.Node]int, mem []nodeMem,
	escapes func(*tensor.Node) bool, steps map[*tensor.Node]func() error, owners map[*tensor.Node]*tensor.Node) {
	users := map[*tensor.Node][]*tensor.Node{}
	for _, n := range nodes {
		for _, x := range n.Inputs() {
			users[x] = append(users[x], n)
		}
	}
	// only returns n's single user, when n has exactly one and its value stays inside.
	only := func(n *tensor.Node) *tensor.Node {
		if u := users[n]; len(u) == 1 && !escapes(n) {
			return u[0]
		}
		return nil
	}
	biased := map[*tensor.Node]*tensor.Node{} // bias Add → the convolution doing it
	for _, n := range nodes {
		if _, taken := steps[n]; taken {
			continue
		}
		switch n.Op() {
		case tensor.OpConv:
			if add := only(n); fuseConvBias(nodes, n, add, index, mem, steps) {
				biased[add] = n
				owners[add] = n
			}
		case tensor.OpRelu:
			if u := users[n]; len(u) == 2 && !escapes(n) {
				pool := fuseReluPool(nodes, n, u, users, only, index, mem, steps, owners)
				if conv := biased[n.Input(0)]; pool != nil && conv != nil && poolInConv(nodes, conv, n, pool, index, mem, steps) {
					owners[pool] = conv
				}
			}
		}
	}
}

// fuseConvBias makes conv's step add the bias of add, conv's only user, if add adds a
// per-channel F32 bias to conv's output and may be written at conv's place, and reports
// whether it did.
func fuseConvBias(nodes []*tensor.Node, conv, add *tensor.Node, index map[*tensor.Node]int, mem []nodeMem,
	steps map[*tensor.Node]func() error) bool {
	if add == nil || add.Op() != tensor.OpAdd || conv.DType() != tensor.F32 || add.DType() != tensor.F32 {
		return false
	}
	if _, taken := steps[add]; taken {
		return false
	}
	bi := 1
	if add.Input(1) == conv {
		bi = 0
	}
	bias := add.Input(bi)
	if bias == conv || bias.DType() != tensor.F32 || !channelVector(bias.Shape(), conv.Shape()) {
		return false
	}
	ic, ia := index[conv], index[add]
	out, b := mem[ia].out, mem[ia].in[bi]
	if !writableEarly(out, ic, ia, mem, append([][]byte{b}, mem[ic].in...)...) || written(nodes, b, ic, ia, mem) {
		return false
	}
	step, err := convStep(conv, out, mem[ic].in, b)
	if err != nil {
		return false // the node's own kernel reports it
	}
	steps[conv], steps[add] = step, nil
	mem[ic] = nodeMem{out: out, in: append(mem[ic].in[:2:2], b)}
	mem[ia] = nodeMem{}
	return true
}

// poolInConv moves the work of pool, fused with relu (maxPoolReluStep), into the step of
// conv, which fuseConvBias made write relu's input z: each image is pooled as soon as
// the convolution has written it, while it is in cache, instead of in a pass over z
// from memory. Only when nothing but the bias add and relu lies between conv and pool
// (as nn's layers give it), so that writing pool's output at conv's place moves no write
// across another node; pool's memory entry stays at its place for the later checks.
// It reports whether it did.
func poolInConv(nodes []*tensor.Node, conv, relu, pool *tensor.Node, index map[*tensor.Node]int,
	mem []nodeMem, steps map[*tensor.Node]func() error) bool {
	ic, ip := index[conv], index[pool]
	for _, n := range nodes[ic+1 : ip] {
		if n != relu && n != relu.Input(0) && n.Op().Kind() != tensor.KindSource {
			return false
		}
	}
	z, y := mem[ic].out, mem[ip].out
	if overlap(y, z) || !writableEarly(y, ic, ip, mem, mem[ic].in...) {
		return false
	}
	pp := newPooler(relu.Shape(), pool.Shape(), pool.Attr().(tensor.PoolAttr))
	Z, Y := f32s(z), f32s(y)
	rows := pp.planes / max(relu.Shape()[0], 1) * pp.oh // output rows per image
	step, err := convStepThen(conv, z, mem[ic].in[:2], mem[ic].in[2], func(n int) {
		pp.max2x2Rows(Z, Y, n*rows, (n+1)*rows, true)
	})
	if err != nil {
		return false
	}
	steps[conv], steps[pool] = step, nil
	mem[ip].in = nil
	return true
}

// channelVector reports whether a bias of shape b, broadcast against out (N, C, ...),
// holds one value per channel C.
func channelVector(b, out tensor.Shape) bool {
	off := out.Rank() - b.Rank()
	if out.Rank() < 3 || off < 0 {
		return false
	}
	for i, d := range b {
		if want := 1; off+i == 1 {
			if d != out[1] {
				return false
			}
		} else if d != want {
			return false
		}
	}
	return true
}

// written reports whether a node strictly between from and at writes memory of b
// (inputs, variables and constants write nothing while the program runs).
func written(nodes []*tensor.Node, b []byte, from, at int, mem []nodeMem) bool {
	for i := from + 1; i < at; i++ {
		if nodes[i].Op().Kind() != tensor.KindSource && overlap(b, mem[i].out) {
			return true
		}
	}
	return false
}

// fuseReluPool fuses relu, whose two users are u, with its max pool and the pool's
// gradient, when they have the shape of the package comment's second pattern, and
// returns the pool node (nil when it fused nothing).
func fuseReluPool(nodes []*tensor.Node, relu *tensor.Node, u []*tensor.Node, users map[*tensor.Node][]*tensor.Node,
	only func(*tensor.Node) *tensor.Node, index map[*tensor.Node]int, mem []nodeMem,
	steps map[*tensor.Node]func() error, owners map[*tensor.Node]*tensor.Node) *tensor.Node {
	pool, grad := u[0], u[1]
	if pool.Op() == tensor.OpMaxPoolGrad {
		pool, grad = grad, pool
	}
	z := relu.Input(0)
	if relu.DType() != tensor.F32 || pool.Op() != tensor.OpMaxPool || grad.Op() != tensor.OpMaxPoolGrad ||
		pool.Input(0) != relu || grad.Input(0) != relu || !grad.Input(1).Shape().Equal(pool.Shape()) {
		return nil
	}
	pp := newPooler(relu.Shape(), pool.Shape(), pool.Attr().(tensor.PoolAttr))
	if !pp.halving || !samePool(pool, grad) {
		return nil
	}
	where := only(grad)
	if where == nil || where.Op() != tensor.OpWhere || where.Input(1) != grad || !isZero(where.Input(2)) {
		return nil
	}
	cmp := where.Input(0)
	if only(cmp) != where || cmp.Op() != tensor.OpGreater || cmp.Input(0) != z || !isZero(cmp.Input(1)) ||
		!cmp.Input(0).Shape().Equal(where.Shape()) {
		return nil
	}
	for _, n := range []*tensor.Node{pool, grad, cmp, where} {
		if _, taken := steps[n]; taken {
			return nil
		}
	}
	ir, ip, ig, ic, iw := index[relu], index[pool], index[grad], index[cmp], index[where]
	zm, dy, dz := mem[ir].in[0], mem[ig].in[1], mem[iw].out
	// The pool reads z in place of relu's output; the gradient step runs at the
	// gradient's place and writes Where's output early. z is live until cmp reads it, so
	// only the nodes in between can spoil it; dz may be z's own memory (the step compares
	// z before it writes), no other operand's. The pool, which now reads z too, must
	// come before the gradient step (and its early write of dz).
	if written(nodes, zm, ir, ig, mem) || ip > ig || ic < ig || iw < ig {
		return nil
	}
	saved := mem[ic]
	mem[ic] = nodeMem{}
	ok := writableEarly(dz, ig, iw, mem, dy, mem[ig].out) && (!overlap(dz, zm) || sameMemory(dz, zm) && len(dz) == len(zm))
	mem[ic] = saved
	if !ok {
		return nil
	}
	steps[relu], steps[cmp], steps[where] = nil, nil, nil
	owners[relu], owners[cmp], owners[where] = pool, grad, grad
	steps[pool] = maxPoolReluStep(pp, f32s(zm), f32s(mem[ip].out))
	var sums []float64
	if sum := biasSum(where, users[where]); sum != nil {
		if _, taken := steps[sum]; !taken {
			// The bias gradient: each plane of dz is summed as it is written; the sum's
			// step adds the planes' sums. Its memory entry stays: it still seems to
			// read dz, which only keeps dz alive a little longer.
			sums = make([]float64, pp.planes)
			steps[sum] = channelSumStep(sums, sum.Shape().Size(), f32s(mem[index[sum]].out))
		}
	}
	steps[grad] = maxPoolReluGradStep(pp, f32s(zm), f32s(dy), f32s(dz), sums)
	mem[ir], mem[ic], mem[iw] = nodeMem{}, nodeMem{}, nodeMem{}
	mem[ip].in = [][]byte{zm}
	mem[ig] = nodeMem{out: dz, in: [][]byte{zm, dy}}
	return pool
}

// biasSum returns the user of dz (N, C, H, W) among users that sums it over N, H and W
// into C values, as the gradient of a per-channel bias does (tensor.SumTo), or nil. With
// more than one channel and image the reduction's kernel (interleavedReduce) adds, for
// each channel, the planes' sums (vec.Sum) in image order; with one image it takes each
// plane's sum: channelSumStep has the bits of both. One channel (a single sum over
// everything) is left to the reduction.
func biasSum(dz *tensor.Node, users []*tensor.Node) *tensor.Node {
	x := dz.Shape()
	if dz.DType() != tensor.F32 || x.Rank() != 4 || x[1] < 2 {
		return nil
	}
	for _, s := range users {
		at, ok := s.Attr().(tensor.ReduceAttr)
		if s.Op() != tensor.OpSum || !ok || s.DType() != tensor.F32 || s.Shape().Size() != x[1] {
			continue
		}
		var want []int
		for i, d := range x {
			if i != 1 && d != 1 {
				want = append(want, i)
			}
		}
		if slices.Equal(at.Axes, want) {
			return s
		}
	}
	return nil
}

// channelSumStep writes the C channel sums of dz into d from the planes' sums (N·C of
// them, image-major), adding each channel's in image order as interleavedReduce does.
func channelSumStep(sums []float64, c int, d []float32) func() error {
	n := len(sums) / c
	return func() error {
		for ch := range c {
			acc := sums[ch]
			for i := 1; i < n; i++ {
				acc += sums[i*c+ch]
			}
			d[ch] = float32(acc)
		}
		return nil
	}
}

// samePool reports whether a max pool and a max_pool_grad have the same window.
func samePool(pool, grad *tensor.Node) bool {
	a, b := pool.Attr().(tensor.PoolAttr), grad.Attr().(tensor.PoolAttr)
	return newPooler(pool.Input(0).Shape(), pool.Shape(), a).halving &&
		newPooler(grad.Input(0).Shape(), grad.Input(1).Shape(), b).halving
}

// isZero reports whether n is an F32 constant whose every element is +0.
func isZero(n *tensor.Node) bool {
	if n.Op() != tensor.OpConst || n.DType() != tensor.F32 || n.Value() == nil {
		return false
	}
	for _, b := range n.Value().Bytes() {
		if b != 0 {
			return false
		}
	}
	return true
}

// maxPoolReluStep computes y = relu(max_pool(z)) for a halving pool p.
func maxPoolReluStep(p pooler, z, y []float32) func() error {
	rows, grain := p.planes*p.oh, poolGrain(p.rowCost())
	body := func(lo, hi int) { p.max2x2Rows(z, y, lo, hi, true) } // built once: no allocation per step
	return func() error { parallel.For(rows, grain, body); return nil }
}

// maxPoolReluGradStep computes where(z > 0, max_pool_grad(relu(z), dy), 0) for a
// halving pool p in one pass: dy[i] goes to the first largest element of window i of z
// when that element is positive, and zero everywhere else. For a window whose largest
// element is positive, z and relu(z) have the same first largest element; for the
// others the Where writes zero wherever the gradient went. dz may be z's memory. With
// sums (one per plane), each plane of dz is summed (vec.SumEach) right after it is
// written, so the work is split by whole planes. Where the AVX-512 runs do it all
// (wideRuns), the blocks are claimed by the workers as they come (parallel.For);
// otherwise each block has a comparison buffer of its own, so they are counted here.
func maxPoolReluGradStep(p pooler, z, dy, dz []float32, sums []float64) func() error {
	rows := p.planes * p.oh
	if p.wideRuns() {
		n, grain := rows, poolGrain(2*p.w)
		body := func(lo, hi int) { p.maxGrad2x2Runs(z, dy, dz, lo, hi, true) }
		if sums != nil {
			n, grain = p.planes, poolGrain(p.h*p.w)
			body = func(lo, hi int) { p.reluGradPlanes(z, dy, dz, nil, sums, lo, hi) }
		}
		return func() error { parallel.For(n, grain, body); return nil }
	}
	count := max(1, min(parallel.Workers(), rows/poolGrain(2*p.w)))
	if sums != nil {
		count = min(count, p.planes)
	}
	masks := make([][]byte, count)
	for i := range masks {
		masks[i] = make([]byte, max(maskChunk, 3*p.w))
	}
	body := func(ch int) {
		if sums == nil {
			p.reluGradRows(z, dy, dz, masks[ch], ch*rows/count, (ch+1)*rows/count)
			return
		}
		p.reluGradPlanes(z, dy, dz, masks[ch], sums, ch*p.planes/count, (ch+1)*p.planes/count)
	}
	return func() error {
		if count == 1 {
			body(0) // parallel.Run allocates its bookkeeping even for one worker
		} else {
			parallel.Run(count, body)
		}
		return nil
	}
}

// reluGradPlanes is reluGradRows on planes [lo, hi), a few at a time (about maskChunk
// elements), each plane's sum written into sums while it is in cache.
func (p *pooler) reluGradPlanes(z, dy, dz []float32, c []byte, sums []float64, lo, hi int) {
	area := p.h * p.w
	per := max(1, maskChunk/area)
	for pl := lo; pl < hi; pl += per {
		pe := min(pl+per, hi)
		p.reluGradRows(z, dy, dz, c, pl*p.oh, pe*p.oh)
		vec.SumEach(sums[pl:pe], dz[pl*area:pe*area], area)
	}
}

// maskChunk is the number of input elements whose comparison reluGradRows keeps at a
// time (at least a row's span).
const maskChunk = 4096

// zeroF32 and zeroBits are the zero operands of reluGradRows's vector loops (a literal
// there would escape to the heap on every call).
var (
	zeroF32  = []float32{0}
	zeroBits = []uint32{0}
)

// reluGradRows computes maxPoolReluGradStep's output under output rows [lo, hi), a few
// rows at a time: Greater's vector loop compares their input span with zero into c,
// then the plain gradient (maxGrad2x2Rows) is written and Where's vector loop masks it,
// all in cache and with those ops' bits. The comparison comes first, so dz may
// overwrite z. c holds at least three input rows (it is not used, and may be nil, where
// the AVX-512 runs do all three).
func (p *pooler) reluGradRows(z, dy, dz []float32, c []byte, lo, hi int) {
	if p.maxGrad2x2Runs(z, dy, dz, lo, hi, true) {
		return // all three in one pass where the assembly does the ReLU's mask too
	}
	per := len(c) / (3 * p.w) // rows whose span fits, leftover rows of plane ends included
	for r0 := lo; r0 < hi; r0 += per {
		r1 := min(r0+per, hi)
		a, b := p.inputSpan(r0, r1)
		vec.Compare(vec.Greater, c[:b-a], z[a:b], 1, zeroF32, 0)
		p.maxGrad2x2Rows(z, dy, dz, r0, r1)
		d := unsafe.Slice((*uint32)(unsafe.Pointer(&dz[a])), b-a)
		vec.Where32(d, c[:b-a], d, 1, zeroBits, 0)
	}
}

// inputSpan returns the input elements [a, b) whose gradient output rows [lo, hi) of a
// halving pool write: their two input rows each, and the row left over under an odd
// height with the plane's last output row.
func (p *pooler) inputSpan(lo, hi int) (a, b int) {
	a = (lo/p.oh*p.h + 2*(lo%p.oh)) * p.w
	pl, oy := (hi-1)/p.oh, (hi-1)%p.oh
	if oy == p.oh-1 {
		return a, (pl + 1) * p.h * p.w
	}
	return a, (pl*p.h + 2*oy + 2) * p.w
}
