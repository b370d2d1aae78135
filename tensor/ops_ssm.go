package tensor

import (
	"fmt"
	"math"
)

// State-space and linear-attention ops: the recurrences of Mamba (a causal depthwise
// convolution and the selective scan), RWKV-6 and RWKV-7 (wkv) and gated linear
// attention. Each runs token by token over a sequence, carrying a state, so each is one
// fused op with a CPU kernel and a shader, rather than a composition of T steps.
//
// Layout: activations are [B, T, ...] (batch, time first); the per-head ops take
// [B, T, H, S] vectors (H heads of size S) and a state [B, H, S, S] per sequence. Every
// op but SSMConv returns its sequence output and its final state packed in one node,
// [B, T·(output per token) + (state size)], which the builders split into two views, so
// the final state can feed the next chunk of a sequence (a notebook generating token by
// token) and gradients can flow into it. The initial state is an input; builders
// substitute zeros when given nil.
//
// Gradients: one backward op per family computes the gradients of all inputs in one
// reverse pass (recomputing the states forward from checkpoints rather than keeping
// T of them), packed flat in input order; the gradient rule slices them apart. The
// backward ops themselves are not differentiable.
//
// The recurrences, per sequence b (and head h), with S₋₁ the initial state:
//
//	SSMConv:  xp = [s₀; x] along time;  y[t,d] = Σ_j w[d,j]·xp[t+j,d]
//	SSMScan:  h_t[d,n] = exp(Δ_t[d]·A[d,n])·h_{t−1}[d,n] + Δ_t[d]·B_t[n]·x_t[d];  y_t[d] = Σ_n C_t[n]·h_t[d,n]
//	WKV6:     y_t[j] = Σ_i r_t[i]·(u[i]·k_t[i]·v_t[j] + S_{t−1}[i,j]);  S_t[i,j] = w_t[i]·S_{t−1}[i,j] + k_t[i]·v_t[j]
//	GLA:      S_t[i,j] = g_t[i]·S_{t−1}[i,j] + k_t[i]·v_t[j];  y_t[j] = scale·Σ_i q_t[i]·S_t[i,j]
//	WKV7:     sa[i] = Σ_j a_t[j]·S_{t−1}[i,j];  S_t[i,j] = S_{t−1}[i,j]·w_t[j] + v_t[i]·k_t[j] + sa[i]·b_t[j];  y_t[i] = Σ_j S_t[i,j]·r_t[j]
//
// SSMScan takes Δ as given (Mamba applies softplus first) and A as is (negative for a
// decaying state); WKV6 and GLA take the decay w and gate g as factors (RWKV-6 computes
// w = exp(−exp(·)) first); WKV7's state is indexed [value, key] as in RWKV-7.

// GLAAttr is the attribute of OpGLA and OpGLAGrad: the factor on q (0 means 1/√S).
type GLAAttr struct{ Scale float32 }

func init() {
	registerShape(OpSSMConv, ssmConvRule)
	registerShape(OpSSMScan, ssmScanRule)
	registerShape(OpWKV6, wkv6Rule)
	registerShape(OpGLA, glaRule)
	registerShape(OpWKV7, wkv7Rule)
	for grad, fwd := range ssmBackward {
		registerShape(grad, ssmGradRule(fwd))
	}
}

// ssmBackward maps each backward op to its forward op.
var ssmBackward = map[Op]Op{OpSSMConvGrad: OpSSMConv, OpSSMScanGrad: OpSSMScan, OpWKV6Grad: OpWKV6, OpGLAGrad: OpGLA, OpWKV7Grad: OpWKV7}

// SSMConv is Mamba's causal depthwise convolution over time: x [B, T, D], w [D, K]
// (one kernel of K taps per channel), state [B, K−1, D] the K−1 inputs before x (nil
// for zeros). The result is [B, T, D]; SSMConvState gives the state for the next chunk.
func SSMConv(x, w, state *Node) *Node {
	if state == nil && x.shape.Rank() == 3 && w.shape.Rank() == 2 {
		state = Full(x.graph, x.dtype, Shape{x.shape[0], max(w.shape[1]-1, 0), x.shape[2]}, 0)
	}
	return Apply(OpSSMConv, nil, x, w, state)
}

// SSMConvState returns the convolution state after x: the last K−1 time steps of
// [state; x] for a kernel of K taps ([B, K−1, D]).
func SSMConvState(x, state *Node, k int) *Node {
	if k <= 1 {
		return SliceAxis(x, 1, 0, 0)
	}
	if state == nil {
		state = Full(x.graph, x.dtype, Shape{x.shape[0], k - 1, x.shape[2]}, 0)
	}
	xp := Concat(1, state, x)
	return SliceAxis(xp, 1, xp.shape[1]-(k-1), xp.shape[1])
}

// SSMScan is Mamba's selective scan: x and dt [B, T, D], A [D, N], Bm and Cm [B, T, N],
// h0 [B, D, N] (nil for zeros). It returns y [B, T, D] and the final state [B, D, N].
func SSMScan(x, dt, a, bm, cm, h0 *Node) (y, state *Node) {
	if h0 == nil && x.shape.Rank() == 3 && a.shape.Rank() == 2 {
		h0 = Full(x.graph, x.dtype, Shape{x.shape[0], x.shape[2], a.shape[1]}, 0)
	}
	out := Apply(OpSSMScan, nil, x, dt, a, bm, cm, h0)
	b, t, d, n := x.shape[0], x.shape[1], x.shape[2], a.shape[1]
	return splitPacked(out, Shape{b, t, d}, Shape{b, d, n})
}

// WKV6 is RWKV-6's time mixing: r, k, v and the per-token decay w [B, T, H, S], the
// bonus u [H, S], s0 [B, H, S, S] (nil for zeros). It returns y [B, T, H, S] and the
// final state [B, H, S, S].
func WKV6(r, k, v, w, u, s0 *Node) (y, state *Node) {
	s0 = zeroState(r, s0)
	return splitHeads(Apply(OpWKV6, nil, r, k, v, w, u, s0), r)
}

// GLA is gated linear attention: q, k, v and the gate g [B, T, H, S], s0 [B, H, S, S]
// (nil for zeros), q scaled by scale (0 means 1/√S). It returns y [B, T, H, S] and the
// final state.
func GLA(q, k, v, g, s0 *Node, scale float32) (y, state *Node) {
	s0 = zeroState(q, s0)
	return splitHeads(Apply(OpGLA, GLAAttr{Scale: scale}, q, k, v, g, s0), q)
}

// WKV7 is RWKV-7's time mixing: r, w, k, v, a, b [B, T, H, S] (w the decay factors, a
// and b the state-update vectors, -κ and κ·α in RWKV-7's terms), s0 [B, H, S, S] (nil
// for zeros). It returns y [B, T, H, S] and the final state.
func WKV7(r, w, k, v, a, b, s0 *Node) (y, state *Node) {
	s0 = zeroState(r, s0)
	return splitHeads(Apply(OpWKV7, nil, r, w, k, v, a, b, s0), r)
}

// zeroState returns s0, or zeros [B, H, S, S] for x [B, T, H, S] when s0 is nil.
func zeroState(x, s0 *Node) *Node {
	if s0 != nil || x.shape.Rank() != 4 {
		return s0
	}
	s := x.shape
	return Full(x.graph, x.dtype, Shape{s[0], s[2], s[3], s[3]}, 0)
}

func splitHeads(out, x *Node) (y, state *Node) {
	s := x.shape
	return splitPacked(out, s.Clone(), Shape{s[0], s[2], s[3], s[3]})
}

// splitPacked views a packed [B, T·… + …] output as its sequence part and its state.
func splitPacked(out *Node, ys, ss Shape) (y, state *Node) {
	ny := ys.Size() / max(ys[0], 1)
	y = Reshape(SliceAxis(out, 1, 0, ny), ys...)
	state = Reshape(SliceAxis(out, 1, ny, out.shape[1]), ss...)
	return y, state
}

// want checks one input's shape.
func want(name string, x *Node, s Shape) error {
	if !x.shape.Equal(s) {
		return fmt.Errorf("%s must be %v, have %v", name, s, x.shape)
	}
	return nil
}

// sameFloat checks that every input has input 0's float dtype.
func sameFloat(in []*Node) error {
	for _, x := range in {
		if x.dtype != in[0].dtype || !x.dtype.IsFloat() {
			return fmt.Errorf("needs inputs of one float dtype, have %s", shapesOf(in))
		}
	}
	return nil
}

func ssmConvRule(_ any, in []*Node) (DType, Shape, any, error) {
	x, w, s := in[0], in[1], in[2]
	if x.shape.Rank() != 3 || w.shape.Rank() != 2 || w.shape[1] < 1 {
		return 0, nil, nil, fmt.Errorf("needs x [B, T, D], w [D, K], state [B, K-1, D]; have %s", shapesOf(in))
	}
	b, d, k := x.shape[0], x.shape[2], w.shape[1]
	if err := firstErr(sameFloat(in), want("w", w, Shape{d, k}), want("state", s, Shape{b, k - 1, d})); err != nil {
		return 0, nil, nil, err
	}
	return x.dtype, x.shape.Clone(), nil, nil
}

func ssmScanRule(_ any, in []*Node) (DType, Shape, any, error) {
	x, a := in[0], in[2]
	if x.shape.Rank() != 3 || a.shape.Rank() != 2 {
		return 0, nil, nil, fmt.Errorf("needs x, dt [B, T, D], A [D, N], B, C [B, T, N], h0 [B, D, N]; have %s", shapesOf(in))
	}
	b, t, d, n := x.shape[0], x.shape[1], x.shape[2], a.shape[1]
	err := firstErr(sameFloat(in), want("dt", in[1], x.shape), want("A", a, Shape{d, n}),
		want("B", in[3], Shape{b, t, n}), want("C", in[4], Shape{b, t, n}), want("h0", in[5], Shape{b, d, n}))
	if err != nil {
		return 0, nil, nil, err
	}
	return x.dtype, Shape{b, t*d + d*n}, nil, nil
}

// headsRule checks per-head ops: the inputs listed in vecs are [B, T, H, S] like input
// 0, the last input is the state [B, H, S, S], and extra holds other checks.
func headsRule(in []*Node, vecs []int, names string, extra func(h, s int) error) (DType, Shape, error) {
	x := in[0]
	if x.shape.Rank() != 4 {
		return 0, nil, fmt.Errorf("needs %s [B, T, H, S] and a state [B, H, S, S]; have %s", names, shapesOf(in))
	}
	b, t, h, s := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	errs := []error{sameFloat(in), want("the state", in[len(in)-1], Shape{b, h, s, s})}
	for _, i := range vecs {
		errs = append(errs, want(fmt.Sprintf("input %d", i), in[i], x.shape))
	}
	if extra != nil {
		errs = append(errs, extra(h, s))
	}
	if err := firstErr(errs...); err != nil {
		return 0, nil, err
	}
	return x.dtype, Shape{b, t*h*s + h*s*s}, nil
}

func wkv6Rule(_ any, in []*Node) (DType, Shape, any, error) {
	dt, s, err := headsRule(in, []int{1, 2, 3}, "r, k, v, w", func(h, s int) error { return want("u", in[4], Shape{h, s}) })
	return dt, s, nil, err
}

func glaRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(GLAAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be GLAAttr, got %T", attr)
	}
	dt, s, err := headsRule(in, []int{1, 2, 3}, "q, k, v, g", nil)
	if err == nil && at.Scale == 0 {
		at.Scale = float32(1 / math.Sqrt(float64(in[0].shape[3])))
	}
	return dt, s, at, err
}

func wkv7Rule(_ any, in []*Node) (DType, Shape, any, error) {
	dt, s, err := headsRule(in, []int{1, 2, 3, 4, 5}, "r, w, k, v, a, b", nil)
	return dt, s, nil, err
}

// ssmGradRule returns the shape rule of fwd's backward op: it takes fwd's inputs and
// the gradient of fwd's output, and returns the gradients of the inputs flattened and
// concatenated in input order.
func ssmGradRule(fwd Op) shapeRule {
	return func(attr any, in []*Node) (DType, Shape, any, error) {
		if len(in) < 2 {
			return 0, nil, nil, fmt.Errorf("needs %v's inputs and the gradient of its output", fwd)
		}
		xs, gy := in[:len(in)-1], in[len(in)-1]
		dt, ys, norm, err := shapeRules[fwd](attr, xs)
		if err != nil {
			return 0, nil, nil, err
		}
		if !gy.shape.Equal(ys) || gy.dtype != dt {
			return 0, nil, nil, fmt.Errorf("the output gradient must be %v%v, have %v%v", dt, ys, gy.dtype, gy.shape)
		}
		total := 0
		for _, x := range xs {
			total += x.shape.Size()
		}
		return dt, Shape{total}, norm, nil
	}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
