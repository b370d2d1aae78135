package cpu

import (
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// Custom ops call the kernel registered under the node's name, once per range of
// output rows, the ranges spread over the cores (parallel.For). The kernel is looked
// up when the segment is prepared, so a graph keeps the kernel it was compiled with.

func init() {
	register(tensor.OpCustom, floatTypes, customFactory)
	register(tensor.OpCustomAssign, floatTypes, customFactory)
}

// customGrain is the number of values a call of a kernel takes at least, by default.
const customGrain = 1 << 14

func customFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.CustomAttr)
	op, err := runtime.LookupCustomOp(at.Name)
	if err != nil {
		return nil, err
	}
	shape := n.Shape()
	row := 1
	if len(shape) > 0 {
		row = shape[len(shape)-1]
	}
	rows := 0
	if row > 0 {
		rows = shape.Size() / row
	}
	grain := op.Grain
	if grain <= 0 {
		grain = max(1, customGrain/max(row, 1))
	}
	ins := make([][]float32, len(in))
	shapes := make([]tensor.Shape, len(in))
	for i, b := range in {
		ins[i], shapes[i] = f32s(b), n.Input(i).Shape()
	}
	o := f32s(out)
	copyIn := at.InPlace && !sameMemory(out, in[0])
	return func() error {
		if copyIn {
			copy(out, in[0])
		}
		return forEachRange(rows, grain, func(lo, hi int) error {
			return op.Kernel(&runtime.CustomCall{Out: o, OutShape: shape, In: ins, InShapes: shapes,
				Params: at.Params, Lo: lo, Hi: hi, Rows: rows, Row: row})
		})
	}, nil
}
