package nn

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// lossInfo describes a loss: its canonical name, whether its labels are class ids, and
// whether it is a classification loss (so that accuracy applies).
type lossInfo struct {
	name     string
	sparse   bool
	classify bool
}

// lossByName resolves a loss name, accepting Keras's long names.
func lossByName(name string) (lossInfo, error) {
	switch name {
	case "categorical_crossentropy", "categorical_cross_entropy", "cce":
		return lossInfo{"categorical_crossentropy", false, true}, nil
	case "sparse_categorical_crossentropy", "sparse_categorical_cross_entropy", "scce":
		return lossInfo{"sparse_categorical_crossentropy", true, true}, nil
	case "binary_crossentropy", "binary_cross_entropy", "bce":
		return lossInfo{"binary_crossentropy", false, true}, nil
	case "mse", "mean_squared_error":
		return lossInfo{"mse", false, false}, nil
	case "mae", "mean_absolute_error":
		return lossInfo{"mae", false, false}, nil
	case "huber", "huber_loss":
		return lossInfo{"huber", false, false}, nil
	}
	return lossInfo{}, fmt.Errorf("unknown loss %q (want categorical_crossentropy, sparse_categorical_crossentropy, binary_crossentropy, mse, mae or huber)", name)
}

// checkLoss reports a head/label combination that cannot be right, saying why.
// pred is the head's sample spec, act its final activation, y the label sample spec.
func checkLoss(head string, li lossInfo, pred Spec, act string, y Spec) error {
	classes := 1
	if pred.Shape.Rank() > 0 {
		classes = pred.Shape[pred.Shape.Rank()-1]
	}
	switch li.name {
	case "sparse_categorical_crossentropy":
		if y.Shape.Equal(pred.Shape) && classes > 1 {
			return fmt.Errorf("output %s: labels %v look one-hot; sparse_categorical_crossentropy wants class ids (use categorical_crossentropy for one-hot labels)", head, y)
		}
		if pred.Shape.Rank() != 1 || classes < 2 {
			return fmt.Errorf("output %s: sparse_categorical_crossentropy needs a (classes) output with at least 2 classes, have %v", head, pred)
		}
		if y.Shape.Size() != 1 {
			return fmt.Errorf("output %s: sparse_categorical_crossentropy wants one class id per sample, have labels %v", head, y)
		}
	case "categorical_crossentropy":
		if y.DType.IsInt() && !y.Shape.Equal(pred.Shape) {
			return fmt.Errorf("output %s: labels %v are class ids; categorical_crossentropy wants one-hot labels of shape %v (use sparse_categorical_crossentropy for class ids)", head, y, pred.Shape)
		}
	case "binary_crossentropy":
		if act == "softmax" && classes > 1 {
			return fmt.Errorf("output %s: binary_crossentropy on a softmax head over %d classes: the classes compete, so use categorical_crossentropy (or sparse_categorical_crossentropy), or a sigmoid head for independent labels", head, classes)
		}
	default:
		if y.DType.IsInt() {
			return fmt.Errorf("output %s: %s on int labels %v: int labels are class ids, so use sparse_categorical_crossentropy for classification, or give float targets for regression", head, li.name, y)
		}
	}
	if li.name != "sparse_categorical_crossentropy" && !y.Shape.Equal(pred.Shape) && !(y.Shape.Size() == pred.Shape.Size()) {
		return fmt.Errorf("output %s: %s needs labels shaped like the output %v, have %v", head, li.name, pred.Shape, y.Shape)
	}
	return nil
}

// checkHeadShape reports a head that a categorical cross-entropy cannot score: one
// whose samples are not vectors of class scores.
func checkHeadShape(out *Node, li lossInfo) error {
	if (li.name != "sparse_categorical_crossentropy" && li.name != "categorical_crossentropy") || out.spec.Shape.Rank() <= 1 {
		return nil
	}
	why := ""
	if _, ok := out.layer.(*dense); ok {
		why = " (Dense acts on the last axis only, so after a convolution it keeps the other axes)"
	}
	return fmt.Errorf("output %s is not flat: it gives %s per batch%s, and %s needs one vector of class scores per sample: "+
		"put nn.Flatten() or nn.GlobalAveragePooling2D() before the last Dense layer", out.layer.Name(), batchShape(out), why, li.name)
}

// elementLoss emits the unreduced loss: shape (batch) for the cross-entropies over
// classes, the output's shape for binary cross-entropy and the regression losses.
// lg holds the pre-activation of softmax and sigmoid heads (pre nil otherwise).
func elementLoss(li lossInfo, pred *tensor.Node, lg logit, y *tensor.Node) *tensor.Node {
	switch li.name {
	case "sparse_categorical_crossentropy", "categorical_crossentropy":
		classes := pred.Shape()[pred.Shape().Rank()-1]
		oh := y
		if li.sparse {
			oh = tensor.OneHot(flatLabels(y), classes, tensor.F32)
		}
		var logp *tensor.Node
		if lg.pre != nil && lg.act == "softmax" {
			logp = tensor.LogSoftmax(lg.pre, -1)
		} else {
			logp = tensor.Log(tensor.Clamp(pred, 1e-7, 1))
		}
		return tensor.Neg(tensor.Sum(tensor.Mul(oh, logp), []int{-1}, false))
	case "binary_crossentropy":
		if lg.pre != nil && lg.act == "sigmoid" {
			z := lg.pre
			// max(z, 0) - z*y + log(1 + exp(-|z|)), stable for any z.
			soft := tensor.Log(tensor.AddScalar(tensor.Exp(tensor.Neg(tensor.Abs(z))), 1))
			return tensor.Add(tensor.Sub(tensor.Relu(z), tensor.Mul(z, y)), soft)
		}
		p := tensor.Clamp(pred, 1e-7, 1-1e-7)
		one := tensor.Mul(y, tensor.Log(p))
		zero := tensor.Mul(tensor.Neg(tensor.AddScalar(y, -1)), tensor.Log(tensor.Neg(tensor.AddScalar(p, -1))))
		return tensor.Neg(tensor.Add(one, zero))
	case "mse":
		return tensor.Square(tensor.Sub(pred, y))
	case "mae":
		return tensor.Abs(tensor.Sub(pred, y))
	default: // huber, delta 1: 0.5*q² + (|d| - q) with q = min(|d|, 1)
		a := tensor.Abs(tensor.Sub(pred, y))
		q := tensor.Minimum(a, tensor.OnesLike(a))
		return tensor.Add(tensor.MulScalar(tensor.Square(q), 0.5), tensor.Sub(a, q))
	}
}

// flatLabels returns class ids as I64 (batch), reshaping or casting only when needed
// (backends need not run integer reshapes).
func flatLabels(y *tensor.Node) *tensor.Node {
	if y.Shape().Rank() != 1 {
		y = tensor.Reshape(y, y.Shape()[0])
	}
	if y.DType() != tensor.I64 {
		y = tensor.Cast(y, tensor.I64)
	}
	return y
}

// weightedMean reduces an element loss to a scalar: the mean of loss × weight, where
// weight (nil for none) is per sample (batch) or per element (the loss's shape).
func weightedMean(loss, weight *tensor.Node) *tensor.Node {
	if weight != nil {
		if weight.Shape().Rank() == 1 && loss.Shape().Rank() > 1 {
			shape := make([]int, loss.Shape().Rank())
			for i := range shape {
				shape[i] = 1
			}
			shape[0] = weight.Shape()[0]
			weight = tensor.Reshape(weight, shape...)
		}
		loss = tensor.Mul(loss, weight)
	}
	return tensor.Mean(loss, nil, false)
}

// metricNode emits a batch-mean metric for a head: accuracy (by the head's loss kind),
// mae or mse.
func metricNode(metric string, li lossInfo, pred *tensor.Node, lg logit, y *tensor.Node) (*tensor.Node, error) {
	switch metric {
	case "accuracy", "acc":
		if !li.classify {
			return nil, fmt.Errorf("accuracy needs a classification loss, the output uses %s", li.name)
		}
		var hit *tensor.Node
		scores := pred
		if lg.pre != nil {
			scores = lg.pre
		}
		switch li.name {
		case "sparse_categorical_crossentropy":
			hit = tensor.Equal(tensor.ArgMax(scores, -1, false), flatLabels(y))
		case "categorical_crossentropy":
			hit = tensor.Equal(tensor.ArgMax(scores, -1, false), tensor.ArgMax(y, -1, false))
		default:
			threshold := 0.5
			if lg.pre != nil && lg.act == "sigmoid" {
				threshold = 0
			}
			hit = tensor.Not(tensor.Xor(tensor.Greater(scores, tensor.AddScalar(tensor.ZerosLike(scores), threshold)), tensor.Greater(y, tensor.AddScalar(tensor.ZerosLike(y), 0.5))))
		}
		return tensor.Mean(tensor.Cast(hit, tensor.F32), nil, false), nil
	case "mae", "mean_absolute_error":
		return tensor.Mean(tensor.Abs(tensor.Sub(pred, y)), nil, false), nil
	case "mse", "mean_squared_error":
		return tensor.Mean(tensor.Square(tensor.Sub(pred, y)), nil, false), nil
	}
	return nil, fmt.Errorf("unknown metric %q (want accuracy, mae or mse)", metric)
}

// knownMetric reports a metric name nn does not offer.
func knownMetric(m string) error {
	switch metricName(m) {
	case "accuracy", "mae", "mse":
		return nil
	}
	return fmt.Errorf("unknown metric %q (want accuracy, mae or mse)", m)
}

// metricName is the History key of a metric.
func metricName(m string) string {
	switch m {
	case "acc":
		return "accuracy"
	case "mean_absolute_error":
		return "mae"
	case "mean_squared_error":
		return "mse"
	}
	return m
}
