package cpu

import (
	"fmt"
	"math"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// Binary arithmetic kernels with NumPy broadcasting (broadcast.go). F32 arithmetic has
// hand-written loops for the common stride patterns; the integer types go through one
// generic loop per op (genericBinary, also used by kernels_compare.go).

func init() {
	for _, op := range []tensor.Op{tensor.OpAdd, tensor.OpSub, tensor.OpMul, tensor.OpDiv, tensor.OpPow,
		tensor.OpMod, tensor.OpMaximum, tensor.OpMinimum} {
		if aop, ok := f32ArithOps[op]; ok {
			register(op, floatTypes, f32ArithFactory(op, aop))
		} else {
			register(op, floatTypes, binaryFactory(f32Binary[op]))
		}
		register(op, []tensor.DType{tensor.I32}, binaryFactory(intBinary[int32](op)))
		register(op, []tensor.DType{tensor.I64}, binaryFactory(intBinary[int64](op)))
	}
	register(tensor.OpBitAnd, []tensor.DType{tensor.I32}, binaryFactory(genericBinary(func(a, b int32) int32 { return a & b })))
	register(tensor.OpBitAnd, []tensor.DType{tensor.I64}, binaryFactory(genericBinary(func(a, b int64) int64 { return a & b })))
	register(tensor.OpBitOr, []tensor.DType{tensor.I32}, binaryFactory(genericBinary(func(a, b int32) int32 { return a | b })))
	register(tensor.OpBitOr, []tensor.DType{tensor.I64}, binaryFactory(genericBinary(func(a, b int64) int64 { return a | b })))
	register(tensor.OpBitXor, []tensor.DType{tensor.I32}, binaryFactory(genericBinary(func(a, b int32) int32 { return a ^ b })))
	register(tensor.OpBitXor, []tensor.DType{tensor.I64}, binaryFactory(genericBinary(func(a, b int64) int64 { return a ^ b })))
	register(tensor.OpShiftLeft, []tensor.DType{tensor.I32}, binaryFactory(genericBinary(shift[int32, uint32](true))))
	register(tensor.OpShiftLeft, []tensor.DType{tensor.I64}, binaryFactory(genericBinary(shift[int64, uint64](true))))
	register(tensor.OpShiftRight, []tensor.DType{tensor.I32}, binaryFactory(genericBinary(shift[int32, uint32](false))))
	register(tensor.OpShiftRight, []tensor.DType{tensor.I64}, binaryFactory(genericBinary(shift[int64, uint64](false))))
}

// shift shifts the bits of a, as unsigned, left or right by b places; negative counts
// and counts of the width or more give 0, as Go's shifts of unsigned values do.
func shift[T int32 | int64, U uint32 | uint64](left bool) func(a, b T) T {
	return func(a, b T) T {
		if b < 0 {
			return 0
		}
		if left {
			return T(U(a) << uint64(b))
		}
		return T(U(a) >> uint64(b))
	}
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

// f32ArithOps are the F32 ops with vector loops in package vec.
var f32ArithOps = map[tensor.Op]vec.ArithOp{tensor.OpAdd: vec.Add, tensor.OpSub: vec.Sub, tensor.OpMul: vec.Mul,
	tensor.OpDiv: vec.Div}

// f32ArithFactory is binaryFactory for the F32 ops of f32ArithOps, with one fast path: a
// row repeated down a batch against a contiguous operand (a bias add that nothing
// fuses with) runs as vec.ArithRows, one call per goroutine for all its rows instead of
// a walk that calls per row.
func f32ArithFactory(op tensor.Op, aop vec.ArithOp) kernelFactory {
	general := binaryFactory(f32Binary[op])
	return func(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
		p, err := newPlan(n.Shape(), []tensor.Shape{n.Input(0).Shape(), n.Input(1).Shape()})
		if err != nil {
			return nil, err
		}
		k := p.repeatedRow()
		if k < 0 {
			return general(n, out, in)
		}
		w := p.inner
		d, full, row := f32s(out), f32s(in[1-k]), f32s(in[k])[:w]
		body := func(lo, hi int) { vec.ArithRows(aop, d[lo*w:hi*w], full[lo*w:hi*w], row, k == 0) }
		return func() error { parallel.For(p.rows, max(1, elemGrain/w), body); return nil }, nil
	}
}

// minArithRow is the shortest row f32ArithFactory's fast path takes: shorter rows leave
// the vector loops too little to do per row.
const minArithRow = 16

// repeatedRow returns which input of a two-input walk is one contiguous row repeated
// along every outer axis while the other is contiguous like the output, or -1 (also
// for one row alone, which the walk splits between goroutines).
func (p *bplan) repeatedRow() int {
	if p.nin != 2 || len(p.outer) == 0 || p.inner < minArithRow || p.ist[0] != 1 || p.ist[1] != 1 {
		return -1
	}
	for k := range 2 {
		rep, cont := true, true
		st := p.inner
		for d := len(p.outer) - 1; d >= 0; d-- {
			rep = rep && p.st[k][d] == 0
			cont = cont && p.st[1-k][d] == st
			st *= p.outer[d]
		}
		if rep && cont {
			return k
		}
	}
	return -1
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

// The four hot F32 loops run contiguous and scalar stretches through package vec's
// vector loops (Go's results, bit for bit), other strides element by element.

func arithF32(op vec.ArithOp, f func(x, y float32) float32) binaryLoop[float32, float32] {
	return func(d, a []float32, sa int, b []float32, sb int) {
		if sa <= 1 && sb <= 1 {
			vec.Arith(op, d, a, sa, b, sb)
			return
		}
		for i := range d {
			d[i] = f(a[i*sa], b[i*sb])
		}
	}
}

var (
	addF32 = arithF32(vec.Add, func(x, y float32) float32 { return x + y })
	subF32 = arithF32(vec.Sub, func(x, y float32) float32 { return x - y })
	mulF32 = arithF32(vec.Mul, func(x, y float32) float32 { return x * y })
	divF32 = arithF32(vec.Div, func(x, y float32) float32 { return x / y })
)

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
