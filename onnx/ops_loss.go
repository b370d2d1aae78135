package onnx

import (
	"github.com/gml-dev/gml/tensor"
)

// Loss operators: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, compositions of
// a log-softmax, a pick along the class axis, the class weights and a reduction.

func init() {
	register(12, lowerNLLLoss, "NegativeLogLikelihoodLoss")
	register(12, lowerSCELoss, "SoftmaxCrossEntropyLoss")
}

// lowerNLLLoss: input (N, C, d...) of log-probabilities, target (N, d...) of classes,
// optional weight (C).
func lowerNLLLoss(c *ctx) {
	c.requireFloat(0)
	c.set(0, nllLoss(c, c.x(0)), c.dtype(0))
}

// lowerSCELoss: the NLL loss of the scores' log-softmax over the class axis, which is
// also the optional second output.
func lowerSCELoss(c *ctx) {
	c.requireFloat(0)
	logp := tensor.LogSoftmax(c.x(0), 1)
	c.set(0, nllLoss(c, logp), c.dtype(0))
	if c.wants(1) {
		c.set(1, logp, c.dtype(0))
	}
}

// nllLoss is -logp[n, target[n, d...], d...] times the target's class weight, zero where
// the target is ignore_index, reduced by the reduction attribute: none, sum, or mean
// (the sum divided by the sum of the weights that took part).
func nllLoss(c *ctx, logp *tensor.Node) *tensor.Node {
	if c.rank(0) < 2 {
		c.failf("input has shape %v, want (N, C, d...)", c.shape(0))
	}
	want := append(tensor.Shape{c.shape(0)[0]}, c.shape(0)[2:]...)
	if !c.dtype(1).Carrier().IsInt() || !c.shape(1).Equal(want) {
		c.failf("target is %v of shape %v, want integers of shape %v", c.dtype(1), c.shape(1), want)
	}
	dt := logp.DType()
	target := c.x(1)
	var w, keep *tensor.Node // per-element weight; where the target counts
	if a := c.attr("ignore_index"); a != nil {
		keep = tensor.NotEqual(target, c.scalar(target.DType(), float64(c.attrInt("ignore_index", 0))))
		// An ignored target may be out of the class range: pick class 0 there instead.
		target = tensor.Where(keep, target, c.scalar(target.DType(), 0))
	}
	if c.has(2) {
		if c.dtype(2) != c.dtype(0) || !c.shape(2).Equal(tensor.Shape{c.shape(0)[1]}) {
			c.failf("weight is %v of shape %v, want %v of shape (%d)", c.dtype(2), c.shape(2), c.dtype(0), c.shape(0)[1])
		}
		w = tensor.Gather(c.x(2), target, 0)
	}
	if keep != nil {
		if w == nil {
			w = c.scalar(dt, 1)
		}
		w = tensor.Where(keep, w, c.scalar(dt, 0))
	}
	loss := tensor.Neg(tensor.Squeeze(tensor.TakeAlong(logp, tensor.Unsqueeze(target, 1), 1), 1))
	if w != nil {
		loss = tensor.Mul(loss, w)
	}
	switch red := c.attrString("reduction", "mean"); red {
	case "none":
		return loss
	case "sum":
		return tensor.Sum(loss, nil, false)
	case "mean":
		if w == nil {
			return tensor.Mean(loss, nil, false)
		}
		return tensor.Div(tensor.Sum(loss, nil, false), tensor.Sum(tensor.Expand(w, loss.Shape()...), nil, false))
	default:
		c.failf("reduction %q: want none, sum or mean", red)
	}
	return nil
}
