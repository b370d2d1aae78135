package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestElementwiseAtEveryLevel compares Arith, Compare, Where32 and Relu at every level with
// Go's operators, bit for bit, on ragged lengths in every operand pattern, with NaN,
// infinities and signed zeros among the values.
func TestElementwiseAtEveryLevel(t *testing.T) {
	defer func(a impl) { active = a }(active)
	r := rand.New(rand.NewPCG(7, 8))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	special := []float32{nan, inf, -inf, 0, float32(math.Copysign(0, -1)), 1, -1}
	value := func() float32 {
		if r.IntN(6) == 0 {
			return special[r.IntN(len(special))]
		}
		return float32(r.NormFloat64())
	}
	same := func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) || x != x && y != y }
	for _, im := range levels() {
		active = im
		for _, n := range []int{0, 1, 7, 8, 9, 16, 33, 257} {
			a, b := make([]float32, n+1), make([]float32, n+1)
			c := make([]byte, n)
			for i := range a {
				a[i], b[i] = value(), value()
			}
			for i := range c {
				c[i] = byte(r.IntN(2))
			}
			for _, pat := range [][2]int{{1, 1}, {1, 0}, {0, 1}} {
				sa, sb := pat[0], pat[1]
				name := fmt.Sprintf("%v/n=%d/sa=%d,sb=%d", im.level, n, sa, sb)
				d := make([]float32, n)
				for op, f := range []func(x, y float32) float32{
					func(x, y float32) float32 { return x + y }, func(x, y float32) float32 { return x - y },
					func(x, y float32) float32 { return x * y }, func(x, y float32) float32 { return x / y },
				} {
					Arith(ArithOp(op), d, a, sa, b, sb)
					for i := range d {
						if want := f(a[i*sa], b[i*sb]); !same(d[i], want) {
							t.Fatalf("%s: Arith op %d element %d: %v, want %v", name, op, i, d[i], want)
						}
					}
				}
				db := make([]byte, n)
				for op, f := range []func(x, y float32) bool{
					func(x, y float32) bool { return x == y }, func(x, y float32) bool { return x != y },
					func(x, y float32) bool { return x < y }, func(x, y float32) bool { return x <= y },
					func(x, y float32) bool { return x > y }, func(x, y float32) bool { return x >= y },
				} {
					Compare(CompareOp(op), db, a, sa, b, sb)
					for i := range db {
						if want := f(a[i*sa], b[i*sb]); db[i] != map[bool]byte{false: 0, true: 1}[want] {
							t.Fatalf("%s: Compare op %d element %d (%v, %v): %d, want %v", name, op, i, a[i*sa], b[i*sb], db[i], want)
						}
					}
				}
				ua, ub := make([]uint32, len(a)), make([]uint32, len(b))
				for i := range a {
					ua[i], ub[i] = math.Float32bits(a[i]), math.Float32bits(b[i])
				}
				du := make([]uint32, n)
				Where32(du, c, ua, sa, ub, sb)
				for i := range du {
					want := ub[i*sb]
					if c[i] != 0 {
						want = ua[i*sa]
					}
					if du[i] != want {
						t.Fatalf("%s: Where32 element %d: %#x, want %#x", name, i, du[i], want)
					}
				}
			}
			d := make([]float32, n)
			Relu(d, a[:n])
			for i := range d {
				if want := max(a[i], 0); math.Float32bits(d[i]) != math.Float32bits(want) && !(d[i] != d[i] && want != want) {
					t.Fatalf("%v/n=%d: Relu element %d of %v: %v, want %v", im.level, n, i, a[i], d[i], want)
				}
			}
		}
	}
}

// TestSpread checks Spread at every level on ragged row lengths and row counts.
func TestSpread(t *testing.T) {
	defer func(a impl) { active = a }(active)
	for _, im := range levels() {
		active = im
		for _, row := range []int{1, 7, 8, 33, 257} {
			for _, rows := range []int{0, 1, 7, 33} {
				v := make([]uint32, rows)
				for r := range v {
					v[r] = uint32(r*2654435761 + 1)
				}
				d := make([]uint32, rows*row+1)
				d[len(d)-1] = 42
				Spread(d, v, row)
				for i, x := range d[:rows*row] {
					if x != v[i/row] {
						t.Fatalf("%v row=%d rows=%d: element %d = %d, want %d", im.level, row, rows, i, x, v[i/row])
					}
				}
				if d[len(d)-1] != 42 {
					t.Fatalf("%v row=%d rows=%d: wrote past the rows", im.level, row, rows)
				}
			}
		}
	}
}

// TestArithRows checks ArithRows against Go's arithmetic bit for bit at every level, for
// every operation, both orders and ragged row lengths and counts, with special values.
func TestArithRows(t *testing.T) {
	defer func(a impl) { active = a }(active)
	r := rand.New(rand.NewPCG(9, 10))
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	special := []float32{0, float32(math.Copysign(0, -1)), inf, -inf, nan, 1e-40}
	ops := []struct {
		op ArithOp
		f  func(x, y float32) float32
	}{{Add, func(x, y float32) float32 { return x + y }}, {Sub, func(x, y float32) float32 { return x - y }},
		{Mul, func(x, y float32) float32 { return x * y }}, {Div, func(x, y float32) float32 { return x / y }}}
	for _, im := range levels() {
		active = im
		for _, n := range []int{1, 7, 8, 13, 33, 128} {
			for _, rows := range []int{0, 1, 7, 33} {
				a, row := make([]float32, rows*n+1), make([]float32, n)
				for i := range a {
					a[i] = float32(r.NormFloat64())
					if r.IntN(10) == 0 {
						a[i] = special[r.IntN(len(special))]
					}
				}
				for i := range row {
					row[i] = float32(r.NormFloat64())
				}
				row[r.IntN(n)] = special[r.IntN(len(special))]
				a = a[1:] // an unaligned start
				for _, o := range ops {
					for _, first := range []bool{false, true} {
						d := make([]float32, rows*n)
						ArithRows(o.op, d, a, row, first)
						for i, v := range d {
							want := o.f(a[i], row[i%n])
							if first {
								want = o.f(row[i%n], a[i])
							}
							if math.Float32bits(v) != math.Float32bits(want) && !(v != v && want != want) {
								t.Fatalf("%v op %d n=%d rows=%d first=%v: element %d = %v, want %v", im.level, o.op, n, rows, first, i, v, want)
							}
						}
					}
				}
			}
		}
	}
}
