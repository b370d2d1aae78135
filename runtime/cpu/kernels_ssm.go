package cpu

import (
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// The state-space and linear-attention recurrences (tensor/ops_ssm.go has their
// equations). Sequences and heads are independent, so the kernels split (sequence,
// head) pairs, or (sequence, channel) pairs for Mamba, across the cores; time runs in
// order inside each. The backward kernels walk time in reverse carrying the gradient of
// the state, and recompute the forward states chunk by chunk from checkpoints kept
// every ssmChunk tokens, so their scratch grows with √T·S² rather than T·S². Gradients
// shared by every sequence (a head's bonus u, Mamba's A and the convolution's taps) are
// summed over sequences in float64; those shared by every channel (Mamba's B and C)
// go to per-worker partial sums added at the end.

func init() {
	register(tensor.OpSSMConv, floatTypes, ssmConvFactory)
	register(tensor.OpSSMConvGrad, floatTypes, ssmConvGradFactory)
	register(tensor.OpSSMScan, floatTypes, ssmScanFactory)
	register(tensor.OpSSMScanGrad, floatTypes, ssmScanGradFactory)
	for _, op := range []tensor.Op{tensor.OpWKV6, tensor.OpGLA, tensor.OpWKV7} {
		register(op, floatTypes, headsFactory)
	}
	for _, op := range []tensor.Op{tensor.OpWKV6Grad, tensor.OpGLAGrad, tensor.OpWKV7Grad} {
		register(op, floatTypes, headsGradFactory)
	}
}

// ssmChunk is the number of tokens between state checkpoints in the backward kernels.
const ssmChunk = 32

// gradParts slices a backward op's flat output into the gradients of the forward's
// inputs (all but the last input of n, which is the output gradient).
func gradParts(n *tensor.Node, out []float32) [][]float32 {
	parts := make([][]float32, len(n.Inputs())-1)
	off := 0
	for i := range parts {
		size := n.Input(i).Shape().Size()
		parts[i] = out[off : off+size]
		off += size
	}
	return parts
}

// ---- Mamba's causal convolution ----

func ssmConvFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	x, w, s, y := f32s(in[0]), f32s(in[1]), f32s(in[2]), f32s(out)
	xs := n.Input(0).Shape()
	b, t, d, k := xs[0], xs[1], xs[2], n.Input(1).Shape()[1]
	// xp returns row τ of [state; x] for sequence bi.
	xp := func(bi, tau int) []float32 {
		if tau < k-1 {
			return s[(bi*(k-1)+tau)*d : (bi*(k-1)+tau+1)*d]
		}
		return x[(bi*t+tau-(k-1))*d : (bi*t+tau-(k-1)+1)*d]
	}
	return func() error {
		parallel.For(b*t, max(1, elemGrain/max(d*k, 1)), func(lo, hi int) {
			for row := lo; row < hi; row++ {
				bi, ti := row/t, row%t
				yr := y[row*d : (row+1)*d]
				clear(yr)
				for j := range k {
					src := xp(bi, ti+j)
					for c := range d {
						yr[c] += w[c*k+j] * src[c]
					}
				}
			}
		})
		return nil
	}, nil
}

func ssmConvGradFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	x, w, s, gy := f32s(in[0]), f32s(in[1]), f32s(in[2]), f32s(in[3])
	parts := gradParts(n, f32s(out))
	dx, dw, ds := parts[0], parts[1], parts[2]
	xs := n.Input(0).Shape()
	b, t, d, k := xs[0], xs[1], xs[2], n.Input(1).Shape()[1]
	xp := func(bi, tau int) []float32 {
		if tau < k-1 {
			return s[(bi*(k-1)+tau)*d : (bi*(k-1)+tau+1)*d]
		}
		return x[(bi*t+tau-(k-1))*d : (bi*t+tau-(k-1)+1)*d]
	}
	// dxp returns the gradient row of [state; x] at τ.
	dxp := func(bi, tau int) []float32 {
		if tau < k-1 {
			return ds[(bi*(k-1)+tau)*d : (bi*(k-1)+tau+1)*d]
		}
		return dx[(bi*t+tau-(k-1))*d : (bi*t+tau-(k-1)+1)*d]
	}
	span := t + k - 1
	return func() error {
		// ∂xp[τ, c] = Σ_j w[c, j]·gy[τ−j, c] over the taps that reach a token.
		parallel.For(b*span, max(1, elemGrain/max(d*k, 1)), func(lo, hi int) {
			for row := lo; row < hi; row++ {
				bi, tau := row/span, row%span
				g := dxp(bi, tau)
				clear(g)
				for j := range k {
					ti := tau - j
					if ti < 0 || ti >= t {
						continue
					}
					gr := gy[(bi*t+ti)*d : (bi*t+ti+1)*d]
					for c := range d {
						g[c] += w[c*k+j] * gr[c]
					}
				}
			}
		})
		// ∂w[c, j] = Σ_{b,t} gy[b, t, c]·xp[b, t+j, c], in float64 over the sum.
		parallel.For(d, max(1, elemGrain/max(b*t*k, 1)), func(lo, hi int) {
			acc := make([]float64, (hi-lo)*k)
			for bi := range b {
				for ti := range t {
					gr := gy[(bi*t+ti)*d : (bi*t+ti+1)*d]
					for j := range k {
						src := xp(bi, ti+j)
						for c := lo; c < hi; c++ {
							acc[(c-lo)*k+j] += float64(gr[c]) * float64(src[c])
						}
					}
				}
			}
			for c := lo; c < hi; c++ {
				for j := range k {
					dw[c*k+j] = float32(acc[(c-lo)*k+j])
				}
			}
		})
		return nil
	}, nil
}

// ---- Mamba's selective scan ----

// scanDims are the sizes of a selective scan: batch, time, channels, state.
type scanDims struct{ b, t, d, n int }

func scanDimsOf(n *tensor.Node) scanDims {
	xs := n.Input(0).Shape()
	return scanDims{xs[0], xs[1], xs[2], n.Input(2).Shape()[1]}
}

func ssmScanFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	x, dt, a, bm, cm, h0 := f32s(in[0]), f32s(in[1]), f32s(in[2]), f32s(in[3]), f32s(in[4]), f32s(in[5])
	o := f32s(out)
	z := scanDimsOf(n)
	per := z.t*z.d + z.d*z.n // packed output per sequence
	return func() error {
		parallel.For(z.b*z.d, max(1, elemGrain/max(z.t*z.n, 1)), func(lo, hi int) {
			for p := lo; p < hi; p++ {
				bi, c := p/z.d, p%z.d
				h := o[bi*per+z.t*z.d+c*z.n : bi*per+z.t*z.d+(c+1)*z.n]
				copy(h, h0[(bi*z.d+c)*z.n:(bi*z.d+c+1)*z.n])
				ar := a[c*z.n : (c+1)*z.n]
				for ti := range z.t {
					i := (bi*z.t+ti)*z.d + c
					delta, xv := dt[i], x[i]
					br := bm[(bi*z.t+ti)*z.n : (bi*z.t+ti+1)*z.n]
					cr := cm[(bi*z.t+ti)*z.n : (bi*z.t+ti+1)*z.n]
					var y float32
					for j := range h {
						h[j] = vec.Expf(delta*ar[j])*h[j] + delta*br[j]*xv
						y += cr[j] * h[j]
					}
					o[bi*per+ti*z.d+c] = y
				}
			}
		})
		return nil
	}, nil
}

func ssmScanGradFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	x, dt, a, bm, cm, h0, gy := f32s(in[0]), f32s(in[1]), f32s(in[2]), f32s(in[3]), f32s(in[4]), f32s(in[5]), f32s(in[6])
	parts := gradParts(n, f32s(out))
	dx, ddt, da, dbm, dcm, dh0 := parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]
	z := scanDimsOf(n)
	per := z.t*z.d + z.d*z.n
	workers := max(1, min(parallel.Workers(), z.d))
	// Each worker owns a range of channels and keeps its own sums of ∂B and ∂C.
	partB := make([][]float32, workers)
	partC := make([][]float32, workers)
	hs := make([][]float32, workers)    // the states of one (sequence, channel), all of time
	decay := make([][]float32, workers) // and their decay factors exp(Δ·A)
	for i := range workers {
		partB[i], partC[i] = make([]float32, len(dbm)), make([]float32, len(dcm))
		hs[i], decay[i] = make([]float32, (z.t+1)*z.n), make([]float32, z.t*z.n)
	}
	return func() error {
		parallel.Run(workers, func(wi int) {
			pb, pc, hist, dec := partB[wi], partC[wi], hs[wi], decay[wi]
			clear(pb)
			clear(pc)
			lam := make([]float32, z.n)
			dA := make([]float64, z.n)
			for c := wi * z.d / workers; c < (wi+1)*z.d/workers; c++ {
				ar := a[c*z.n : (c+1)*z.n]
				clear(dA)
				for bi := range z.b {
					// Forward again, keeping every state: hist[t+1] is h_t, hist[0] h0.
					copy(hist[:z.n], h0[(bi*z.d+c)*z.n:(bi*z.d+c+1)*z.n])
					for ti := range z.t {
						i := (bi*z.t+ti)*z.d + c
						delta, xv := dt[i], x[i]
						br := bm[(bi*z.t+ti)*z.n : (bi*z.t+ti+1)*z.n]
						prev, cur := hist[ti*z.n:(ti+1)*z.n], hist[(ti+1)*z.n:(ti+2)*z.n]
						e := dec[ti*z.n : (ti+1)*z.n]
						for j := range cur {
							e[j] = vec.Expf(delta * ar[j])
							cur[j] = e[j]*prev[j] + delta*br[j]*xv
						}
					}
					copy(lam, gy[bi*per+z.t*z.d+c*z.n:bi*per+z.t*z.d+(c+1)*z.n])
					for ti := z.t - 1; ti >= 0; ti-- {
						i := (bi*z.t+ti)*z.d + c
						delta, xv, g := dt[i], x[i], gy[bi*per+ti*z.d+c]
						row := (bi*z.t + ti) * z.n
						br, cr := bm[row:row+z.n], cm[row:row+z.n]
						prev, cur := hist[ti*z.n:(ti+1)*z.n], hist[(ti+1)*z.n:(ti+2)*z.n]
						es := dec[ti*z.n : (ti+1)*z.n]
						var dDelta, dX float32
						for j := range lam {
							l := lam[j] + cr[j]*g // ∂L/∂h_t
							pc[row+j] += g * cur[j]
							e := es[j]
							dAt := l * prev[j] * e // ∂L/∂(Δ·A) through the decay
							dDelta += dAt*ar[j] + l*br[j]*xv
							dA[j] += float64(dAt * delta)
							pb[row+j] += l * delta * xv
							dX += l * delta * br[j]
							lam[j] = e * l
						}
						ddt[i], dx[i] = dDelta, dX
					}
					copy(dh0[(bi*z.d+c)*z.n:(bi*z.d+c+1)*z.n], lam)
				}
				for j := range dA {
					da[c*z.n+j] = float32(dA[j])
				}
			}
		})
		for i := range dbm {
			var sb, sc float32
			for w := range workers {
				sb += partB[w][i]
				sc += partC[w][i]
			}
			dbm[i], dcm[i] = sb, sc
		}
		return nil
	}, nil
}

// ---- RWKV-6, GLA and RWKV-7: per-head matrix states ----

// heads are the sizes of a per-head recurrence and the layout of its vectors.
type heads struct {
	b, t, h, s int
}

func headsOf(n *tensor.Node) heads {
	xs := n.Input(0).Shape()
	return heads{xs[0], xs[1], xs[2], xs[3]}
}

// vec returns the S values of a [B, T, H, S] input at (bi, ti, hi).
func (z heads) vec(x []float32, bi, ti, hi int) []float32 {
	o := ((bi*z.t+ti)*z.h + hi) * z.s
	return x[o : o+z.s]
}

// packed returns, for sequence bi of a packed [B, T·H·S + H·S·S] tensor, the output
// vector of (ti, hi), and the state of head hi.
func (z heads) out(o []float32, bi, ti, hi int) []float32 {
	off := bi*(z.t*z.h*z.s+z.h*z.s*z.s) + (ti*z.h+hi)*z.s
	return o[off : off+z.s]
}

func (z heads) state(o []float32, bi, hi int) []float32 {
	off := bi*(z.t*z.h*z.s+z.h*z.s*z.s) + z.t*z.h*z.s + hi*z.s*z.s
	return o[off : off+z.s*z.s]
}

// initState returns the initial state (the last input, [B, H, S, S]) of (bi, hi).
func (z heads) initState(s0 []float32, bi, hi int) []float32 {
	off := (bi*z.h + hi) * z.s * z.s
	return s0[off : off+z.s*z.s]
}

// headStep advances one head's state st by token ti and, when y is not nil, writes the
// token's output: the forward recurrence of op.
func headStep(op tensor.Op, z heads, in [][]float32, scale float32, bi, ti, hi int, st, y []float32, sa []float32) {
	s := z.s
	switch op {
	case tensor.OpWKV6:
		r, k, v, w := z.vec(in[0], bi, ti, hi), z.vec(in[1], bi, ti, hi), z.vec(in[2], bi, ti, hi), z.vec(in[3], bi, ti, hi)
		u := in[4][hi*s : (hi+1)*s]
		if y != nil {
			clear(y)
		}
		for i := range s {
			row := st[i*s : (i+1)*s]
			if y != nil {
				rku := r[i] * u[i] * k[i]
				for j := range row {
					y[j] += r[i]*row[j] + rku*v[j]
				}
			}
			for j := range row {
				row[j] = w[i]*row[j] + k[i]*v[j]
			}
		}
	case tensor.OpGLA:
		q, k, v, g := z.vec(in[0], bi, ti, hi), z.vec(in[1], bi, ti, hi), z.vec(in[2], bi, ti, hi), z.vec(in[3], bi, ti, hi)
		if y != nil {
			clear(y)
		}
		for i := range s {
			row := st[i*s : (i+1)*s]
			for j := range row {
				row[j] = g[i]*row[j] + k[i]*v[j]
			}
			if y != nil {
				qi := scale * q[i]
				for j := range row {
					y[j] += qi * row[j]
				}
			}
		}
	case tensor.OpWKV7:
		r, w, k, v, a, b := z.vec(in[0], bi, ti, hi), z.vec(in[1], bi, ti, hi), z.vec(in[2], bi, ti, hi),
			z.vec(in[3], bi, ti, hi), z.vec(in[4], bi, ti, hi), z.vec(in[5], bi, ti, hi)
		for i := range s {
			row := st[i*s : (i+1)*s]
			var si float32
			for j := range row {
				si += a[j] * row[j]
			}
			sa[i] = si
			var yi float32
			for j := range row {
				row[j] = row[j]*w[j] + v[i]*k[j] + si*b[j]
				yi += row[j] * r[j]
			}
			if y != nil {
				y[i] = yi
			}
		}
	}
}

func glaScale(n *tensor.Node) float32 {
	if at, ok := n.Attr().(tensor.GLAAttr); ok {
		return at.Scale
	}
	return 0
}

func headsFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	z := headsOf(n)
	ins := make([][]float32, len(in))
	for i, b := range in {
		ins[i] = f32s(b)
	}
	o, s0 := f32s(out), ins[len(ins)-1]
	op, scale := n.Op(), glaScale(n)
	return func() error {
		parallel.For(z.b*z.h, 1, func(lo, hi int) {
			sa := make([]float32, z.s)
			for p := lo; p < hi; p++ {
				bi, h := p/z.h, p%z.h
				st := z.state(o, bi, h)
				copy(st, z.initState(s0, bi, h))
				for ti := range z.t {
					headStep(op, z, ins, scale, bi, ti, h, st, z.out(o, bi, ti, h), sa)
				}
			}
		})
		return nil
	}, nil
}

// headScratch is one worker's memory for a backward pass over one head.
type headScratch struct {
	checkpoints []float32 // the state before every chunk
	chunk       []float32 // chunk[i] is the state after token t0+i−1 (chunk[0] = checkpoint)
	lam, sa     []float32 // ∂L/∂S carried backwards; WKV7's a·S of a token
	dsa         []float32
	du          []float64 // WKV6: this worker's share of ∂u, all heads
}

func headsGradFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	z := headsOf(n)
	ins := make([][]float32, len(in)-1)
	for i := range ins {
		ins[i] = f32s(in[i])
	}
	gy := f32s(in[len(in)-1])
	grads := gradParts(n, f32s(out))
	fwd := map[tensor.Op]tensor.Op{tensor.OpWKV6Grad: tensor.OpWKV6, tensor.OpGLAGrad: tensor.OpGLA, tensor.OpWKV7Grad: tensor.OpWKV7}[n.Op()]
	scale := glaScale(n)
	ss := z.s * z.s
	chunks := (z.t + ssmChunk - 1) / ssmChunk
	workers := max(1, min(parallel.Workers(), z.b*z.h))
	scratch := make([]headScratch, workers)
	for i := range scratch {
		scratch[i] = headScratch{checkpoints: make([]float32, max(chunks, 1)*ss), chunk: make([]float32, (ssmChunk+1)*ss),
			lam: make([]float32, ss), sa: make([]float32, z.s), dsa: make([]float32, z.s), du: make([]float64, z.h*z.s)}
	}
	return func() error {
		parallel.Run(workers, func(wi int) {
			sc := &scratch[wi]
			clear(sc.du)
			for p := wi * z.b * z.h / workers; p < (wi+1)*z.b*z.h/workers; p++ {
				headBackward(fwd, z, ins, gy, grads, scale, p/z.h, p%z.h, sc)
			}
		})
		if fwd == tensor.OpWKV6 {
			du := grads[4]
			for i := range du {
				var s float64
				for w := range scratch {
					s += scratch[w].du[i]
				}
				du[i] = float32(s)
			}
		}
		return nil
	}, nil
}

// headBackward runs the reverse pass of one (sequence, head).
func headBackward(op tensor.Op, z heads, in [][]float32, gy []float32, grads [][]float32, scale float32, bi, hi int, sc *headScratch) {
	s, ss := z.s, z.s*z.s
	// Forward, keeping the state before each chunk.
	st := sc.chunk[:ss]
	copy(st, z.initState(in[len(in)-1], bi, hi))
	for ti := range z.t {
		if ti%ssmChunk == 0 {
			copy(sc.checkpoints[ti/ssmChunk*ss:], st)
		}
		headStep(op, z, in, scale, bi, ti, hi, st, nil, sc.sa)
	}
	lam := sc.lam
	copy(lam, z.state(gy, bi, hi))
	for c := (z.t+ssmChunk-1)/ssmChunk - 1; c >= 0; c-- {
		t0, t1 := c*ssmChunk, min(z.t, (c+1)*ssmChunk)
		copy(sc.chunk[:ss], sc.checkpoints[c*ss:(c+1)*ss])
		for ti := t0; ti < t1; ti++ {
			i := ti - t0
			next := sc.chunk[(i+1)*ss : (i+2)*ss]
			copy(next, sc.chunk[i*ss:(i+1)*ss])
			headStep(op, z, in, scale, bi, ti, hi, next, nil, sc.sa)
		}
		for ti := t1 - 1; ti >= t0; ti-- {
			prev := sc.chunk[(ti-t0)*ss : (ti-t0+1)*ss]
			cur := sc.chunk[(ti-t0+1)*ss : (ti-t0+2)*ss]
			g := z.out(gy, bi, ti, hi)
			switch op {
			case tensor.OpWKV6:
				wkv6Back(z, in, grads, bi, ti, hi, prev, lam, g, sc.du[hi*s:(hi+1)*s])
			case tensor.OpGLA:
				glaBack(z, in, grads, scale, bi, ti, hi, prev, cur, lam, g)
			case tensor.OpWKV7:
				wkv7Back(z, in, grads, bi, ti, hi, prev, cur, lam, g, sc.sa, sc.dsa)
			}
		}
	}
	copy(z.initState(grads[len(grads)-1], bi, hi), lam)
}

// wkv6Back computes token ti's gradients from lam = ∂L/∂S_t and turns lam into ∂L/∂S_{t−1}.
func wkv6Back(z heads, in, grads [][]float32, bi, ti, hi int, prev, lam, g []float32, du []float64) {
	s := z.s
	r, k, v, w := z.vec(in[0], bi, ti, hi), z.vec(in[1], bi, ti, hi), z.vec(in[2], bi, ti, hi), z.vec(in[3], bi, ti, hi)
	u := in[4][hi*s : (hi+1)*s]
	dr, dk, dv, dw := z.vec(grads[0], bi, ti, hi), z.vec(grads[1], bi, ti, hi), z.vec(grads[2], bi, ti, hi), z.vec(grads[3], bi, ti, hi)
	var gv, ruk float32
	for j := range s {
		gv += g[j] * v[j]
	}
	clear(dv)
	for i := range s {
		ruk += r[i] * u[i] * k[i]
		lrow, prow := lam[i*s:(i+1)*s], prev[i*s:(i+1)*s]
		var gs, lv, lp float32
		for j := range s {
			gs += g[j] * prow[j]
			lv += lrow[j] * v[j]
			lp += lrow[j] * prow[j]
			dv[j] += lrow[j] * k[i]
		}
		dr[i] = u[i]*k[i]*gv + gs
		du[i] += float64(r[i] * k[i] * gv)
		dk[i] = r[i]*u[i]*gv + lv
		dw[i] = lp
		for j := range s {
			lrow[j] = w[i]*lrow[j] + r[i]*g[j]
		}
	}
	for j := range s {
		dv[j] += g[j] * ruk
	}
}

func glaBack(z heads, in, grads [][]float32, scale float32, bi, ti, hi int, prev, cur, lam, gyv []float32) {
	s := z.s
	q, k, v, g := z.vec(in[0], bi, ti, hi), z.vec(in[1], bi, ti, hi), z.vec(in[2], bi, ti, hi), z.vec(in[3], bi, ti, hi)
	dq, dk, dv, dg := z.vec(grads[0], bi, ti, hi), z.vec(grads[1], bi, ti, hi), z.vec(grads[2], bi, ti, hi), z.vec(grads[3], bi, ti, hi)
	clear(dv)
	for i := range s {
		lrow, prow, crow := lam[i*s:(i+1)*s], prev[i*s:(i+1)*s], cur[i*s:(i+1)*s]
		qi := scale * q[i]
		var gsum, lv, lp float32
		for j := range s {
			lrow[j] += qi * gyv[j] // ∂L/∂S_t
			gsum += gyv[j] * crow[j]
			lv += lrow[j] * v[j]
			lp += lrow[j] * prow[j]
			dv[j] += lrow[j] * k[i]
		}
		dq[i] = scale * gsum
		dk[i] = lv
		dg[i] = lp
		for j := range s {
			lrow[j] *= g[i]
		}
	}
}

func wkv7Back(z heads, in, grads [][]float32, bi, ti, hi int, prev, cur, lam, gyv, sa, dsa []float32) {
	s := z.s
	r, w, k, v, a, b := z.vec(in[0], bi, ti, hi), z.vec(in[1], bi, ti, hi), z.vec(in[2], bi, ti, hi),
		z.vec(in[3], bi, ti, hi), z.vec(in[4], bi, ti, hi), z.vec(in[5], bi, ti, hi)
	dr, dw, dk, dv, da, db := z.vec(grads[0], bi, ti, hi), z.vec(grads[1], bi, ti, hi), z.vec(grads[2], bi, ti, hi),
		z.vec(grads[3], bi, ti, hi), z.vec(grads[4], bi, ti, hi), z.vec(grads[5], bi, ti, hi)
	for _, d := range [][]float32{dr, dw, dk, da, db} {
		clear(d)
	}
	for i := range s {
		lrow, prow, crow := lam[i*s:(i+1)*s], prev[i*s:(i+1)*s], cur[i*s:(i+1)*s]
		var si float32
		for j := range s {
			si += a[j] * prow[j]
		}
		sa[i] = si
		var vi, dsi float32
		for j := range s {
			lrow[j] += gyv[i] * r[j] // ∂L/∂S_t
			dr[j] += gyv[i] * crow[j]
			dw[j] += lrow[j] * prow[j]
			dk[j] += lrow[j] * v[i]
			db[j] += lrow[j] * si
			vi += lrow[j] * k[j]
			dsi += lrow[j] * b[j]
		}
		dv[i], dsa[i] = vi, dsi
	}
	for i := range s {
		lrow, prow := lam[i*s:(i+1)*s], prev[i*s:(i+1)*s]
		for j := range s {
			da[j] += dsa[i] * prow[j]
			lrow[j] = lrow[j]*w[j] + dsa[i]*a[j]
		}
	}
}
