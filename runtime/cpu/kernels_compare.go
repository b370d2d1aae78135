package cpu

import (
	"fmt"

	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// Comparisons (Bool out), logical ops and Not on Bool, and Where, with NumPy
// broadcasting through the elementwise walk (binaryFactory).

func init() {
	for _, op := range []tensor.Op{tensor.OpEqual, tensor.OpNotEqual, tensor.OpLess, tensor.OpLessEqual,
		tensor.OpGreater, tensor.OpGreaterEqual} {
		register(op, floatTypes, binaryFactory(compareF32(op)))
		register(op, []tensor.DType{tensor.I32}, binaryFactory(compare[int32](op)))
		register(op, []tensor.DType{tensor.I64}, binaryFactory(compare[int64](op)))
	}
	for _, op := range []tensor.Op{tensor.OpAnd, tensor.OpOr, tensor.OpXor} {
		register(op, []tensor.DType{tensor.Bool}, binaryFactory(logical(op)))
	}
	register(tensor.OpWhere, []tensor.DType{tensor.Bool}, whereFactory)
	register(tensor.OpNot, []tensor.DType{tensor.Bool}, func(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
		x := in[0]
		return func() error {
			for i, v := range x {
				out[i] = v ^ 1
			}
			return nil
		}, nil
	})
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

// compareF32 is compare on float32, with contiguous and scalar stretches through
// package vec's vector loops.
func compareF32(op tensor.Op) binaryLoop[float32, uint8] {
	generic := compare[float32](op)
	vop := map[tensor.Op]vec.CompareOp{tensor.OpEqual: vec.Equal, tensor.OpNotEqual: vec.NotEqual,
		tensor.OpLess: vec.Less, tensor.OpLessEqual: vec.LessEqual, tensor.OpGreater: vec.Greater,
		tensor.OpGreaterEqual: vec.GreaterEqual}[op]
	return func(d []uint8, a []float32, sa int, b []float32, sb int) {
		if sa <= 1 && sb <= 1 {
			vec.Compare(vop, d, a, sa, b, sb)
			return
		}
		generic(d, a, sa, b, sb)
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
		return whereTyped[uint8](n, out, in, nil)
	case 2:
		return whereTyped[uint16](n, out, in, nil)
	case 4:
		return whereTyped(n, out, in, vec.Where32)
	case 8:
		return whereTyped[uint64](n, out, in, nil)
	}
	return nil, fmt.Errorf("no where kernel for %v", n.DType())
}

// whereTyped is Where on elements of type T; fast, when not nil, does the contiguous and
// scalar stretches.
func whereTyped[T uint8 | uint16 | uint32 | uint64](n *tensor.Node, out []byte, in [][]byte,
	fast func(d []T, c []byte, a []T, sa int, b []T, sb int)) (func() error, error) {
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
		if fast != nil && sc == 1 && sa <= 1 && sb <= 1 {
			fast(dd, cc[:cnt], aa, sa, bb, sb)
			return
		}
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
