package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSumsAtEveryLevel checks Sum against its definition (sixteen float32 running sums
// folded into float64 ones every chunk, a fixed merge, the tail in order) bit for bit
// and against a float64 sum within the float32 lanes' error bound, and SumInto against
// Go's arithmetic bit for bit, at every level on ragged lengths (chunks whole and cut)
// and unaligned starts.
func TestSumsAtEveryLevel(t *testing.T) {
	defer func(a impl) { active = a }(active)
	r := rand.New(rand.NewPCG(3, 4))
	for _, im := range levels() {
		active = im
		for _, n := range []int{0, 1, 7, 15, 16, 17, 33, 255, 256, 257, 1000} {
			buf := make([]float32, n+1)
			for i := range buf {
				buf[i] = float32(r.NormFloat64() * 100)
			}
			x := buf[1:] // an unaligned start
			name := fmt.Sprintf("%v/n=%d", im.level, n)
			var q [16]float64
			var p [16]float32
			whole := n &^ 15
			for i, v := range x[:whole] {
				p[i%16] += v
				if i%sumChunk == sumChunk-1 || i == whole-1 {
					for k := range q {
						q[k] += float64(p[k])
					}
					p = [16]float32{}
				}
			}
			var a [4]float64
			for l := range a {
				a[l] = (q[l] + q[4+l]) + (q[8+l] + q[12+l])
			}
			want := (a[0] + a[2]) + (a[1] + a[3])
			exact, abs := 0.0, 0.0
			for i, v := range x {
				if i >= whole {
					want += float64(v)
				}
				exact += float64(v)
				abs += math.Abs(float64(v))
			}
			// Each lane's chunk adds at most sixteen values in float32.
			if got := Sum(x); math.Float64bits(got) != math.Float64bits(want) || math.Abs(got-exact) > 15*0x1p-24*abs+1e-9 {
				t.Errorf("%s: Sum = %v, want %v (exactly %v)", name, got, want, exact)
			}
			acc := make([]float64, n+1)
			wantAcc := make([]float64, n+1)
			for i := range acc {
				acc[i] = r.NormFloat64()
				wantAcc[i] = acc[i]
			}
			for i, v := range x {
				wantAcc[i] += float64(v)
			}
			SumInto(acc, x)
			for i := range acc {
				if math.Float64bits(acc[i]) != math.Float64bits(wantAcc[i]) {
					t.Fatalf("%s: SumInto element %d = %v, want %v", name, i, acc[i], wantAcc[i])
				}
			}
		}
	}
}

// TestSumSpecialValues checks that Sum keeps a NaN, an infinity and infinities of both
// signs (NaN) wherever they fall, at every level.
func TestSumSpecialValues(t *testing.T) {
	defer func(a impl) { active = a }(active)
	inf := float32(math.Inf(1))
	for _, im := range levels() {
		active = im
		for _, n := range []int{1, 7, 33, 257} {
			for _, at := range []int{0, n / 2, n - 1} {
				for _, c := range []struct {
					vals []float32
					want float64
				}{
					{[]float32{float32(math.NaN())}, math.NaN()},
					{[]float32{inf}, math.Inf(1)},
					{[]float32{-inf}, math.Inf(-1)},
					{[]float32{inf, -inf}, math.NaN()},
				} {
					x := make([]float32, n)
					for i := range x {
						x[i] = 1
					}
					for k, v := range c.vals {
						x[(at+k)%n] = v
					}
					if n == 1 && len(c.vals) > 1 {
						continue
					}
					got := Sum(x)
					if !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) {
						t.Errorf("%v n=%d at %d %v: Sum = %v, want %v", im.level, n, at, c.vals, got, c.want)
					}
				}
			}
		}
	}
}

// TestAddRows checks AddRows against Go's float32 additions row after row, bit for bit,
// at every level, for ragged column counts (strips of 64 and of 8 and a Go tail),
// strides wider than the columns and an unaligned start, and against a float64
// reference of the column sums within float32's error bound.
func TestAddRows(t *testing.T) {
	defer func(a impl) { active = a }(active)
	r := rand.New(rand.NewPCG(5, 6))
	for _, im := range levels() {
		active = im
		for _, cols := range []int{1, 7, 8, 33, 64, 65, 257} {
			for _, rows := range []int{0, 1, 7, 33} {
				stride := cols + r.IntN(3)
				buf := make([]float32, 1+max(0, (rows-1)*stride+cols))
				for i := range buf {
					buf[i] = float32(r.NormFloat64() * 100)
				}
				x := buf[1:]
				name := fmt.Sprintf("%v/cols=%d/rows=%d/stride=%d", im.level, cols, rows, stride)
				p, want := make([]float32, cols), make([]float32, cols)
				exact, abs := make([]float64, cols), make([]float64, cols)
				for j := range p {
					p[j] = float32(r.NormFloat64())
					want[j], exact[j], abs[j] = p[j], float64(p[j]), math.Abs(float64(p[j]))
				}
				for k := range rows {
					for j, v := range x[k*stride : k*stride+cols] {
						want[j] += v
						exact[j] += float64(v)
						abs[j] += math.Abs(float64(v))
					}
				}
				AddRows(p, x, rows, stride)
				for j := range p {
					if math.Float32bits(p[j]) != math.Float32bits(want[j]) || math.Abs(float64(p[j])-exact[j]) > float64(rows+1)*0x1p-24*abs[j] {
						t.Fatalf("%s: column %d = %v, want %v (exactly %v)", name, j, p[j], want[j], exact[j])
					}
				}
			}
		}
	}
}

// TestSumEach checks SumEach against Sum row by row, bit for bit, at every level, for
// rows of whole groups of sixteen (the assembly) and ragged ones.
func TestSumEach(t *testing.T) {
	defer func(a impl) { active = a }(active)
	r := rand.New(rand.NewPCG(7, 8))
	for _, im := range levels() {
		active = im
		for _, row := range []int{1, 7, 16, 32, 48, 128, 257} {
			for _, rows := range []int{0, 1, 7, 33} {
				buf := make([]float32, rows*row+1)
				for i := range buf {
					buf[i] = float32(r.NormFloat64() * 100)
				}
				x := buf[1:] // an unaligned start
				d := make([]float64, rows)
				SumEach(d, x, row)
				for k := range d {
					if want := Sum(x[k*row : (k+1)*row]); math.Float64bits(d[k]) != math.Float64bits(want) {
						t.Fatalf("%v row=%d rows=%d: row %d sums to %v, Sum gives %v", im.level, row, rows, k, d[k], want)
					}
				}
			}
		}
	}
}
