package cpu

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// Comparisons (Bool out), logical ops and Not on Bool, and Where, with NumPy
// broadcasting through the elementwise walk (binaryFactory).

func init() {
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
