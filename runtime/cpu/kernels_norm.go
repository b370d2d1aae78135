package cpu

import (
	"math"
	"sync"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// Softmax, log-softmax, layer and RMS normalisation. Sums and statistics accumulate in
// float64; exponentials are taken of the max-shifted value, so no input overflows.

func init() {
	register(tensor.OpSoftmax, floatTypes, softmaxKernel)
	register(tensor.OpLogSoftmax, floatTypes, softmaxKernel)
	register(tensor.OpLayerNorm, floatTypes, normKernel)
	register(tensor.OpRMSNorm, floatTypes, normKernel)
}

// rowGrain is the number of elements a goroutine should at least get in row-wise kernels.
const rowGrain = 1 << 14

// softmaxKernel computes softmax or log-softmax of x*scale + mask over one axis. x is
// viewed as (outer, axis, inner); each of the outer*inner rows (strided by inner) is
// independent.
func softmaxKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.SoftmaxAttr)
	shape := n.Shape()
	outer, dim, inner := shape[:at.Axis].Size(), shape[at.Axis], shape[at.Axis+1:].Size()
	X, Y := f32s(in[0]), f32s(out)
	log := n.Op() == tensor.OpLogSoftmax
	var mask []float32
	var maskOuter, maskInner []int
	maskStep := 0
	if len(in) == 2 {
		mask = f32s(in[1])
		st := broadcastStrides(shape, n.Input(1).Shape())
		maskOuter = offsets(shape[:at.Axis], st[:at.Axis])
		maskInner = offsets(shape[at.Axis+1:], st[at.Axis+1:])
		maskStep = st[at.Axis]
	}
	if dim == 0 {
		return func() error { return nil }, nil // no elements
	}
	maskOf := func(r int) []float32 {
		if mask == nil {
			return nil
		}
		return mask[maskOuter[r/inner]+maskInner[r%inner]:]
	}
	short := inner == 1 && dim <= shortSoftmaxRow
	// Scratch for each chunk of rows, taken from a pool of the kernel's own so that a
	// step allocates none: a block of padded rows and their shifts for short rows, or
	// exponentials to sum (log-softmax, strided rows).
	var scratch sync.Pool
	scratch.New = func() any {
		if short {
			pitch := (dim + 15) &^ 15
			block := max(1, shortSoftmaxFloats/pitch)
			return &softmaxScratch{e: make([]float32, block*pitch), shift: make([]float32, block)}
		}
		return &softmaxScratch{e: make([]float32, min(dim, 256))}
	}
	body := func(lo, hi int) { // made once: a closure made per run escapes to the heap
		s := scratch.Get().(*softmaxScratch)
		defer scratch.Put(s)
		if short {
			softmaxShortRows(X[lo*dim:hi*dim], Y[lo*dim:hi*dim], dim, lo, at.Scale, maskOf, maskStep, log, s)
			return
		}
		for r := lo; r < hi; r++ {
			base := (r/inner)*dim*inner + r%inner
			softmaxStrided(X[base:], Y[base:], dim, inner, at.Scale, maskOf(r), maskStep, log, s.e)
		}
	}
	return func() error {
		parallel.For(outer*inner, max(1, rowGrain/max(dim, 1)), body)
		return nil
	}, nil
}

// softmaxScratch is the scratch of one chunk of softmax rows.
type softmaxScratch struct{ e, shift []float32 }

// shortSoftmaxFloats is how many floats of exponentials softmaxShortRows takes at once:
// a block that stays in the L1 cache.
const shortSoftmaxFloats = 4096

// shortSoftmaxRow is the longest contiguous softmax row that softmaxShortRows takes: rows
// shorter than a vector or two leave most of their exponentials to the scalar code when
// taken one by one (a classifier's 10 logits: 44 ns an element instead of 1).
const shortSoftmaxRow = 64

// softmaxShortRows is softmaxStrided for contiguous rows of dim elements: rows first to
// first+len(x)/dim, scaled and masked (maskOf(r) the mask of row r, nil for none). It
// gathers the max-shifted values of a block of rows, each row padded to whole vectors of
// 16 lanes so that no vector mixes rows (a row's result does not depend on its
// neighbours, nor on where the threads split), and takes their exponentials in one call.
// s holds a block of padded rows (e) and their shifts.
func softmaxShortRows(x, y []float32, dim, first int, scale float32, maskOf func(r int) []float32, maskStep int, log bool, s *softmaxScratch) {
	pitch := (dim + 15) &^ 15
	rows := len(x) / dim
	block := min(rows, len(s.shift))
	e, shift := s.e, s.shift
	for b0 := 0; b0 < rows; b0 += block {
		nb := min(block, rows-b0)
		for i := range nb {
			r := b0 + i
			xr, yr, er := x[r*dim:(r+1)*dim], y[r*dim:(r+1)*dim], e[i*pitch:(i+1)*pitch]
			mr := maskOf(first + r)
			m := float32(math.Inf(-1))
			for a := range yr {
				z := xr[a] * scale
				if mr != nil {
					z += mr[a*maskStep]
				}
				yr[a] = z
				m = max(m, z)
			}
			for a, z := range yr {
				er[a] = z - m
			}
			clear(er[dim:]) // padding, whose exponentials are not used
			shift[i] = m
		}
		vec.Exp(e[:nb*pitch], e[:nb*pitch])
		for i := range nb {
			r := b0 + i
			yr, er := y[r*dim:(r+1)*dim], e[i*pitch:i*pitch+dim]
			var sum float64
			for _, v := range er {
				sum += float64(v)
			}
			if log {
				m, ls := shift[i], float32(math.Log(sum))
				for a := range yr {
					yr[a] = (yr[a] - m) - ls // as in softmaxStrided
				}
				continue
			}
			inv := float32(1 / sum)
			for a, v := range er {
				yr[a] = v * inv
			}
		}
	}
}

// softmaxStrided writes the softmax (or log-softmax) of z_a = x[a*stride]*scale +
// mask[a*maskStep] (no mask when nil), a < n, to y[a*stride]. y holds z between passes,
// so x and y may be the same memory. The sum accumulates in float64. buf is scratch for
// exponentials, of any length from 1.
func softmaxStrided(x, y []float32, n, stride int, scale float32, mask []float32, maskStep int, log bool, buf []float32) {
	if n == 0 {
		return
	}
	last := (n - 1) * stride
	x, y = x[:last+1], y[:last+1]
	m := float32(math.Inf(-1))
	for a, j := 0, 0; j <= last; a, j = a+1, j+stride {
		z := x[j] * scale
		if mask != nil {
			z += mask[a*maskStep]
		}
		y[j] = z
		if stride != 1 {
			m = max(m, z)
		}
	}
	if stride == 1 {
		m = vec.Max(y)
	}
	var sum float64
	switch {
	case stride == 1 && !log:
		sum = vec.ExpShiftSum(y, y, m)
	case stride == 1:
		for j := 0; j <= last; j += len(buf) {
			part := y[j:min(j+len(buf), last+1)]
			sum += vec.ExpShiftSum(buf[:len(part)], part, m)
		}
	default: // gathered into vectors for the vectorised exponential
		for a0 := 0; a0 < n; a0 += len(buf) {
			part := buf[:min(len(buf), n-a0)]
			for a := range part {
				part[a] = y[(a0+a)*stride]
			}
			sum += vec.ExpShiftSum(part, part, m)
			if !log {
				for a, e := range part {
					y[(a0+a)*stride] = e
				}
			}
		}
	}
	if log {
		// (z - m) - log Σ, not z - (m + log Σ): with logits of a thousand the sum
		// m + log Σ would round away the digits of a small result.
		ls := float32(math.Log(sum))
		for j := 0; j <= last; j += stride {
			y[j] = (y[j] - m) - ls
		}
		return
	}
	inv := float32(1 / sum)
	for j := 0; j <= last; j += stride {
		y[j] *= inv
	}
}

// normKernel computes layer or RMS normalisation over the trailing inner elements of
// each row, with optional gamma and beta of the inner shape.
func normKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.NormAttr)
	shape := n.Shape()
	inner := shape[at.Axes[0]:].Size()
	rows := shape[:at.Axes[0]].Size()
	X, Y := f32s(in[0]), f32s(out)
	var gamma, beta []float32
	if len(in) > 1 {
		gamma = f32s(in[1])
	}
	if len(in) > 2 {
		beta = f32s(in[2])
	}
	eps := float64(at.Eps)
	rms := n.Op() == tensor.OpRMSNorm
	// The rows' sums, a block of rows (in L1) at a time in one vec.SumEach call: Sum's
	// bits, without a call per row.
	sums := make([]float64, rows)
	block := max(1, 4096/max(inner, 1))
	body := func(lo, hi int) {
		for b := lo; b < hi; b += block {
			e := min(b+block, hi)
			if !rms {
				vec.SumEach(sums[b:e], X[b*inner:e*inner], inner)
			}
			for r := b; r < e; r++ {
				x, y := X[r*inner:(r+1)*inner], Y[r*inner:(r+1)*inner]
				mean := sums[r] / float64(inner) // 0 for RMS
				inv := 1 / math.Sqrt(vec.SqDev(x, mean)/float64(inner)+eps)
				vec.Normalize(y, x, gamma, beta, mean, inv)
			}
		}
	}
	return func() error {
		parallel.For(rows, max(1, rowGrain/max(inner, 1)), body)
		return nil
	}, nil
}

// attentionScratchFloats bounds the score scratch of one attention pass; the batch is
// processed in groups of items whose Tq×Tk score matrices fit in it.
const attentionScratchFloats = 1 << 22
