package cpu

import (
	"math"

	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

// Softmax, layer and RMS normalisation, attention and rotary embedding. Sums and
// statistics accumulate in float64; exponentials are taken of the max-shifted value, so
// no input overflows.

func init() {
	register(tensor.OpSoftmax, floatTypes, softmaxKernel)
	register(tensor.OpLogSoftmax, floatTypes, softmaxKernel)
	register(tensor.OpLayerNorm, floatTypes, normKernel)
	register(tensor.OpRMSNorm, floatTypes, normKernel)
	register(tensor.OpAttention, floatTypes, attentionKernel)
	register(tensor.OpRoPE, floatTypes, ropeKernel)
}

// rowGrain is the number of elements a goroutine should at least get in row-wise kernels.
const rowGrain = 1 << 14

// offsets lists, in row-major order of shape, the offset Σ index[i]*strides[i] of every
// multi-index.
func offsets(shape tensor.Shape, strides []int) []int {
	out := make([]int, shape.Size())
	idx := make([]int, len(shape))
	off := 0
	for k := range out {
		out[k] = off
		for i := len(shape) - 1; i >= 0; i-- {
			idx[i]++
			off += strides[i]
			if idx[i] < shape[i] {
				break
			}
			off -= idx[i] * strides[i]
			idx[i] = 0
		}
	}
	return out
}

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
	return func() error {
		parallel.For(outer*inner, max(1, rowGrain/max(dim, 1)), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				o, i := r/inner, r%inner
				base := o*dim*inner + i
				var m []float32
				if mask != nil {
					m = mask[maskOuter[o]+maskInner[i]:]
				}
				softmaxStrided(X[base:], Y[base:], dim, inner, at.Scale, m, maskStep, log)
			}
		})
		return nil
	}, nil
}

// softmaxStrided writes the softmax (or log-softmax) of z_a = x[a*stride]*scale +
// mask[a*maskStep] (no mask when nil), a < n, to y[a*stride]. y holds z between passes,
// so x and y may be the same memory. The sum accumulates in float64.
func softmaxStrided(x, y []float32, n, stride int, scale float32, mask []float32, maskStep int, log bool) {
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
		m = max(m, z)
	}
	var sum float64
	for j := 0; j <= last; j += stride {
		e := expf(y[j] - m)
		sum += float64(e)
		if !log {
			y[j] = e
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
	return func() error {
		parallel.For(rows, max(1, rowGrain/max(inner, 1)), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				x, y := X[r*inner:(r+1)*inner], Y[r*inner:(r+1)*inner]
				var mean, ss float64
				if !rms {
					for _, v := range x {
						mean += float64(v)
					}
					mean /= float64(inner)
				}
				for _, v := range x {
					d := float64(v) - mean
					ss += d * d
				}
				inv := 1 / math.Sqrt(ss/float64(inner)+eps)
				for j, v := range x {
					o := (float64(v) - mean) * inv
					if gamma != nil {
						o *= float64(gamma[j])
					}
					if beta != nil {
						o += float64(beta[j])
					}
					y[j] = float32(o)
				}
			}
		})
		return nil
	}, nil
}

// attentionScratchFloats bounds the score scratch of one attention pass; the batch is
// processed in groups of items whose Tq×Tk score matrices fit in it.
const attentionScratchFloats = 1 << 22

// attentionKernel computes softmax(q kᵀ * scale + mask) v for groups of (batch, head)
// items: one strided GEMM for the scores of a group, a row-parallel masked softmax, and
// one strided GEMM into the output.
func attentionKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.AttentionAttr)
	qs, ks, vs := n.Input(0).Shape(), n.Input(1).Shape(), n.Input(2).Shape()
	r := qs.Rank()
	lead := qs[:r-2]
	batch, tq, d, tk, dv := lead.Size(), qs[r-2], qs[r-1], ks[r-2], vs[r-1]
	Q, K, V, O := f32s(in[0]), f32s(in[1]), f32s(in[2]), f32s(out)
	var mask []float32
	var maskBatch []int
	var maskRow, maskCol int
	if len(in) == 4 {
		mask = f32s(in[3])
		st := broadcastStrides(append(lead.Clone(), tq, tk), n.Input(3).Shape())
		maskBatch = offsets(lead, st[:r-2])
		maskRow, maskCol = st[r-2], st[r-1]
	}
	group := max(1, min(batch, attentionScratchFloats/max(tq*tk, 1)))
	scores := make([]float32, group*tq*tk)
	return func() error {
		if tq == 0 || batch == 0 {
			return nil
		}
		if tk == 0 || dv == 0 {
			clear(O)
			return nil
		}
		for b0 := 0; b0 < batch; b0 += group {
			g := min(group, batch-b0)
			if d == 0 {
				clear(scores) // no features: every score is 0
			} else if err := gemm.SgemmStrided(false, true, tq, tk, d, at.Scale, Q[b0*tq*d:], d, tq*d,
				K[b0*tk*d:], d, tk*d, 0, scores, tk, tq*tk, g); err != nil {
				return err
			}
			parallel.For(g*tq, max(1, rowGrain/tk), func(lo, hi int) {
				for row := lo; row < hi; row++ {
					b, i := row/tq, row%tq
					s := scores[row*tk : (row+1)*tk]
					if mask != nil {
						mrow := mask[maskBatch[b0+b]+i*maskRow:]
						for j := range s {
							s[j] += mrow[j*maskCol]
						}
					}
					visible := tk
					if at.Causal {
						visible = min(tk, i+1) // query i sees keys j <= i
					}
					softmaxRow(s, visible)
				}
			})
			if err := gemm.SgemmStrided(false, false, tq, dv, tk, 1, scores, tk, tq*tk,
				V[b0*tk*dv:], dv, tk*dv, 0, O[b0*tq*dv:], dv, tq*dv, g); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// softmaxRow replaces s[:visible] by its softmax and zeroes the rest; a row with no
// visible entry becomes NaN, as the additive -Inf composition gives.
func softmaxRow(s []float32, visible int) {
	if visible == 0 {
		for j := range s {
			s[j] = float32(math.NaN())
		}
		return
	}
	softmaxStrided(s, s, visible, 1, 1, nil, 0, false)
	clear(s[visible:])
}

// ropeKernel rotates feature pairs (2i, 2i+1), i < Dims/2, of every (…, t, :) row by
// float32(pos[t])*freq[i]. The cos/sin table is rebuilt each run from the positions.
func ropeKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.RoPEAttr)
	shape := n.Shape()
	r := shape.Rank()
	t, d, half := shape[r-2], shape[r-1], at.Dims/2
	rows := shape[:r-1].Size()
	X, Y := f32s(in[0]), f32s(out)
	pos := indexReader(n.Input(1).DType(), in[1])
	freq := tensor.RoPEFrequencies(at.Base, at.Dims)
	cos, sin := make([]float32, t*half), make([]float32, t*half)
	return func() error {
		for p := 0; p < t; p++ {
			fp := float32(pos(p))
			for i, f := range freq {
				theta := float64(fp * f)
				cos[p*half+i], sin[p*half+i] = float32(math.Cos(theta)), float32(math.Sin(theta))
			}
		}
		parallel.For(rows, max(1, rowGrain/max(d, 1)), func(lo, hi int) {
			for row := lo; row < hi; row++ {
				x, y := X[row*d:(row+1)*d], Y[row*d:(row+1)*d]
				c, s := cos[(row%t)*half:], sin[(row%t)*half:]
				for i := 0; i < half; i++ {
					x0, x1 := x[2*i], x[2*i+1]
					y[2*i] = x0*c[i] - x1*s[i]
					y[2*i+1] = x0*s[i] + x1*c[i]
				}
				copy(y[at.Dims:], x[at.Dims:])
			}
		})
		return nil
	}, nil
}
