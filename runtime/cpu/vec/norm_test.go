package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestNormAtEveryLevel checks SqDev against its definition (Sum's order over (x-mean)²)
// and a float64 sum, and Normalize against Go's float64 arithmetic bit for bit, with
// and without gamma and beta, at every level on ragged lengths and unaligned starts.
func TestNormAtEveryLevel(t *testing.T) {
	defer func(a impl) { active = a }(active)
	r := rand.New(rand.NewPCG(5, 6))
	for _, im := range levels() {
		active = im
		for _, n := range []int{0, 1, 3, 7, 16, 17, 33, 257} {
			buf := make([]float32, 3*(n+1))
			for i := range buf {
				buf[i] = float32(r.NormFloat64()*3 + 1)
			}
			x, gamma, beta := buf[1:n+1], buf[n+2:2*n+2], buf[2*n+3:]
			name := fmt.Sprintf("%v/n=%d", im.level, n)
			mean := 0.75
			var p [16]float64
			whole := n &^ 15
			for i, v := range x[:whole] {
				d := float64(v) - mean
				p[i%16] += float64(d * d)
			}
			var a [4]float64
			for l := range a {
				a[l] = (p[l] + p[4+l]) + (p[8+l] + p[12+l])
			}
			want := (a[0] + a[2]) + (a[1] + a[3])
			exact := 0.0
			for i, v := range x {
				d := float64(v) - mean
				if i >= whole {
					want += float64(d * d)
				}
				exact += d * d
			}
			if got := SqDev(x, mean); math.Float64bits(got) != math.Float64bits(want) || math.Abs(got-exact) > 1e-9*(1+exact) {
				t.Errorf("%s: SqDev = %v, want %v (exactly %v)", name, got, want, exact)
			}
			for _, c := range []struct{ g, b []float32 }{{nil, nil}, {gamma, nil}, {nil, beta}, {gamma, beta}} {
				y := make([]float32, n)
				Normalize(y, x, c.g, c.b, mean, 1.25)
				for j, v := range x {
					o := (float64(v) - mean) * 1.25
					if c.g != nil {
						o = float64(o * float64(c.g[j]))
					}
					if c.b != nil {
						o += float64(c.b[j])
					}
					if math.Float32bits(y[j]) != math.Float32bits(float32(o)) {
						t.Fatalf("%s gamma=%v beta=%v: element %d = %v, want %v", name, c.g != nil, c.b != nil, j, y[j], float32(o))
					}
				}
			}
		}
	}
}

// TestNormGradPassesAtEveryLevel checks NormCentre, NormGradMid and NormGradOut against
// one float32 operation at a time (what the separate nodes compute), bit for bit, with
// and without dgp, gamma, m2 and the addend, and the row sums of NormCentre and
// NormGradMid against SumEach's of what they wrote, at every level on ragged row lengths
// (one and several of Sum's chunks), row counts and unaligned starts, values including
// zeros, infinities and NaN.
func TestNormGradPassesAtEveryLevel(t *testing.T) {
	defer func(a impl) { active = a }(active)
	r := rand.New(rand.NewPCG(7, 8))
	special := []float32{0, float32(math.Inf(1)), float32(math.NaN()), -0.0, 1e-40}
	for _, im := range levels() {
		active = im
		for _, n := range []int{1, 7, 8, 16, 33, 128, 257, 528} {
			for _, rows := range []int{1, 3, 16} {
				cnt := rows * n
				vals := func(k int) []float32 {
					v := make([]float32, k+1)
					for i := range v {
						v[i] = float32(r.NormFloat64() * 2)
						if r.IntN(4*n+16) == 0 { // about one row in four: most row sums stay finite
							v[i] = special[r.IntN(len(special))]
						}
					}
					return v[1:] // unaligned
				}
				x, g, gy, mean, rstd, m1, m2 := vals(cnt), vals(cnt), vals(cnt), vals(rows), vals(rows), vals(rows), vals(rows)
				name := fmt.Sprintf("%v/n=%d/rows=%d", im.level, n, rows)
				xc, sq := make([]float32, cnt), make([]float32, cnt)
				sums, want := make([]float64, 2*rows), make([]float64, 2*rows)
				// sameSums checks sums against SumEach's of the rows of each of xs.
				sameSums := func(what string, xs ...[]float32) {
					t.Helper()
					for i, v := range xs {
						SumEach(want[i*rows:(i+1)*rows], v, n)
					}
					for r := range len(xs) * rows {
						if math.Float64bits(sums[r]) != math.Float64bits(want[r]) && !(sums[r] != sums[r] && want[r] != want[r]) {
							t.Fatalf("%s: %s row sum %d = %v, want %v", name, what, r, sums[r], want[r])
						}
					}
				}
				NormCentre(xc, sq, x, mean, n, nil)
				xc0, sq0 := slices.Clone(xc), slices.Clone(sq)
				NormCentre(xc, sq, x, mean, n, sums)
				if !slices.Equal(f32bits(xc), f32bits(xc0)) || !slices.Equal(f32bits(sq), f32bits(sq0)) {
					t.Fatalf("%s: NormCentre wrote other values with the sums", name)
				}
				sameSums("NormCentre", sq)
				for j := range cnt {
					c := x[j] - mean[j/n]
					if !same(xc[j], c) || !same(sq[j], c*c) {
						t.Fatalf("%s: NormCentre element %d = %v, %v; want %v, %v", name, j, xc[j], sq[j], c, c*c)
					}
				}
				gamma := vals(n)
				for _, c := range []struct{ dgp, gamma bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
					xhat, p, gg := make([]float32, cnt), make([]float32, cnt), g
					var dgp, gam []float32
					if c.dgp {
						dgp = make([]float32, cnt)
					}
					if c.gamma {
						gg, gam = make([]float32, cnt), gamma
					}
					NormGradMid(xhat, p, dgp, gg, xc, gy, gam, rstd, n, nil)
					outs := [][]float32{xhat, p, dgp, gg}
					var was [][]uint32
					for _, o := range outs {
						was = append(was, f32bits(o))
					}
					NormGradMid(xhat, p, dgp, gg, xc, gy, gam, rstd, n, sums)
					for i, o := range outs {
						if !slices.Equal(f32bits(o), was[i]) {
							t.Fatalf("%s dgp=%v gamma=%v: NormGradMid wrote other values with the sums", name, c.dgp, c.gamma)
						}
					}
					sameSums(fmt.Sprintf("NormGradMid dgp=%v gamma=%v", c.dgp, c.gamma), p, gg)
					for j := range cnt {
						h, gv := xc[j]*rstd[j/n], g[j]
						if c.gamma {
							gv = gy[j] * gamma[j%n]
						}
						if !same(gg[j], gv) || !same(xhat[j], h) || !same(p[j], gv*h) || c.dgp && !same(dgp[j], gy[j]*h) {
							t.Fatalf("%s dgp=%v gamma=%v: NormGradMid element %d wrong", name, c.dgp, c.gamma, j)
						}
					}
				}
				for _, c := range []struct{ m2, add []float32 }{{nil, nil}, {m2, nil}, {nil, gy}, {m2, gy}} {
					dx := make([]float32, cnt)
					NormGradOut(dx, g, x, m1, c.m2, rstd, c.add, n)
					for j := range cnt {
						in := float32(x[j] * m1[j/n]) // rounded: no fused multiply-add
						if c.m2 != nil {
							in += c.m2[j/n]
						}
						want := rstd[j/n] * (g[j] - in)
						if c.add != nil {
							want = float32(want) + c.add[j]
						}
						if !same(dx[j], want) {
							t.Fatalf("%s m2=%v add=%v: NormGradOut element %d = %v, want %v", name, c.m2 != nil, c.add != nil, j, dx[j], want)
						}
					}
				}
			}
		}
	}
}

// f32bits returns the bits of x's elements.
func f32bits(x []float32) []uint32 {
	b := make([]uint32, len(x))
	for i, v := range x {
		b[i] = math.Float32bits(v)
	}
	return b
}

// same reports whether a and b have the same bits, or are both NaN (whose payload an
// instruction may choose).
func same(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}
