package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSumsAtEveryLevel checks Sum against its definition (sixteen running sums, a
// fixed merge, the tail in order) and against a float64 sum, and SumInto against Go's
// arithmetic bit for bit, at every level on ragged lengths and unaligned starts.
func TestSumsAtEveryLevel(t *testing.T) {
	defer func(a impl) { active = a }(active)
	r := rand.New(rand.NewPCG(3, 4))
	for _, im := range levels() {
		active = im
		for _, n := range []int{0, 1, 7, 15, 16, 17, 33, 257, 1000} {
			buf := make([]float32, n+1)
			for i := range buf {
				buf[i] = float32(r.NormFloat64() * 100)
			}
			x := buf[1:] // an unaligned start
			name := fmt.Sprintf("%v/n=%d", im.level, n)
			var p [16]float64
			whole := n &^ 15
			for i, v := range x[:whole] {
				p[i%16] += float64(v)
			}
			var a [4]float64
			for l := range a {
				a[l] = (p[l] + p[4+l]) + (p[8+l] + p[12+l])
			}
			want := (a[0] + a[2]) + (a[1] + a[3])
			exact := 0.0
			for i, v := range x {
				if i >= whole {
					want += float64(v)
				}
				exact += float64(v)
			}
			if got := Sum(x); math.Float64bits(got) != math.Float64bits(want) || math.Abs(got-exact) > 1e-9*(1+math.Abs(exact)) {
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

// TestSumRows checks SumRows against SumInto row after row, bit for bit, at every level,
// for ragged column counts (strips of 32 and of 8 and a Go tail), strides wider than
// the columns and an unaligned start, with a float64 reference of the column sums.
func TestSumRows(t *testing.T) {
	defer func(a impl) { active = a }(active)
	r := rand.New(rand.NewPCG(5, 6))
	for _, im := range levels() {
		active = im
		for _, cols := range []int{1, 7, 8, 33, 45, 257} {
			for _, rows := range []int{0, 1, 7, 33} {
				stride := cols + r.IntN(3)
				buf := make([]float32, 1+max(0, (rows-1)*stride+cols))
				for i := range buf {
					buf[i] = float32(r.NormFloat64() * 100)
				}
				x := buf[1:]
				name := fmt.Sprintf("%v/cols=%d/rows=%d/stride=%d", im.level, cols, rows, stride)
				a, want := make([]float64, cols), make([]float64, cols)
				for j := range a {
					a[j] = r.NormFloat64()
					want[j] = a[j]
				}
				exact := slices.Clone(want)
				for k := range rows {
					SumInto(want, x[k*stride:k*stride+cols])
					for j := range exact {
						exact[j] += float64(x[k*stride+j])
					}
				}
				SumRows(a, x, rows, stride)
				for j := range a {
					if math.Float64bits(a[j]) != math.Float64bits(want[j]) || math.Abs(a[j]-exact[j]) > 1e-9*(1+math.Abs(exact[j])) {
						t.Fatalf("%s: column %d = %v, want %v (exactly %v)", name, j, a[j], want[j], exact[j])
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
