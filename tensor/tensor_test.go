package tensor

import (
	"math"
	"testing"
)

// TestAtAndArgMax reads elements by position and takes arg-maxes along each axis.
func TestAtAndArgMax(t *testing.T) {
	p, err := FromFloat32s(Shape{2, 3}, []float32{0.1, 0.7, 0.2, 0.5, 0.5, float32(math.NaN())})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.At(1, 0); got != 0.5 {
		t.Fatalf("At(1, 0) = %v", got)
	}
	cases := []struct {
		axis  int
		shape Shape
		want  []int64
	}{
		{-1, Shape{2}, []int64{1, 0}}, // a tie keeps the first; NaN never wins
		{1, Shape{2}, []int64{1, 0}},
		{0, Shape{3}, []int64{1, 0, 0}},
	}
	for _, tc := range cases {
		a := p.ArgMax(tc.axis)
		if a.DType() != I64 || !a.Shape().Equal(tc.shape) {
			t.Fatalf("ArgMax(%d): %v %v", tc.axis, a.DType(), a.Shape())
		}
		for i, w := range tc.want {
			if a.Int64s()[i] != w {
				t.Fatalf("ArgMax(%d) = %v, want %v", tc.axis, a.Int64s(), tc.want)
			}
		}
	}
	for _, bad := range []func(){func() { p.At(2, 0) }, func() { p.At(0) }, func() { p.ArgMax(2) }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("a bad position did not panic")
				}
			}()
			bad()
		}()
	}
}
