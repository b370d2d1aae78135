package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
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
