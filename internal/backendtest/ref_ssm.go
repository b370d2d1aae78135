package backendtest

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// References of the state-space and linear-attention ops, written from the recurrences
// in tensor/ops_ssm.go. The forward references keep every state; the backward ones walk
// time in reverse through those states (no checkpoints), accumulating the gradient of
// the state, and return every input's gradient flat in input order. TestGradientRules
// checks these backward references against central differences of the forward ones.

func init() {
	defRef(refSSMConv, tensor.OpSSMConv)
	defRef(refSSMConvGrad, tensor.OpSSMConvGrad)
	defRef(func(n *tensor.Node, in []*Array) *Array { return refSSMScan(n, in, nil) }, tensor.OpSSMScan)
	defRef(func(n *tensor.Node, in []*Array) *Array { return refSSMScan(n, in[:6], in[6]) }, tensor.OpSSMScanGrad)
	for _, op := range []tensor.Op{tensor.OpWKV6, tensor.OpGLA, tensor.OpWKV7} {
		defRef(func(n *tensor.Node, in []*Array) *Array { return refHeads(n, in, nil) }, op)
	}
	for _, op := range []tensor.Op{tensor.OpWKV6Grad, tensor.OpGLAGrad, tensor.OpWKV7Grad} {
		defRef(func(n *tensor.Node, in []*Array) *Array { return refHeads(n, in[:len(in)-1], in[len(in)-1]) }, op)
	}
}

// packGrads concatenates the gradients of a backward op's inputs into its flat output.
func packGrads(n *tensor.Node, grads [][]float64) *Array {
	out := newArray(n.DType(), n.Shape())
	off := 0
	for _, g := range grads {
		off += copy(out.Data[off:], g)
	}
	return out
}

// zeros returns a zero slice per array, of its size.
func zeros(in []*Array) [][]float64 {
	g := make([][]float64, len(in))
	for i, x := range in {
		g[i] = make([]float64, len(x.Data))
	}
	return g
}

// refSSMConv: y[b,t,d] = Σ_j w[d,j]·xp[b,t+j,d] with xp = [state; x] along time.
func refSSMConv(n *tensor.Node, in []*Array) *Array {
	x, w, s := in[0], in[1], in[2]
	b, t, d, k := x.Shape[0], x.Shape[1], x.Shape[2], w.Shape[1]
	xp := func(bi, tau, c int) float64 {
		if tau < k-1 {
			return s.Data[(bi*(k-1)+tau)*d+c]
		}
		return x.Data[(bi*t+tau-(k-1))*d+c]
	}
	out := newArray(n.DType(), n.Shape())
	for bi := range b {
		for ti := range t {
			for c := range d {
				sum := 0.0
				for j := range k {
					sum += w.Data[c*k+j] * xp(bi, ti+j, c)
				}
				out.Data[(bi*t+ti)*d+c] = sum
			}
		}
	}
	return out
}

func refSSMConvGrad(n *tensor.Node, in []*Array) *Array {
	x, w, s, gy := in[0], in[1], in[2], in[3]
	b, t, d, k := x.Shape[0], x.Shape[1], x.Shape[2], w.Shape[1]
	g := zeros(in[:3])
	gx, gw, gs := g[0], g[1], g[2]
	// at returns the array and index of element (bi, τ, c) of [state; x], and of its
	// gradient.
	at := func(bi, tau, c int) (val float64, grad *float64) {
		if tau < k-1 {
			i := (bi*(k-1)+tau)*d + c
			return s.Data[i], &gs[i]
		}
		i := (bi*t+tau-(k-1))*d + c
		return x.Data[i], &gx[i]
	}
	for bi := range b {
		for ti := range t {
			for c := range d {
				gyv := gy.Data[(bi*t+ti)*d+c]
				for j := range k {
					v, gp := at(bi, ti+j, c)
					*gp += w.Data[c*k+j] * gyv
					gw[c*k+j] += v * gyv
				}
			}
		}
	}
	return packGrads(n, g)
}

// refSSMScan evaluates the selective scan on in (x, Δ, A, B, C, h0):
// h_t[d,n] = exp(Δ_t[d]·A[d,n])·h_{t−1}[d,n] + Δ_t[d]·B_t[n]·x_t[d], y_t[d] = Σ_n C_t[n]·h_t[d,n].
// With gout nil it returns the packed [B, T·D + D·N] output; otherwise the gradients
// of the inputs given gout, the gradient of that output.
func refSSMScan(n *tensor.Node, in []*Array, gout *Array) *Array {
	x, dt, a, bm, cm, h0 := in[0], in[1], in[2], in[3], in[4], in[5]
	b, t, d, ns := x.Shape[0], x.Shape[1], x.Shape[2], a.Shape[1]
	row := t*d + d*ns
	out := newArray(n.DType(), n.Shape())
	g := zeros(in)
	for bi := range b {
		xv := func(ti, c int) float64 { return x.Data[(bi*t+ti)*d+c] }
		dv := func(ti, c int) float64 { return dt.Data[(bi*t+ti)*d+c] }
		bv := func(ti, j int) float64 { return bm.Data[(bi*t+ti)*ns+j] }
		cv := func(ti, j int) float64 { return cm.Data[(bi*t+ti)*ns+j] }
		// hs[τ] is the state after τ tokens.
		hs := make([][]float64, t+1)
		hs[0] = h0.Data[bi*d*ns : (bi+1)*d*ns]
		for ti := range t {
			h := make([]float64, d*ns)
			for c := range d {
				y := 0.0
				for j := range ns {
					h[c*ns+j] = math.Exp(dv(ti, c)*a.Data[c*ns+j])*hs[ti][c*ns+j] + dv(ti, c)*bv(ti, j)*xv(ti, c)
					y += cv(ti, j) * h[c*ns+j]
				}
				out.Data[bi*row+ti*d+c] = y
			}
			hs[ti+1] = h
		}
		copy(out.Data[bi*row+t*d:(bi+1)*row], hs[t])
		if gout == nil {
			continue
		}
		gh := append([]float64(nil), gout.Data[bi*row+t*d:(bi+1)*row]...)
		for ti := t - 1; ti >= 0; ti-- {
			for c := range d {
				gy := gout.Data[bi*row+ti*d+c]
				delta, xi := dv(ti, c), xv(ti, c)
				for j := range ns {
					i := c*ns + j
					gh[i] += cv(ti, j) * gy
					g[4][(bi*t+ti)*ns+j] += gy * hs[ti+1][i]
					decay := math.Exp(delta * a.Data[i])
					g[1][(bi*t+ti)*d+c] += gh[i] * (a.Data[i]*decay*hs[ti][i] + bv(ti, j)*xi)
					g[2][i] += gh[i] * delta * decay * hs[ti][i]
					g[3][(bi*t+ti)*ns+j] += gh[i] * delta * xi
					g[0][(bi*t+ti)*d+c] += gh[i] * delta * bv(ti, j)
					gh[i] *= decay
				}
			}
		}
		copy(g[5][bi*d*ns:], gh)
	}
	if gout == nil {
		return out
	}
	return packGrads(n, g)
}

// refHeads evaluates RWKV-6, GLA or RWKV-7 (by n's op) on in, per sequence and head,
// keeping every state. With gout nil it returns the packed [B, T·H·S + H·S·S] output;
// otherwise the gradients of the inputs given gout.
func refHeads(n *tensor.Node, in []*Array, gout *Array) *Array {
	shape := in[0].Shape
	b, t, h, s := shape[0], shape[1], shape[2], shape[3]
	row := t*h*s + h*s*s
	out := newArray(n.DType(), n.Shape())
	g := zeros(in)
	hd := head{op: n.Op(), s: s}
	if at, ok := n.Attr().(tensor.GLAAttr); ok {
		hd.scale = float64(at.Scale)
	}
	last := len(in) - 1 // the initial state
	for bi := range b {
		for hi := range h {
			hd.x, hd.g = make([][]float64, last), make([][]float64, last)
			if hd.op == tensor.OpWKV6 || hd.op == tensor.OpWKV6Grad {
				hd.u, hd.gu = in[4].Data[hi*s:(hi+1)*s], g[4][hi*s:(hi+1)*s]
			}
			so := (bi*h + hi) * s * s
			states := make([][]float64, t+1)
			states[0] = in[last].Data[so : so+s*s]
			yo := func(ti int) int { return bi*row + (ti*h+hi)*s }
			for ti := range t {
				hd.token(in, g, ((bi*t+ti)*h+hi)*s)
				states[ti+1] = hd.forward(states[ti], out.Data[yo(ti):yo(ti)+s])
			}
			copy(out.Data[bi*row+t*h*s+hi*s*s:], states[t])
			if gout == nil {
				continue
			}
			gS := append([]float64(nil), gout.Data[bi*row+t*h*s+hi*s*s:][:s*s]...)
			for ti := t - 1; ti >= 0; ti-- {
				hd.token(in, g, ((bi*t+ti)*h+hi)*s)
				hd.backward(states[ti], states[ti+1], gout.Data[yo(ti):yo(ti)+s], gS)
			}
			copy(g[last][so:], gS)
		}
	}
	if gout == nil {
		return out
	}
	return packGrads(n, g)
}

// head is one head of a per-head recurrence at one token: its input vectors (in the
// op's input order, the bonus u apart) and their gradients.
type head struct {
	op    tensor.Op
	s     int
	scale float64
	x, g  [][]float64 // the [B, T, H, S] inputs' vectors at this token, and gradients
	u, gu []float64   // RWKV-6's bonus for this head, and its gradient
}

// token points the head's vectors at offset o of every [B, T, H, S] input.
func (hd *head) token(in []*Array, g [][]float64, o int) {
	for k := range hd.x {
		if hd.u != nil && k == 4 {
			continue // u is [H, S]
		}
		hd.x[k], hd.g[k] = in[k].Data[o:o+hd.s], g[k][o:o+hd.s]
	}
}

// forward writes the token's output y and returns the state after it.
func (hd *head) forward(prev, y []float64) []float64 {
	s := hd.s
	next := make([]float64, s*s)
	switch hd.op {
	case tensor.OpWKV6, tensor.OpWKV6Grad:
		// y[j] = Σ_i r[i]·(u[i]·k[i]·v[j] + S[i,j]);  S'[i,j] = w[i]·S[i,j] + k[i]·v[j]
		r, k, v, w := hd.x[0], hd.x[1], hd.x[2], hd.x[3]
		for j := range s {
			y[j] = 0
			for i := range s {
				y[j] += r[i] * (hd.u[i]*k[i]*v[j] + prev[i*s+j])
				next[i*s+j] = w[i]*prev[i*s+j] + k[i]*v[j]
			}
		}
	case tensor.OpGLA, tensor.OpGLAGrad:
		// S'[i,j] = g[i]·S[i,j] + k[i]·v[j];  y[j] = scale·Σ_i q[i]·S'[i,j]
		q, k, v, gate := hd.x[0], hd.x[1], hd.x[2], hd.x[3]
		for j := range s {
			y[j] = 0
			for i := range s {
				next[i*s+j] = gate[i]*prev[i*s+j] + k[i]*v[j]
				y[j] += hd.scale * q[i] * next[i*s+j]
			}
		}
	case tensor.OpWKV7, tensor.OpWKV7Grad:
		// sa[i] = Σ_j a[j]·S[i,j];  S'[i,j] = S[i,j]·w[j] + v[i]·k[j] + sa[i]·b[j];
		// y[i] = Σ_j S'[i,j]·r[j]
		r, w, k, v, a, bb := hd.x[0], hd.x[1], hd.x[2], hd.x[3], hd.x[4], hd.x[5]
		for i := range s {
			sa := 0.0
			for j := range s {
				sa += a[j] * prev[i*s+j]
			}
			y[i] = 0
			for j := range s {
				next[i*s+j] = prev[i*s+j]*w[j] + v[i]*k[j] + sa*bb[j]
				y[i] += next[i*s+j] * r[j]
			}
		}
	}
	return next
}

// backward adds the token's contributions to the inputs' gradients, given gy (the
// gradient of its output) and gS (that of the state after it, which it turns into that
// of the state before it).
func (hd *head) backward(prev, next, gy, gS []float64) {
	s := hd.s
	switch hd.op {
	case tensor.OpWKV6Grad:
		r, k, v, w := hd.x[0], hd.x[1], hd.x[2], hd.x[3]
		gr, gk, gv, gw := hd.g[0], hd.g[1], hd.g[2], hd.g[3]
		for i := range s {
			for j := range s {
				ij := i*s + j
				gr[i] += gy[j] * (hd.u[i]*k[i]*v[j] + prev[ij])
				hd.gu[i] += gy[j] * r[i] * k[i] * v[j]
				gk[i] += gy[j]*r[i]*hd.u[i]*v[j] + gS[ij]*v[j]
				gv[j] += gy[j]*r[i]*hd.u[i]*k[i] + gS[ij]*k[i]
				gw[i] += gS[ij] * prev[ij]
				gS[ij] = gS[ij]*w[i] + r[i]*gy[j]
			}
		}
	case tensor.OpGLAGrad:
		q, k, v, gate := hd.x[0], hd.x[1], hd.x[2], hd.x[3]
		gq, gk, gv, gg := hd.g[0], hd.g[1], hd.g[2], hd.g[3]
		for i := range s {
			for j := range s {
				ij := i*s + j
				gq[i] += hd.scale * gy[j] * next[ij]
				gS[ij] += hd.scale * q[i] * gy[j]
				gk[i] += gS[ij] * v[j]
				gv[j] += gS[ij] * k[i]
				gg[i] += gS[ij] * prev[ij]
				gS[ij] *= gate[i]
			}
		}
	case tensor.OpWKV7Grad:
		r, w, k, v, a, bb := hd.x[0], hd.x[1], hd.x[2], hd.x[3], hd.x[4], hd.x[5]
		gr, gw, gk, gv, ga, gb := hd.g[0], hd.g[1], hd.g[2], hd.g[3], hd.g[4], hd.g[5]
		for i := range s {
			sa, gsa := 0.0, 0.0
			for j := range s {
				ij := i*s + j
				sa += a[j] * prev[ij]
				gr[j] += gy[i] * next[ij]
				gS[ij] += gy[i] * r[j]
				gsa += gS[ij] * bb[j]
			}
			for j := range s {
				ij := i*s + j
				gw[j] += gS[ij] * prev[ij]
				gv[i] += gS[ij] * k[j]
				gk[j] += gS[ij] * v[i]
				gb[j] += gS[ij] * sa
				ga[j] += gsa * prev[ij]
				gS[ij] = gS[ij]*w[j] + gsa*a[j]
			}
		}
	}
}
