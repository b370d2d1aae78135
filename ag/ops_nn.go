package ag

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Softmax normalises x along axis into probabilities (the fused engine op).
func Softmax(x *Tensor, axis int) *Tensor {
	return unary("softmax", x, func(n *tensor.Node) *tensor.Node { return tensor.Softmax(n, axis) })
}

// LogSoftmax is log(Softmax(x, axis)), computed stably (the fused engine op).
func LogSoftmax(x *Tensor, axis int) *Tensor {
	return unary("log_softmax", x, func(n *tensor.Node) *tensor.Node { return tensor.LogSoftmax(n, axis) })
}

// LayerNorm normalises x over its last axis to zero mean and unit variance, then scales
// by gamma and shifts by beta (each shaped like the last axis; nil skips it).
func LayerNorm(x, gamma, beta *Tensor, eps float64) *Tensor {
	in, at := affineInputs(x, gamma, beta)
	return record("layer_norm", func(n []*tensor.Node) *tensor.Node {
		g, b := at(n)
		return tensor.LayerNorm(n[0], g, b, []int{-1}, float32(eps))
	}, in...)
}

// RMSNorm scales x by the reciprocal root mean square of its last axis, then by gamma
// (nil skips it).
func RMSNorm(x, gamma *Tensor, eps float64) *Tensor {
	in, at := affineInputs(x, gamma, nil)
	return record("rms_norm", func(n []*tensor.Node) *tensor.Node {
		g, _ := at(n)
		return tensor.RMSNorm(n[0], g, []int{-1}, float32(eps))
	}, in...)
}

// affineInputs lists x and the non-nil of gamma and beta, and returns a function that
// picks their nodes back out (nil where absent).
func affineInputs(x, gamma, beta *Tensor) ([]*Tensor, func([]*tensor.Node) (g, b *tensor.Node)) {
	in := []*Tensor{x}
	gi, bi := -1, -1
	if gamma != nil {
		gi = len(in)
		in = append(in, gamma)
	}
	if beta != nil {
		bi = len(in)
		in = append(in, beta)
	}
	return in, func(n []*tensor.Node) (g, b *tensor.Node) {
		if gi >= 0 {
			g = n[gi]
		}
		if bi >= 0 {
			b = n[bi]
		}
		return g, b
	}
}

// Dropout zeroes each element of x with probability rate and scales the others by
// 1/(1-rate). Each call draws a new seed from the tape; the mask is a function of that
// seed, so recomputing the op (a checkpoint, a replayed recipe) gives the same mask.
// Layers apply it only in training mode (see the Dropout layer).
func Dropout(x *Tensor, rate float64) *Tensor {
	if rate < 0 || rate >= 1 {
		fail("dropout", "rate %v outside [0, 1)", rate)
	}
	if rate == 0 {
		return x
	}
	seed := seedTensor(tapeOf("dropout", []*Tensor{x}))
	return record("dropout", func(in []*tensor.Node) *tensor.Node { return tensor.Dropout(in[0], in[1], float32(rate)) }, x, seed)
}

// Conv2D convolves x (N, C, H, W) with weights w (O, C/groups, kH, kW); the options set
// stride, dilation, padding and groups (stride 1, no padding by default).
func Conv2D(x, w *Tensor, opts ...tensor.ConvOptions) *Tensor {
	return binOp("conv2d", x, w, func(a, b *tensor.Node) *tensor.Node { return tensor.Conv2D(a, b, opts...) })
}

// MaxPool2D takes the maximum of each k×k window of x (N, C, H, W), moved by stride.
func MaxPool2D(x *Tensor, k, stride int) *Tensor {
	return unary("max_pool2d", x, func(n *tensor.Node) *tensor.Node { return tensor.MaxPool2D(n, k, stride) })
}

// AvgPool2D averages each k×k window of x (N, C, H, W), moved by stride.
func AvgPool2D(x *Tensor, k, stride int) *Tensor {
	return unary("avg_pool2d", x, func(n *tensor.Node) *tensor.Node { return tensor.AvgPool2D(n, k, stride) })
}

// GlobalAvgPool averages x (N, C, spatial...) over its spatial axes to (N, C).
func GlobalAvgPool(x *Tensor) *Tensor {
	return unary("global_avg_pool", x, tensor.GlobalAvgPool)
}

// FlashAttention is fused scaled dot-product attention over all heads at once:
// softmax(q·kᵀ/√D + mask)·v for q (B, H, Tq, D), k (B, H, Tk, D), v (B, H, Tk, Dv),
// computed tile by tile without a Tq×Tk matrix in memory, forward and backward. With
// causal, query i sees keys j <= i. mask (nil for none) broadcasts to (B, H, Tq, Tk):
// additive (0 where allowed, -Inf where not) when floating point, or Bool (true where
// allowed). A mask shaped (Tk, Tq) for Tq != Tk is rejected: queries are rows.
func FlashAttention(q, k, v, mask *Tensor, causal bool) *Tensor {
	const op = "flash_attention"
	for _, x := range []*Tensor{q, k, v} {
		if x == nil || x.Rank() != 4 {
			fail(op, "q, k and v must be (batch, heads, time, dim); have %s", shapes(q, k, v))
		}
	}
	tq, tk := q.shape[2], k.shape[2]
	in := []*Tensor{q, k, v}
	if mask != nil {
		r := mask.Rank()
		if r < 2 {
			fail(op, "the mask %v must have at least two axes (Tq, Tk) = (%d, %d)", mask.shape, tq, tk)
		}
		mq, mk := mask.shape[r-2], mask.shape[r-1]
		if tq != tk && mq == tk && mk == tq {
			fail(op, "the mask is %v: (Tk, Tq) = (%d, %d), transposed; queries are rows, so it must end in (Tq, Tk) = (%d, %d)", mask.shape, mq, mk, tq, tk)
		}
		if (mq != tq && mq != 1) || (mk != tk && mk != 1) {
			fail(op, "the mask %v does not broadcast to (Tq, Tk) = (%d, %d)", mask.shape, tq, tk)
		}
		in = append(in, mask)
	}
	return record(op, func(n []*tensor.Node) *tensor.Node {
		var m *tensor.Node
		if len(n) == 4 {
			m = n[3]
			if m.DType() == tensor.Bool {
				g := m.Graph()
				m = tensor.Where(m, g.Scalar(n[0].DType(), 0), g.Scalar(n[0].DType(), math.Inf(-1)))
			} else if m.DType() != n[0].DType() {
				m = tensor.Cast(m, n[0].DType())
			}
		}
		return tensor.Attention(n[0], n[1], n[2], m, tensor.AttentionAttr{Causal: causal})
	}, in...)
}

// shapes formats tensors' shapes for messages.
func shapes(xs ...*Tensor) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		if x == nil {
			s += "nil"
		} else {
			s += x.dtype.String() + x.shape.String()
		}
	}
	return s
}

// Losses, each the mean over the batch of the engine's composite loss.

// MSE is the mean squared error between pred and y (same shape).
func MSE(pred, y *Tensor) *Tensor { return binOp("mse", pred, y, tensor.MSE) }

// MAE is the mean absolute error between pred and y (same shape).
func MAE(pred, y *Tensor) *Tensor { return binOp("mae", pred, y, tensor.MAE) }

// Huber is the mean Huber loss: ½d² where |d| <= delta, delta·(|d| - ½delta) beyond.
func Huber(pred, y *Tensor, delta float64) *Tensor {
	return binOp("huber", pred, y, func(a, b *tensor.Node) *tensor.Node { return tensor.Huber(a, b, float32(delta)) })
}

// CrossEntropy is the mean softmax cross-entropy of logits (..., C) against labels: class
// ids (integers, shaped like logits without the last axis) or probabilities (floats,
// shaped like logits).
func CrossEntropy(logits, labels *Tensor) *Tensor {
	if labels.dtype.IsInt() {
		return binOp("cross_entropy", logits, labels, tensor.SparseSoftmaxCrossEntropy)
	}
	return binOp("cross_entropy", logits, labels, func(a, b *tensor.Node) *tensor.Node {
		return tensor.SoftmaxCrossEntropy(a, b, -1)
	})
}

// BinaryCrossEntropy is the mean binary cross-entropy of probabilities probs against
// targets y in [0, 1] (same shape).
func BinaryCrossEntropy(probs, y *Tensor) *Tensor {
	return binOp("binary_cross_entropy", probs, y, tensor.BinaryCrossEntropy)
}

// BinaryCrossEntropyWithLogits is BinaryCrossEntropy of sigmoid(logits), computed stably.
func BinaryCrossEntropyWithLogits(logits, y *Tensor) *Tensor {
	return binOp("binary_cross_entropy_with_logits", logits, y, tensor.BinaryCrossEntropyWithLogits)
}

// Accuracy is the fraction of rows of logits (..., C) whose largest entry is at the
// label's class (integer labels), as an F32 scalar with no gradient.
func Accuracy(logits, labels *Tensor) *Tensor {
	return binOp("accuracy", logits, labels, func(a, b *tensor.Node) *tensor.Node {
		hit := tensor.Equal(tensor.ArgMax(a, -1, false), tensor.Cast(b, tensor.I64))
		return tensor.Mean(tensor.Cast(hit, tensor.F32), nil, false)
	})
}
