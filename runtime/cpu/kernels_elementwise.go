package cpu

import (
	"fmt"
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Binary and ternary elementwise kernels with NumPy broadcasting (broadcast.go), and the
// logical ops. F32 arithmetic has hand-written loops for the common stride patterns;
// the other ops and the integer types go through one generic loop per op.

func init() {
	for _, op := range []tensor.Op{tensor.OpAdd, tensor.OpSub, tensor.OpMul, tensor.OpDiv, tensor.OpPow,
		tensor.OpMod, tensor.OpMaximum, tensor.OpMinimum} {
		register(op, floatTypes, binaryFactory(f32Binary[op]))
		register(op, []tensor.DType{tensor.I32}, binaryFactory(intBinary[int32](op)))
		register(op, []tensor.DType{tensor.I64}, binaryFactory(intBinary[int64](op)))
	}
	for _, op := range []tensor.Op{tensor.OpEqual, tensor.OpNotEqual, tensor.OpLess, tensor.OpLessEqual,
		tensor.OpGreater, tensor.OpGreaterEqual} {
		register(op, floatTypes, binaryFactory(compare[float32](op)))
		register(op, []tensor.DType{tensor.I32}, binaryFactory(compare[int32](op)))
		register(op, []tensor.DType{tensor.I64}, binaryFactory(compare[int64](op)))
	}
	for _, op := range []tensor.Op{tensor.OpAnd, tensor.OpOr, tensor.OpXor} {
		register(op, []tensor.DType{tensor.Bool}, binaryFactory(logical(op)))
	}
	register(tensor.OpWhere, []tensor.DType{tensor.Bool}, whereFactory)
}

// binaryLoop computes one stretch d[i] = f(a[i*sa], b[i*sb]).
type binaryLoop[T, U any] func(d []U, a []T, sa int, b []T, sb int)

// binaryFactory prepares a broadcast walk that runs loop over typed views of the
// operands.
func binaryFactory[T, U any](loop binaryLoop[T, U]) kernelFactory {
	return func(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
		d, a, b := typed[U](out), typed[T](in[0]), typed[T](in[1])
		p, err := newPlan(n.Shape(), []tensor.Shape{n.Input(0).Shape(), n.Input(1).Shape()})
		if err != nil {
			return nil, err
		}
		sa, sb := p.ist[0], p.ist[1]
		p.row = func(o int, off [3]int, cnt int) { loop(d[o:o+cnt], a[off[0]:], sa, b[off[1]:], sb) }
		return func() error { p.run(); return nil }, nil
	}
}

// genericBinary lifts f to a loop over any stride pattern.
func genericBinary[T, U any](f func(a, b T) U) binaryLoop[T, U] {
	return func(d []U, a []T, sa int, b []T, sb int) {
		switch {
		case sa == 1 && sb == 1:
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = f(a[i], b[i])
			}
		case sa == 1 && sb == 0:
			y := b[0]
			a = a[:len(d)]
			for i := range d {
				d[i] = f(a[i], y)
			}
		case sa == 0 && sb == 1:
			x := a[0]
			b = b[:len(d)]
			for i := range d {
				d[i] = f(x, b[i])
			}
		default:
			for i := range d {
				d[i] = f(a[i*sa], b[i*sb])
			}
		}
	}
}

// f32Binary holds the F32 loops of the arithmetic ops.
var f32Binary = map[tensor.Op]binaryLoop[float32, float32]{
	tensor.OpAdd: addF32,
	tensor.OpSub: subF32,
	tensor.OpMul: mulF32,
	tensor.OpDiv: divF32,
	tensor.OpPow: genericBinary(func(a, b float32) float32 {
		return float32(math.Pow(float64(a), float64(b)))
	}),
	tensor.OpMod: genericBinary(func(a, b float32) float32 {
		return float32(math.Mod(float64(a), float64(b)))
	}),
	tensor.OpMaximum: extremum[float32](true),
	tensor.OpMinimum: extremum[float32](false),
}

// The four hot F32 loops are written out: a function value per element would cost more
// than the arithmetic.

func addF32(d, a []float32, sa int, b []float32, sb int) {
	switch {
	case sa == 1 && sb == 1:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = a[i] + b[i]
		}
	case sa == 1 && sb == 0:
		y, a := b[0], a[:len(d)]
		for i := range d {
			d[i] = a[i] + y
		}
	case sa == 0 && sb == 1:
		x, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = x + b[i]
		}
	default:
		for i := range d {
			d[i] = a[i*sa] + b[i*sb]
		}
	}
}

func subF32(d, a []float32, sa int, b []float32, sb int) {
	switch {
	case sa == 1 && sb == 1:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = a[i] - b[i]
		}
	case sa == 1 && sb == 0:
		y, a := b[0], a[:len(d)]
		for i := range d {
			d[i] = a[i] - y
		}
	case sa == 0 && sb == 1:
		x, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = x - b[i]
		}
	default:
		for i := range d {
			d[i] = a[i*sa] - b[i*sb]
		}
	}
}

func mulF32(d, a []float32, sa int, b []float32, sb int) {
	switch {
	case sa == 1 && sb == 1:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = a[i] * b[i]
		}
	case sa == 1 && sb == 0:
		y, a := b[0], a[:len(d)]
		for i := range d {
			d[i] = a[i] * y
		}
	case sa == 0 && sb == 1:
		x, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = x * b[i]
		}
	default:
		for i := range d {
			d[i] = a[i*sa] * b[i*sb]
		}
	}
}

func divF32(d, a []float32, sa int, b []float32, sb int) {
	switch {
	case sa == 1 && sb == 1:
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = a[i] / b[i]
		}
	case sa == 1 && sb == 0:
		y, a := b[0], a[:len(d)]
		for i := range d {
			d[i] = a[i] / y
		}
	case sa == 0 && sb == 1:
		x, b := a[0], b[:len(d)]
		for i := range d {
			d[i] = x / b[i]
		}
	default:
		for i := range d {
			d[i] = a[i*sa] / b[i*sb]
		}
	}
}

// intBinary returns the integer loop of an arithmetic op. Division by zero gives 0
// rather than a crash, and integer powers with a negative exponent truncate toward 0.
func intBinary[T int32 | int64](op tensor.Op) binaryLoop[T, T] {
	var f func(a, b T) T
	switch op {
	case tensor.OpAdd:
		f = func(a, b T) T { return a + b }
	case tensor.OpSub:
		f = func(a, b T) T { return a - b }
	case tensor.OpMul:
		f = func(a, b T) T { return a * b }
	case tensor.OpDiv:
		f = func(a, b T) T {
			if b == 0 {
				return 0
			}
			if b == -1 {
				return -a // avoids the MinInt / -1 overflow trap
			}
			return a / b
		}
	case tensor.OpPow:
		f = intPow[T]
	case tensor.OpMod:
		f = func(a, b T) T {
			if b == 0 {
				return 0
			}
			return a % b // Go's % keeps the dividend's sign; MinInt % -1 is 0
		}
	case tensor.OpMaximum:
		return extremum[T](true)
	case tensor.OpMinimum:
		return extremum[T](false)
	default:
		panic(fmt.Sprintf("cpu: no integer loop for %v", op))
	}
	return genericBinary(f)
}

// extremum returns the loop of Maximum (larger) or Minimum; a NaN in either operand
// gives NaN, as NumPy does.
func extremum[T float32 | int32 | int64](larger bool) binaryLoop[T, T] {
	return func(d, a []T, sa int, b []T, sb int) {
		for i := range d {
			x, y := a[i*sa], b[i*sb]
			if (larger && y > x) || (!larger && y < x) || y != y {
				x = y
			}
			d[i] = x
		}
	}
}

// intPow is a**b by squaring; negative exponents give 1/a**|b| truncated.
func intPow[T int32 | int64](a, b T) T {
	if b < 0 {
		switch a {
		case 1:
			return 1
		case -1:
			if b%2 == 0 {
				return 1
			}
			return -1
		}
		return 0
	}
	r := T(1)
	for b > 0 {
		if b&1 == 1 {
			r *= a
		}
		a *= a
		b >>= 1
	}
	return r
}

// compare returns the loop of a comparison, writing 0 or 1 bytes. The op is switched
// on inside the loop: a branch taken the same way every time costs less than a call
// per element.
func compare[T float32 | int32 | int64](op tensor.Op) binaryLoop[T, uint8] {
	switch op {
	case tensor.OpEqual, tensor.OpNotEqual, tensor.OpLess, tensor.OpLessEqual, tensor.OpGreater, tensor.OpGreaterEqual:
	default:
		panic(fmt.Sprintf("cpu: %v is not a comparison", op))
	}
	return func(d []uint8, a []T, sa int, b []T, sb int) {
		for i := range d {
			x, y := a[i*sa], b[i*sb]
			var r bool
			switch op {
			case tensor.OpEqual:
				r = x == y
			case tensor.OpNotEqual:
				r = x != y
			case tensor.OpLess:
				r = x < y
			case tensor.OpLessEqual:
				r = x <= y
			case tensor.OpGreater:
				r = x > y
			default:
				r = x >= y
			}
			d[i] = 0
			if r {
				d[i] = 1
			}
		}
	}
}

// logical returns the loop of a logical op on 0/1 bytes.
func logical(op tensor.Op) binaryLoop[uint8, uint8] {
	return func(d, a []uint8, sa int, b []uint8, sb int) {
		for i := range d {
			x, y := a[i*sa], b[i*sb]
			switch op {
			case tensor.OpAnd:
				d[i] = x & y
			case tensor.OpOr:
				d[i] = x | y
			default:
				d[i] = x ^ y
			}
		}
	}
}

// whereFactory selects between the two branches by a bool condition; it moves elements
// as unsigned integers of the element size, so it serves every dtype.
func whereFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	switch n.DType().Size() {
	case 1:
		return whereTyped[uint8](n, out, in)
	case 2:
		return whereTyped[uint16](n, out, in)
	case 4:
		return whereTyped[uint32](n, out, in)
	case 8:
		return whereTyped[uint64](n, out, in)
	}
	return nil, fmt.Errorf("no where kernel for %v", n.DType())
}

func whereTyped[T uint8 | uint16 | uint32 | uint64](n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	d, c, a, b := typed[T](out), in[0], typed[T](in[1]), typed[T](in[2])
	shapes := []tensor.Shape{n.Input(0).Shape(), n.Input(1).Shape(), n.Input(2).Shape()}
	p, err := newPlan(n.Shape(), shapes)
	if err != nil {
		return nil, err
	}
	sc, sa, sb := p.ist[0], p.ist[1], p.ist[2]
	p.row = func(o int, off [3]int, cnt int) {
		dd := d[o : o+cnt]
		cc, aa, bb := c[off[0]:], a[off[1]:], b[off[2]:]
		for i := range dd {
			if cc[i*sc] != 0 {
				dd[i] = aa[i*sa]
			} else {
				dd[i] = bb[i*sb]
			}
		}
	}
	return func() error { p.run(); return nil }, nil
}
