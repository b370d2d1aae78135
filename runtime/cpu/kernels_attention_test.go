package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/internal/childtest"
	"github.com/gml-dev/gml/tensor"
)

// refAttentionGrad is the gradient of attention with respect to q, k and v for output
// gradient gy, with the probabilities formed explicitly, in float64.
func refAttentionGrad(q, k, v, gy []float64, batch, tq, tk, d, dv int, scale float64, causal bool,
	mask func(b, i, j int) float64) (dq, dk, dvOut []float64) {
	dq, dk, dvOut = make([]float64, batch*tq*d), make([]float64, batch*tk*d), make([]float64, batch*tk*dv)
	for b := 0; b < batch; b++ {
		for i := 0; i < tq; i++ {
			p := refAttentionProbs(q, k, b, i, tq, tk, d, scale, causal, mask)
			dp := make([]float64, tk)
			var sum float64
			for j := range dp {
				for e := 0; e < dv; e++ {
					dp[j] += gy[(b*tq+i)*dv+e] * v[(b*tk+j)*dv+e]
					dvOut[(b*tk+j)*dv+e] += p[j] * gy[(b*tq+i)*dv+e]
				}
				sum += p[j] * dp[j]
			}
			for j := range dp {
				ds := p[j] * (dp[j] - sum) * scale
				for e := 0; e < d; e++ {
					dq[(b*tq+i)*d+e] += ds * k[(b*tk+j)*d+e]
					dk[(b*tk+j)*d+e] += ds * q[(b*tq+i)*d+e]
				}
			}
		}
	}
	return dq, dk, dvOut
}

// TestAttentionGradKernel checks the fused backward against the float64 reference and
// each of its three nodes against its decomposition: several tiles per axis (the tile
// is 128), cross attention with Tq != Tk both ways under a causal mask, feature sizes that
// are not multiples of four, masks broadcast over batch, heads or queries, and a batch
// of many small items.
func TestAttentionGradKernel(t *testing.T) {
	for _, c := range []struct {
		q, k, v, mask tensor.Shape
		at            tensor.AttentionAttr
	}{
		{tensor.Shape{2, 3, 5, 8}, tensor.Shape{2, 3, 5, 8}, tensor.Shape{2, 3, 5, 8}, nil, tensor.AttentionAttr{Causal: true}},
		{tensor.Shape{1, 2, 70, 7}, tensor.Shape{1, 2, 130, 7}, tensor.Shape{1, 2, 130, 5}, tensor.Shape{70, 130}, tensor.AttentionAttr{}},
		{tensor.Shape{1, 1, 150, 6}, tensor.Shape{1, 1, 129, 6}, tensor.Shape{1, 1, 129, 3}, nil, tensor.AttentionAttr{Causal: true}},
		{tensor.Shape{1, 2, 66, 9}, tensor.Shape{1, 2, 140, 9}, tensor.Shape{1, 2, 140, 11}, tensor.Shape{2, 1, 140}, tensor.AttentionAttr{Causal: true, Scale: 0.4}},
		{tensor.Shape{2, 5, 4}, tensor.Shape{2, 3, 4}, tensor.Shape{2, 3, 3}, tensor.Shape{2, 1, 3}, tensor.AttentionAttr{Scale: 0.3}},
		{tensor.Shape{40, 2, 3}, tensor.Shape{40, 4, 3}, tensor.Shape{40, 4, 1}, nil, tensor.AttentionAttr{Causal: true}},
	} {
		e := newEnv(t)
		q, Q := e.input(tensor.F32, -1, 1, c.q...)
		k, K := e.input(tensor.F32, -1, 1, c.k...)
		v, V := e.f32(c.v...)
		r := len(c.q)
		tq, d, tk, dv := c.q[r-2], c.q[r-1], c.k[r-2], c.v[r-1]
		batch := c.q[:r-2].Size()
		mask, maskAt := attentionMask(e, c.q, c.k, c.mask)
		o := tensor.Attention(q, k, v, mask, c.at)
		gy, GY := e.f32(o.Shape()...)
		dq, dk, dvN := tensor.AttentionGrad(q, k, v, mask, o, gy, c.at)
		scale := float64(o.Attr().(tensor.AttentionAttr).Scale)
		wq, wk, wv := refAttentionGrad(Q, K, V, GY, batch, tq, tk, d, dv, scale, c.at.Causal, maskAt)
		name := fmt.Sprintf("attention grad q%v k%v v%v mask %v %+v", c.q, c.k, c.v, c.mask, c.at)
		got := e.run(dq, dk, dvN)
		check(t, name+" dq", got[0], c.q, wq, 1e-4)
		check(t, name+" dk", got[1], c.k, wk, 1e-4)
		check(t, name+" dv", got[2], c.v, wv, 1e-4)
		for _, n := range []*tensor.Node{dq.Input(4), dq, dk.Input(0)} {
			checkDecompose(t, fmt.Sprint(name, " ", n.Attr().(tensor.AttentionGradAttr).Output), e, n, 1e-4)
		}
	}
}

// TestAttentionGradEmpty runs the backward with no queries, no keys, and no features:
// nothing may fail, and with no keys ∂q is zero.
func TestAttentionGradEmpty(t *testing.T) {
	for _, c := range []struct{ tq, tk, d, dv int }{{0, 4, 3, 2}, {3, 0, 3, 2}, {3, 4, 0, 2}, {3, 4, 3, 0}} {
		e := newEnv(t)
		q, _ := e.f32(2, c.tq, c.d)
		k, _ := e.f32(2, c.tk, c.d)
		v, _ := e.f32(2, c.tk, c.dv)
		o := tensor.Attention(q, k, v, nil, tensor.AttentionAttr{Causal: true})
		gy, _ := e.f32(o.Shape()...)
		dq, dk, dv := tensor.AttentionGrad(q, k, v, nil, o, gy, tensor.AttentionAttr{Causal: true})
		got := e.run(dq, dk, dv)
		for i, n := range []*tensor.Node{dq, dk, dv} {
			if !got[i].Shape().Equal(n.Shape()) {
				t.Errorf("%+v: gradient %d has shape %v, want %v", c, i, got[i].Shape(), n.Shape())
			}
			for _, x := range got[i].Float64s() {
				if math.IsNaN(x) || math.IsInf(x, 0) || c.tk == 0 && x != 0 {
					t.Errorf("%+v: gradient %d holds %v", c, i, x)
					break
				}
			}
		}
	}
}

// TestAttentionRaggedSizes checks the forward and the backward against the float64
// references on ragged lengths (one tile, part of one, several with a ragged last) and
// feature sizes from 1 to 64, causal or not, with and without an additive mask that
// hides some keys and every key of one query, whose output and gradients are NaN (not
// with causal masking over several tiles: there the NaN gradients reach only the tiles
// that query visits, and the reference's NaNs everywhere would not match), for self
// attention and for cross attention with Tq != Tk. The backward runs fused (all three
// gradients) and node by node (∂q alone, ∂k|∂v alone), and every result is the same
// bits on a second run.
func TestAttentionRaggedSizes(t *testing.T) {
	type size struct{ tq, tk, d int }
	var sizes []size
	for _, n := range []int{1, 7, 33, 257} {
		for _, d := range []int{1, 16, 32, 64} {
			if n == 257 && d != 16 {
				continue // the long sequence once: it is the slow reference's case
			}
			sizes = append(sizes, size{n, n, d})
		}
	}
	sizes = append(sizes, size{7, 33, 16}, size{33, 7, 16}, size{129, 1, 3})
	for _, sz := range sizes {
		for _, c := range []struct{ causal, mask bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			e := newEnv(t)
			heads := 2
			if sz.tq > 128 {
				heads = 1
			}
			qs, ks := tensor.Shape{2, heads, sz.tq, sz.d}, tensor.Shape{2, heads, sz.tk, sz.d}
			q, Q := e.f32(qs...)
			k, K := e.f32(ks...)
			v, V := e.f32(ks...)
			var mask *tensor.Node
			maskAt := func(b, i, j int) float64 { return 0 }
			if c.mask {
				mask, maskAt = randomMask(e, sz.tq, sz.tk, c.causal)
			}
			at := tensor.AttentionAttr{Causal: c.causal}
			o := tensor.Attention(q, k, v, mask, at)
			gy, GY := e.f32(o.Shape()...)
			dq, dk, dv := tensor.AttentionGrad(q, k, v, mask, o, gy, at)
			scale := float64(o.Attr().(tensor.AttentionAttr).Scale)
			batch := 2 * heads
			wo := refAttention(Q, K, V, batch, sz.tq, sz.tk, sz.d, sz.d, scale, c.causal, maskAt)
			wq, wk, wv := refAttentionGrad(Q, K, V, GY, batch, sz.tq, sz.tk, sz.d, sz.d, scale, c.causal, maskAt)
			name := fmt.Sprintf("q%v k%v causal %v mask %v", qs, ks, c.causal, c.mask)
			fused := e.run(o, dq, dk, dv)
			check(t, name+" o", fused[0], o.Shape(), wo, 1e-5)
			check(t, name+" dq", fused[1], qs, wq, 1e-4)
			check(t, name+" dk", fused[2], ks, wk, 1e-4)
			check(t, name+" dv", fused[3], ks, wv, 1e-4)
			alone := []*tensor.Tensor{e.run(dq)[0], e.run(dk)[0], e.run(dv)[0]}
			check(t, name+" dq alone", alone[0], qs, wq, 1e-4)
			check(t, name+" dk alone", alone[1], ks, wk, 1e-4)
			check(t, name+" dv alone", alone[2], ks, wv, 1e-4)
			again := e.run(o, dq, dk, dv)
			for i, n := range []string{"o", "dq", "dk", "dv"} {
				if !sameBits(fused[i].Float32s(), again[i].Float32s()) {
					t.Errorf("%s: %s differs between two runs", name, n)
				}
			}
		}
	}
}

// sameBits reports whether a and b hold the same bits (NaNs included).
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestAttentionOnEveryPath reruns the attention tests in child processes with package
// vec's Go code and AVX2 code, and with the GEMM's Go kernels of each shape, so that
// every path the kernels dispatch to runs on any machine.
func TestAttentionOnEveryPath(t *testing.T) {
	childtest.Rerun(t, "^(TestAttentionKernel|TestAttentionGradKernel|TestAttentionRaggedSizes|TestAttentionGradEmpty|TestAttentionHeadsInRows)$",
		"GML_SIMD=go", "GML_SIMD=avx2", "GML_BLAS=go", "GML_GEMM_KERNEL=avx512", "GML_GEMM_KERNEL=avx2")
}

// swapAxes returns x, shaped (b, m, n, d), with its axes 1 and 2 swapped: (b, n, m, d).
// It turns AttentionBTHD operands into AttentionBHTD ones (m = T, n = H) and back.
func swapAxes(x []float64, b, m, n, d int) []float64 {
	out := make([]float64, len(x))
	for i := range b {
		for j := range m {
			for k := range n {
				copy(out[((i*n+k)*m+j)*d:][:d], x[((i*m+j)*n+k)*d:][:d])
			}
		}
	}
	return out
}

// TestAttentionHeadsInRows checks the AttentionBTHD layout, (B, T, H, D) operands whose
// rows hold every head: the forward and the backward, fused and node by node, against
// the float64 references and against the default layout run on the operands
// permuted to (B, H, T, D), which must give the same bits (the kernels read the same
// numbers through other strides); on ragged lengths (one tile, part of one, several),
// cross attention with Tq != Tk, causal or not, with and without a mask that hides some
// keys and every key of query 0, and each node against its decomposition.
func TestAttentionHeadsInRows(t *testing.T) {
	type size struct{ tq, tk, d, heads int }
	sizes := []size{{1, 1, 16, 3}, {7, 7, 1, 3}, {7, 7, 16, 3}, {33, 33, 16, 3}, {33, 33, 64, 2}, {257, 257, 16, 2},
		{7, 33, 16, 3}, {33, 7, 5, 3}, {129, 1, 3, 2}, {150, 130, 8, 1}}
	for _, sz := range sizes {
		for _, c := range []struct{ causal, mask bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			e := newEnv(t)
			const batch = 2
			qs, ks := tensor.Shape{batch, sz.tq, sz.heads, sz.d}, tensor.Shape{batch, sz.tk, sz.heads, sz.d}
			q, Q := e.f32(qs...)
			k, K := e.f32(ks...)
			v, V := e.f32(ks...)
			gy, GY := e.f32(qs...)
			var mask *tensor.Node
			maskAt := func(b, i, j int) float64 { return 0 }
			if c.mask {
				mask, maskAt = randomMask(e, sz.tq, sz.tk, c.causal)
			}
			at := tensor.AttentionAttr{Causal: c.causal, Layout: tensor.AttentionBTHD}
			o := tensor.Attention(q, k, v, mask, at)
			dq, dk, dv := tensor.AttentionGrad(q, k, v, mask, o, gy, at)
			heads := func(x *tensor.Node) *tensor.Node { return tensor.Transpose(x, 1, 2) }
			def := tensor.AttentionAttr{Causal: c.causal}
			op := tensor.Attention(heads(q), heads(k), heads(v), mask, def)
			dqp, dkp, dvp := tensor.AttentionGrad(heads(q), heads(k), heads(v), mask, op, heads(gy), def)
			name := fmt.Sprintf("bthd q%v k%v causal %v mask %v", qs, ks, c.causal, c.mask)
			got := e.run(o, dq, dk, dv, heads(op), heads(dqp), heads(dkp), heads(dvp))
			for i, n := range []string{"o", "dq", "dk", "dv"} {
				if !sameBits(got[i].Float32s(), got[i+4].Float32s()) {
					t.Errorf("%s: %s differs from the default layout's on permuted operands", name, n)
				}
			}
			scale := float64(o.Attr().(tensor.AttentionAttr).Scale)
			bh := func(x []float64, t int) []float64 { return swapAxes(x, batch, t, sz.heads, len(x)/(batch*t*sz.heads)) }
			th := func(x []float64, t int) []float64 { return swapAxes(x, batch, sz.heads, t, len(x)/(batch*t*sz.heads)) }
			n := batch * sz.heads
			wo := refAttention(bh(Q, sz.tq), bh(K, sz.tk), bh(V, sz.tk), n, sz.tq, sz.tk, sz.d, sz.d, scale, c.causal, maskAt)
			wq, wk, wv := refAttentionGrad(bh(Q, sz.tq), bh(K, sz.tk), bh(V, sz.tk), bh(GY, sz.tq), n, sz.tq, sz.tk, sz.d, sz.d, scale, c.causal, maskAt)
			check(t, name+" o", got[0], qs, th(wo, sz.tq), 1e-5)
			check(t, name+" dq", got[1], qs, th(wq, sz.tq), 1e-4)
			check(t, name+" dk", got[2], ks, th(wk, sz.tk), 1e-4)
			check(t, name+" dv", got[3], ks, th(wv, sz.tk), 1e-4)
			alone := []*tensor.Tensor{e.run(dq)[0], e.run(dk)[0], e.run(dv)[0]}
			check(t, name+" dq alone", alone[0], qs, th(wq, sz.tq), 1e-4)
			check(t, name+" dk alone", alone[1], ks, th(wk, sz.tk), 1e-4)
			check(t, name+" dv alone", alone[2], ks, th(wv, sz.tk), 1e-4)
			if sz.tq <= 33 && sz.tk <= 33 {
				checkDecompose(t, name+" o", e, o, 1e-5)
				nodes := []*tensor.Node{dq, dk.Input(0), dq.Input(4)}
				if c.mask {
					// Query 0 sees no key: the kernel's log-sum-exp is -Inf, the
					// decomposition's max - max is NaN.
					nodes = nodes[:2]
				}
				for _, n := range nodes {
					checkDecompose(t, fmt.Sprint(name, " ", n.Attr().(tensor.AttentionGradAttr).Output), e, n, 1e-4)
				}
			}
		}
	}
}

// randomMask feeds a (tq, tk) additive mask of random values in which some keys are
// hidden (-Inf): every query but 0 sees key 0 at least, and query 0 sees no key where
// tq > 1 (for a causal mask only up to 128 queries). It returns the node and its values.
func randomMask(e *env, tq, tk int, causal bool) (*tensor.Node, func(b, i, j int) float64) {
	m := make([]float64, tq*tk)
	for i := range m {
		if m[i] = e.rng.Float64(); i%tk != 0 && e.rng.IntN(4) == 0 || i < tk && tq > 1 && (!causal || tq <= 128) {
			m[i] = math.Inf(-1)
		}
	}
	return e.feed(tensor.F32, m, tq, tk), func(b, i, j int) float64 { return m[i*tk+j] }
}
