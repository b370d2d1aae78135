package cpu

import (
	"fmt"
	"sync"

	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/qdot"
	"github.com/gml-dev/gml/tensor"
	"github.com/gml-dev/gml/tensor/quant"
)

// Products with a quantised operand, and casts to and from quantised types.
//
// The quantised operand Q is a matrix of R rows of K weights stored as blocks along K,
// the reduction axis (the shape rule guarantees it); the f32 operand is seen as C rows
// of K floats, F. Every product is then D[r][c] = Q_r · F_c, written to the output with
// the strides of the case: out[m][n] = D[n][m] for a quantised b (x @ wᵀ), D[m][n] for a
// quantised a. Few rows of F (a matrix-vector product, token-by-token inference) take
// fused dot products that decode each block as they go (package qdot), so the weights
// are read once and never written out as floats. Many rows decode a panel of Q rows to
// f32 scratch and hand it to the SGEMM, whose blocking then does the arithmetic at its
// full rate; the panel (about 1 MiB) stays in cache, so no f32 copy of the weights is
// ever made either. The fused dot products round the activations to 16 bits per block
// of 32 (package qdot), a relative error of about 1e-5; the panel path is exact.

func init() {
	register(tensor.OpMatMul, quantTypes, quantMatMulFactory)
	register(tensor.OpCast, quantTypes, dequantizeFactory)
}

var quantTypes = []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K}

// fusedMaxRows is the most rows of F the fused dot products serve; beyond it a decoded
// panel and the SGEMM are faster.
const fusedMaxRows = 4

// panelBytes is the size of the decoded panel of Q rows.
const panelBytes = 1 << 20

func quantMatMulFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.MatMulAttr)
	a, b := n.Input(0), n.Input(1)
	cs := n.Shape()
	mm, nn := cs[len(cs)-2], cs[len(cs)-1]
	c := f32s(out)
	if b.DType().IsQuantized() {
		// x @ wᵀ: every row of x (all batch entries) against every row of w.
		f, _ := b.DType().Format()
		k := b.Shape()[1]
		x := f32s(in[0])
		rows := len(c) / max(nn, 1)
		var xt []float32 // x's batch entries transposed to rows of K, for TransA
		if at.TransA {
			xt = make([]float32, rows*k)
		}
		prod := newQuantProduct(f, in[1], nn, k, rows, 1, nn)
		return func() error {
			fr := x
			if at.TransA {
				for i := 0; i < rows/mm; i++ {
					transpose(xt[i*mm*k:(i+1)*mm*k], x[i*mm*k:(i+1)*mm*k], k, mm)
				}
				fr = xt
			}
			return prod.run(fr, c)
		}, nil
	}
	// w @ y: the rows of w against the columns of each batch entry of y.
	f, _ := a.DType().Format()
	k := a.Shape()[1]
	y := f32s(in[1])
	batch := len(c) / max(mm*nn, 1)
	bs := b.Shape()
	yBatched := bs.Size() != k*nn // y broadcasts over the batch when it has none
	var yt []float32              // one entry of y as N rows of K, unless TransB or N == 1
	if !at.TransB && nn > 1 {
		yt = make([]float32, nn*k)
	}
	prod := newQuantProduct(f, in[0], mm, k, nn, nn, 1)
	return func() error {
		for i := range batch {
			yi := y[:k*nn]
			if yBatched {
				yi = y[i*k*nn : (i+1)*k*nn]
			}
			if yt != nil {
				transpose(yt, yi, k, nn)
				yi = yt
			}
			if err := prod.run(yi, c[i*mm*nn:(i+1)*mm*nn]); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// transpose writes src (rows × cols) into dst as cols × rows.
func transpose(dst, src []float32, rows, cols int) {
	for r := range rows {
		for j, v := range src[r*cols : (r+1)*cols] {
			dst[j*rows+r] = v
		}
	}
}

// quantProduct computes D = Q · Fᵀ for one quantised matrix Q (R rows of K) into an
// output with D[r][c] at out[r*rs + c*cs].
type quantProduct struct {
	f        quant.Format
	q        []byte
	r, k     int
	rowBytes int
	fRows    int // C, the rows of F
	rs, cs   int
	dot      qdot.Func
	vecs     []qdot.Vec // the rows of F prepared for the fused path
	panel    []float32  // decoded rows of Q for the SGEMM path
	prows    int        // rows per panel
}

func newQuantProduct(f quant.Format, q []byte, r, k, fRows, rs, cs int) *quantProduct {
	rb, _ := f.Bytes(k)
	p := &quantProduct{f: f, q: q, r: r, k: k, rowBytes: rb, fRows: fRows, rs: rs, cs: cs, dot: qdot.For(f)}
	if fRows <= fusedMaxRows {
		p.vecs = make([]qdot.Vec, fRows)
	}
	if fRows > fusedMaxRows && k > 0 {
		p.prows = min(r, max(16, panelBytes/(4*k)))
		p.panel = make([]float32, p.prows*k)
	}
	return p
}

// quantRowGrain is the least number of weights one goroutine decodes.
const quantRowGrain = 1 << 15

func (p *quantProduct) run(fr []float32, out []float32) error {
	if p.k == 0 {
		for r := range p.r {
			for c := range p.fRows {
				out[r*p.rs+c*p.cs] = 0
			}
		}
		return nil
	}
	if p.panel == nil {
		for c := range p.fRows {
			qdot.Prepare(fr[c*p.k:(c+1)*p.k], &p.vecs[c])
		}
		parallel.For(p.r, max(1, quantRowGrain/p.k), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				row := p.q[r*p.rowBytes : (r+1)*p.rowBytes]
				for c := range p.vecs {
					out[r*p.rs+c*p.cs] = p.dot(row, &p.vecs[c])
				}
			}
		})
		return nil
	}
	for r0 := 0; r0 < p.r; r0 += p.prows {
		pr := min(p.prows, p.r-r0)
		panel := p.panel[:pr*p.k]
		err := forEachRange(pr, max(1, quantRowGrain/p.k), func(lo, hi int) error {
			return p.f.Dequantize(panel[lo*p.k:hi*p.k], p.q[(r0+lo)*p.rowBytes:(r0+hi)*p.rowBytes])
		})
		if err != nil {
			return err
		}
		if p.rs == 1 { // out[c][r0 + j]: F (C×K) times the panel transposed
			err = gemm.Sgemm(false, true, p.fRows, pr, p.k, 1, fr, p.k, panel, p.k, 0, out[r0:], p.cs)
		} else { // out[r0 + j][c]: the panel times F transposed
			err = gemm.Sgemm(false, true, pr, p.fRows, p.k, 1, panel, p.k, fr, p.k, 0, out[r0*p.rs:], p.rs)
		}
		if err != nil {
			return fmt.Errorf("quantised product: %w", err)
		}
	}
	return nil
}

// dequantizeFactory prepares a Cast from a quantised type: decode to f32, then convert
// to the target float type.
func dequantizeFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	f, _ := n.Input(0).DType().Format()
	to := n.DType()
	count := n.Shape().Size()
	dst := out
	var post *halfCopy
	if isHalf(to) {
		dst = alignedBytes(4 * count)
		post = &halfCopy{to, u16s(out), f32s(dst)}
	}
	x := f32s(dst)
	bs, bb := f.BlockSize(), f.BlockBytes()
	return func() error {
		err := forEachRange(count/bs, max(1, elemGrain/bs), func(lo, hi int) error {
			return f.Dequantize(x[lo*bs:hi*bs], in[0][lo*bb:hi*bb])
		})
		if post != nil {
			post.store()
		}
		return err
	}, nil
}

// quantizeFactory prepares a Cast to a quantised type from a float type.
func quantizeFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	f, _ := n.DType().Format()
	from := n.Input(0).DType()
	count := n.Shape().Size()
	src := in[0]
	var pre *halfCopy
	if isHalf(from) {
		src = alignedBytes(4 * count)
		pre = &halfCopy{from, u16s(in[0]), f32s(src)}
	}
	x := f32s(src)
	bs, bb := f.BlockSize(), f.BlockBytes()
	return func() error {
		if pre != nil {
			pre.load()
		}
		return forEachRange(count/bs, max(1, elemGrain/bs), func(lo, hi int) error {
			return f.Quantize(out[lo*bb:hi*bb], x[lo*bs:hi*bs])
		})
	}, nil
}

// forEachRange is parallel.For with a body that can fail; it returns the first error.
func forEachRange(n, grain int, body func(lo, hi int) error) error {
	var mu sync.Mutex
	var first error
	parallel.For(n, grain, func(lo, hi int) {
		if err := body(lo, hi); err != nil {
			mu.Lock()
			if first == nil {
				first = err
			}
			mu.Unlock()
		}
	})
	return first
}
