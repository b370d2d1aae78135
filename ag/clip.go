package ag

import (
	"github.com/gml-dev/gml/tensor"
)

// ClipGradNorm scales the gradients of params together so their global L2 norm is at
// most maxNorm (as torch.nn.utils.clip_grad_norm_), on the device, and returns the norm
// before clipping. Call it between Backward and Step; it joins the recorded step.
func ClipGradNorm(params []*Tensor, maxNorm float64) *Tensor {
	if !(maxNorm > 0) {
		fail("clip_grad_norm", "max norm must be positive, got %v", maxNorm)
	}
	return clipGrads("clip_grad_norm", params, func(tr *trace, grads []*tensor.Node) *tensor.Node {
		var sq *tensor.Node
		for _, g := range grads {
			s := tensor.Sum(tensor.Square(g), nil, false)
			if sq == nil {
				sq = s
			} else {
				sq = tensor.Add(sq, s)
			}
		}
		norm := tensor.Sqrt(sq)
		g0 := grads[0].Graph()
		scale := tensor.Minimum(g0.Scalar(norm.DType(), 1), tensor.Div(g0.Scalar(norm.DType(), maxNorm), tensor.AddScalar(norm, 1e-6)))
		for i, g := range grads {
			grads[i] = tensor.Mul(g, scale)
		}
		return norm
	})
}

// ClipGradValue limits every gradient element of params to [-v, v] on the device.
func ClipGradValue(params []*Tensor, v float64) {
	if !(v > 0) {
		fail("clip_grad_value", "limit must be positive, got %v", v)
	}
	clipGrads("clip_grad_value", params, func(tr *trace, grads []*tensor.Node) *tensor.Node {
		for i, g := range grads {
			grads[i] = tensor.Clamp(g, float32(-v), float32(v))
		}
		return nil
	})
}

// clipGrads rewrites the gradients of params (those that have one) with f in the trace
// being recorded and returns f's result as a tensor (nil when f returns none).
func clipGrads(op string, params []*Tensor, f func(tr *trace, grads []*tensor.Node) *tensor.Node) *Tensor {
	if len(params) == 0 {
		fail(op, "no parameters")
	}
	tp := tapeOf(op, params)
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tr := tp.trace()
	var ps []*param
	var grads []*tensor.Node
	for i, t := range params {
		if t.p == nil || t.p.buffer {
			fail(op, "parameter %d (%s) is not a trainable parameter", i, t.describe())
		}
		if p := t.p; p.g != nil && (tr.cur[p.g] != nil || p.gradSet) {
			ps = append(ps, p)
			grads = append(grads, tr.read(p.g))
		}
	}
	if len(ps) == 0 {
		fail(op, "no parameter has a gradient: call Backward first")
	}
	var res *tensor.Node
	build(op, func() { res = f(tr, grads) })
	for i, p := range ps {
		tr.assign(p.g, grads[i])
	}
	var out *Tensor
	if res != nil {
		out = &Tensor{tape: tp, dtype: res.DType(), shape: res.Shape(), op: op, seq: tp.seq, tr: tr, node: res}
		tr.vis = append(tr.vis, out)
	}
	tp.seq++
	if tp.eager && tr == tp.open {
		if err := tp.flush(); err != nil {
			failErr(op, err)
		}
	}
	return out
}
