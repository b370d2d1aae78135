package tensor

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gml-dev/gml/internal/sysmem"
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

func TestNewTooLargeIsAnError(t *testing.T) {
	for _, shape := range []Shape{{1 << 38}, {1 << 20, 1 << 20}, {1 << 40, 1 << 40, 1 << 40}} {
		func() {
			defer func() {
				err, _ := recover().(error)
				var tl *sysmem.TooLargeError
				if !errors.As(err, &tl) || !strings.Contains(err.Error(), "tensor.New(f32") || !strings.Contains(err.Error(), "available") {
					t.Errorf("New(F32, %v): recovered %v, want a TooLargeError naming the tensor", shape, err)
				}
			}()
			New(F32, shape...)
		}()
	}
	if x := New(F32, 4, 4); x.Shape().Size() != 16 {
		t.Errorf("a small tensor has %d elements", x.Shape().Size())
	}
}
