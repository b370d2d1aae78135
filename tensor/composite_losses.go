package tensor

import "fmt"

// Losses, written as compositions of primitive ops so autodiff needs no rules of its own.
// Each ...PerSample form returns one value per sample (shape [batch] for the usual
// [batch, features] inputs: the mean over every axis after the first), so callers can
// weight samples or classes; the plain form is the mean over the batch.

// probEps keeps logarithms of probabilities finite, as Keras does.
const probEps = 1e-7

// checkSameShape panics with an *Error naming op unless a and b agree in dtype and
// shape: losses do not broadcast, since a [B, 1] prediction against [B] labels would
// silently broadcast to [B, B].
func checkSameShape(op string, a, b *Node) {
	if a.dtype != b.dtype || !a.shape.Equal(b.shape) {
		panic(&Error{Op: op, Err: fmt.Errorf("prediction and target must have the same dtype and shape: %s", shapesOf([]*Node{a, b}))})
	}
	if !a.dtype.IsFloat() {
		panic(&Error{Op: op, Err: fmt.Errorf("needs floating-point inputs, have %s", shapesOf([]*Node{a, b}))})
	}
}

// perSampleMean averages x over every axis after the first; a rank-0 or rank-1 x is
// returned as it is.
func perSampleMean(x *Node) *Node {
	if x.shape.Rank() <= 1 {
		return x
	}
	axes := make([]int, x.shape.Rank()-1)
	for i := range axes {
		axes[i] = i + 1
	}
	return Mean(x, axes, false)
}

// batchMean is the mean of per-sample losses as a rank-0 scalar.
func batchMean(x *Node) *Node { return Mean(x, nil, false) }

// SoftmaxCrossEntropyPerSample is -Σ labels·log softmax(logits) along axis, one value
// per position of the other axes.
func SoftmaxCrossEntropyPerSample(logits, labelsOneHot *Node, axis int) *Node {
	checkSameShape("softmax_cross_entropy", logits, labelsOneHot)
	return Neg(Sum(Mul(labelsOneHot, LogSoftmax(logits, axis)), []int{axis}, false))
}

// SoftmaxCrossEntropy is the mean of SoftmaxCrossEntropyPerSample.
func SoftmaxCrossEntropy(logits, labelsOneHot *Node, axis int) *Node {
	return batchMean(SoftmaxCrossEntropyPerSample(logits, labelsOneHot, axis))
}

// SparseSoftmaxCrossEntropyPerSample is -log softmax(logits)[label] for logits [..., C]
// and integer class labels [...] in [0, C).
func SparseSoftmaxCrossEntropyPerSample(logits, labels *Node) *Node {
	r := logits.shape.Rank()
	if !labels.dtype.IsInt() || r == 0 || !labels.shape.Equal(logits.shape[:r-1]) {
		panic(&Error{Op: "sparse_softmax_cross_entropy", Err: fmt.Errorf("needs logits [..., C] and i32/i64 labels [...], have %s", shapesOf([]*Node{logits, labels}))})
	}
	picked := TakeAlong(LogSoftmax(logits, -1), Unsqueeze(labels, -1), -1)
	return Neg(Squeeze(picked, -1))
}

// SparseSoftmaxCrossEntropy is the mean of SparseSoftmaxCrossEntropyPerSample.
func SparseSoftmaxCrossEntropy(logits, labels *Node) *Node {
	return batchMean(SparseSoftmaxCrossEntropyPerSample(logits, labels))
}

// CrossEntropyPerSample is -Σ labels·log(probs) over the last axis, with probabilities
// clamped to [1e-7, 1] so a zero probability gives a large finite loss.
func CrossEntropyPerSample(probs, labelsOneHot *Node) *Node {
	checkSameShape("cross_entropy", probs, labelsOneHot)
	return Neg(Sum(Mul(labelsOneHot, Log(Clamp(probs, probEps, 1))), []int{-1}, false))
}

// CrossEntropy is the mean of CrossEntropyPerSample.
func CrossEntropy(probs, labelsOneHot *Node) *Node {
	return batchMean(CrossEntropyPerSample(probs, labelsOneHot))
}

// BinaryCrossEntropyPerSample is the mean over the non-batch axes of
// -(y·log p + (1-y)·log(1-p)), with p clamped to [1e-7, 1-1e-7].
func BinaryCrossEntropyPerSample(probs, y *Node) *Node {
	checkSameShape("binary_cross_entropy", probs, y)
	p := Clamp(probs, probEps, 1-probEps)
	one := OnesLike(y)
	l := Add(Mul(y, Log(p)), Mul(Sub(one, y), Log(Sub(OnesLike(p), p))))
	return Neg(perSampleMean(l))
}

// BinaryCrossEntropy is the mean of BinaryCrossEntropyPerSample.
func BinaryCrossEntropy(probs, y *Node) *Node {
	return batchMean(BinaryCrossEntropyPerSample(probs, y))
}

// BinaryCrossEntropyWithLogitsPerSample is BinaryCrossEntropyPerSample of sigmoid(logits),
// computed stably as max(x, 0) - x·y + log(1 + e^-|x|).
func BinaryCrossEntropyWithLogitsPerSample(logits, y *Node) *Node {
	checkSameShape("binary_cross_entropy_with_logits", logits, y)
	l := Add(Sub(Relu(logits), Mul(logits, y)), Softplus(Neg(Abs(logits))))
	return perSampleMean(l)
}

// BinaryCrossEntropyWithLogits is the mean of BinaryCrossEntropyWithLogitsPerSample.
func BinaryCrossEntropyWithLogits(logits, y *Node) *Node {
	return batchMean(BinaryCrossEntropyWithLogitsPerSample(logits, y))
}

// MSEPerSample is the mean squared error over the non-batch axes.
func MSEPerSample(pred, y *Node) *Node {
	checkSameShape("mse", pred, y)
	return perSampleMean(Square(Sub(pred, y)))
}

// MSE is the mean squared error.
func MSE(pred, y *Node) *Node { return batchMean(MSEPerSample(pred, y)) }

// MAEPerSample is the mean absolute error over the non-batch axes.
func MAEPerSample(pred, y *Node) *Node {
	checkSameShape("mae", pred, y)
	return perSampleMean(Abs(Sub(pred, y)))
}

// MAE is the mean absolute error.
func MAE(pred, y *Node) *Node { return batchMean(MAEPerSample(pred, y)) }

// HuberPerSample is the mean over the non-batch axes of ½d² where |d| <= delta and
// delta·(|d| - ½delta) elsewhere, d = pred - y. It is written as ½q² + delta·(|d| - q)
// with q = min(|d|, delta), which is the same function with a continuous gradient.
func HuberPerSample(pred, y *Node, delta float32) *Node {
	checkSameShape("huber", pred, y)
	if !(delta > 0) {
		panic(&Error{Op: "huber", Err: fmt.Errorf("delta %v must be positive", delta)})
	}
	a := Abs(Sub(pred, y))
	q := Clamp(a, 0, delta)
	l := Add(Scale(Square(q), 0.5), Scale(Sub(a, q), delta))
	return perSampleMean(l)
}

// Huber is the mean Huber loss.
func Huber(pred, y *Node, delta float32) *Node { return batchMean(HuberPerSample(pred, y, delta)) }
