package cpu_test

import (
	"math"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// Float64 references of the recurrences, written from tensor/ops_ssm.go's equations
// one index at a time.

func at4(x []float64, t, h, s, bi, ti, hi, i int) float64 { return x[((bi*t+ti)*h+hi)*s+i] }

func TestSSMConv(t *testing.T) {
	e := newEnv(t)
	const b, tt, d, k = 2, 7, 5, 4
	x, xv := e.f32(b, tt, d)
	w, wv := e.f32(d, k)
	s, sv := e.f32(b, k-1, d)
	y := tensor.SSMConv(x, w, s)
	next := tensor.SSMConvState(x, s, k)
	outs := e.run(y, next)
	xp := func(bi, tau, c int) float64 {
		if tau < k-1 {
			return sv[(bi*(k-1)+tau)*d+c]
		}
		return xv[(bi*tt+tau-(k-1))*d+c]
	}
	var want, wantState []float64
	for bi := range b {
		for ti := range tt {
			for c := range d {
				var sum float64
				for j := range k {
					sum += wv[c*k+j] * xp(bi, ti+j, c)
				}
				want = append(want, sum)
			}
		}
	}
	for bi := range b {
		for tau := tt; tau < tt+k-1; tau++ {
			for c := range d {
				wantState = append(wantState, xp(bi, tau, c))
			}
		}
	}
	check(t, "ssm_conv", outs[0], tensor.Shape{b, tt, d}, want, 1e-5)
	check(t, "ssm_conv state", outs[1], tensor.Shape{b, k - 1, d}, wantState, 0)
}

func TestSSMScan(t *testing.T) {
	e := newEnv(t)
	const b, tt, d, n = 2, 6, 3, 4
	x, xv := e.f32(b, tt, d)
	dt, dtv := e.input(tensor.F32, 0.05, 0.8, b, tt, d)
	a, av := e.input(tensor.F32, -2, -0.1, d, n)
	bm, bv := e.f32(b, tt, n)
	cm, cv := e.f32(b, tt, n)
	h0, hv := e.f32(b, d, n)
	y, st := tensor.SSMScan(x, dt, a, bm, cm, h0)
	outs := e.run(y, st)
	wantY := make([]float64, b*tt*d)
	wantS := make([]float64, b*d*n)
	for bi := range b {
		for c := range d {
			h := append([]float64(nil), hv[(bi*d+c)*n:(bi*d+c+1)*n]...)
			for ti := range tt {
				delta, xx := dtv[(bi*tt+ti)*d+c], xv[(bi*tt+ti)*d+c]
				var sum float64
				for j := range n {
					h[j] = math.Exp(delta*av[c*n+j])*h[j] + delta*bv[(bi*tt+ti)*n+j]*xx
					sum += cv[(bi*tt+ti)*n+j] * h[j]
				}
				wantY[(bi*tt+ti)*d+c] = sum
			}
			copy(wantS[(bi*d+c)*n:], h)
		}
	}
	check(t, "ssm_scan y", outs[0], tensor.Shape{b, tt, d}, wantY, 1e-5)
	check(t, "ssm_scan state", outs[1], tensor.Shape{b, d, n}, wantS, 1e-5)
}

// headRef runs one per-head recurrence in float64 and returns y and the final states.
func headRef(op tensor.Op, b, tt, h, s int, in [][]float64, scale float64) (ys, states []float64) {
	ys = make([]float64, b*tt*h*s)
	states = make([]float64, b*h*s*s)
	s0 := in[len(in)-1]
	for bi := range b {
		for hi := range h {
			st := append([]float64(nil), s0[(bi*h+hi)*s*s:(bi*h+hi+1)*s*s]...)
			for ti := range tt {
				v := func(k, i int) float64 { return at4(in[k], tt, h, s, bi, ti, hi, i) }
				y := ys[((bi*tt+ti)*h+hi)*s:]
				switch op {
				case tensor.OpWKV6: // r, k, v, w, u
					for j := range s {
						for i := range s {
							y[j] += v(0, i) * (in[4][hi*s+i]*v(1, i)*v(2, j) + st[i*s+j])
						}
					}
					for i := range s {
						for j := range s {
							st[i*s+j] = v(3, i)*st[i*s+j] + v(1, i)*v(2, j)
						}
					}
				case tensor.OpGLA: // q, k, v, g
					for i := range s {
						for j := range s {
							st[i*s+j] = v(3, i)*st[i*s+j] + v(1, i)*v(2, j)
						}
					}
					for j := range s {
						for i := range s {
							y[j] += scale * v(0, i) * st[i*s+j]
						}
					}
				case tensor.OpWKV7: // r, w, k, v, a, b
					sa := make([]float64, s)
					for i := range s {
						for j := range s {
							sa[i] += v(4, j) * st[i*s+j]
						}
					}
					for i := range s {
						for j := range s {
							st[i*s+j] = st[i*s+j]*v(1, j) + v(3, i)*v(2, j) + sa[i]*v(5, j)
						}
					}
					for i := range s {
						for j := range s {
							y[i] += st[i*s+j] * v(0, j)
						}
					}
				}
			}
			copy(states[(bi*h+hi)*s*s:], st)
		}
	}
	return ys, states
}

func TestLinearAttentionRecurrences(t *testing.T) {
	const b, tt, h, s = 2, 37, 2, 4 // 37 tokens: more than one checkpoint chunk in the backward
	for _, op := range []tensor.Op{tensor.OpWKV6, tensor.OpGLA, tensor.OpWKV7} {
		t.Run(op.String(), func(t *testing.T) {
			e := newEnv(t)
			vec := func(lo, hi float64) (*tensor.Node, []float64) { return e.input(tensor.F32, lo, hi, b, tt, h, s) }
			var nodes []*tensor.Node
			var vals [][]float64
			add := func(n *tensor.Node, v []float64) { nodes, vals = append(nodes, n), append(vals, v) }
			var y, st *tensor.Node
			scale := 0.7
			switch op {
			case tensor.OpWKV6:
				for i := range 4 {
					if i == 3 {
						add(vec(0.5, 0.99))
					} else {
						add(vec(-1, 1))
					}
				}
				add(e.input(tensor.F32, -1, 1, h, s))
				add(e.f32(b, h, s, s))
				y, st = tensor.WKV6(nodes[0], nodes[1], nodes[2], nodes[3], nodes[4], nodes[5])
			case tensor.OpGLA:
				add(vec(-1, 1))
				add(vec(-1, 1))
				add(vec(-1, 1))
				add(vec(0.5, 0.99))
				add(e.f32(b, h, s, s))
				y, st = tensor.GLA(nodes[0], nodes[1], nodes[2], nodes[3], nodes[4], float32(scale))
			case tensor.OpWKV7:
				add(vec(-1, 1))
				add(vec(0.5, 0.99))
				add(vec(-0.5, 0.5))
				add(vec(-1, 1))
				add(vec(-0.3, 0))
				add(vec(0, 0.3))
				add(e.f32(b, h, s, s))
				y, st = tensor.WKV7(nodes[0], nodes[1], nodes[2], nodes[3], nodes[4], nodes[5], nodes[6])
			}
			outs := e.run(y, st)
			wy, ws := headRef(op, b, tt, h, s, vals, float64(float32(scale)))
			check(t, "y", outs[0], tensor.Shape{b, tt, h, s}, wy, 2e-5)
			check(t, "state", outs[1], tensor.Shape{b, h, s, s}, ws, 2e-5)
		})
	}
}
