package tensor

import (
	"fmt"
	"strings"
)

// Shape lists dimension sizes outermost first, as NumPy, PyTorch and Keras do: a batch
// of 32 RGB images of 28x28 pixels is Shape{32, 3, 28, 28}. A scalar has the empty shape.
type Shape []int

// Size is the number of elements: the product of the dimensions (1 for a scalar).
func (s Shape) Size() int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// Rank is the number of dimensions.
func (s Shape) Rank() int { return len(s) }

// Equal reports whether s and t have the same dimensions.
func (s Shape) Equal(t Shape) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i] != t[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy that does not share memory with s.
func (s Shape) Clone() Shape { return append(Shape(nil), s...) }

// Strides returns the row-major element strides of a contiguous tensor of shape s.
func (s Shape) Strides() []int {
	st := make([]int, len(s))
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= s[i]
	}
	return st
}

// String formats the shape as "[32 3 28 28]"; a scalar is "[]".
func (s Shape) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range s {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, d)
	}
	b.WriteByte(']')
	return b.String()
}

// Validate returns an error when a dimension is negative.
func (s Shape) Validate() error {
	for i, d := range s {
		if d < 0 {
			return fmt.Errorf("tensor: shape %v has negative dimension %d at axis %d", s, d, i)
		}
	}
	return nil
}

// ResolveAxis resolves a possibly negative axis (-1 is the last) against rank and reports an
// error naming the op when it is out of range.
func ResolveAxis(op string, axis, rank int) (int, error) {
	a := axis
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		return 0, fmt.Errorf("tensor: %s: axis %d out of range for rank %d", op, axis, rank)
	}
	return a, nil
}

// Broadcast returns the NumPy broadcast of shapes a and b: dimensions are aligned from
// the right, and each pair must be equal or contain a 1.
func Broadcast(a, b Shape) (Shape, bool) {
	n := max(len(a), len(b))
	out := make(Shape, n)
	for i := 0; i < n; i++ {
		da, db := 1, 1
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db:
			out[i] = da
		case da == 1:
			out[i] = db
		case db == 1:
			out[i] = da
		default:
			return nil, false
		}
	}
	return out, true
}
