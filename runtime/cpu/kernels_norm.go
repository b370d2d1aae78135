package cpu

import (
	"math"

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
		var buf [256]float32
		for j := 0; j <= last; j += len(buf) {
			part := y[j:min(j+len(buf), last+1)]
			sum += vec.ExpShiftSum(buf[:len(part)], part, m)
		}
	default: // gathered into vectors for the vectorised exponential
		var buf [256]float32
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
	return func() error {
		parallel.For(rows, max(1, rowGrain/max(inner, 1)), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				x, y := X[r*inner:(r+1)*inner], Y[r*inner:(r+1)*inner]
				var mean float64
				if !rms {
					mean = vec.Sum(x) / float64(inner)
				}
				inv := 1 / math.Sqrt(vec.SqDev(x, mean)/float64(inner)+eps)
				vec.Normalize(y, x, gamma, beta, mean, inv)
			}
		})
		return nil
	}, nil
}

// attentionScratchFloats bounds the score scratch of one attention pass; the batch is
// processed in groups of items whose Tq×Tk score matrices fit in it.
const attentionScratchFloats = 1 << 22
