package backendtest

import (
	"fmt"
	"slices"
	"sort"

	"github.com/gml-dev/gml/tensor"
)

// References of the custom ops that ship registered (runtime/custom_examples.go),
// written from their documented meaning: a custom node is as good as its kernel, so
// each kernel the table tests needs its own reference here.

// customRef computes a custom op's output rows from its inputs; out starts as zeros,
// or as input 0's values for an op in place.
type customRef func(at tensor.CustomAttr, in []*Array, out *Array)

var customRefs = map[string]customRef{
	"row_median": func(_ tensor.CustomAttr, in []*Array, out *Array) {
		rows(in[0], func(r int, x []float64) {
			v := slices.Clone(x)
			slices.Sort(v)
			m := len(v) / 2
			out.Data[r] = v[m]
			if len(v)%2 == 0 {
				out.Data[r] = (v[m-1] + v[m]) / 2
			}
		})
	},
	// The gradient of the median goes to the middle element, or halves to the two
	// middle ones of an even row.
	"row_median_grad": func(_ tensor.CustomAttr, in []*Array, out *Array) {
		rows(in[0], func(r int, x []float64) {
			order := make([]int, len(x))
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool { return x[order[a]] < x[order[b]] })
			g, m, o := in[1].Data[r], len(x)/2, out.Data[r*len(x):]
			if len(x)%2 == 1 {
				o[order[m]] = g
			} else {
				o[order[m-1]] += g / 2
				o[order[m]] += g / 2
			}
		})
	},
	"row_permute": func(at tensor.CustomAttr, in []*Array, out *Array) {
		rows(in[0], func(r int, x []float64) {
			for j, p := range at.Params {
				out.Data[r*len(x)+j] = x[int(p)]
			}
		})
	},
	"clip_inplace": func(at tensor.CustomAttr, _ []*Array, out *Array) {
		for i, v := range out.Data {
			out.Data[i] = min(max(v, at.Params[0]), at.Params[1])
		}
	},
}

// rows calls f with each row (innermost axis) of x.
func rows(x *Array, f func(r int, row []float64)) {
	n := 1
	if len(x.Shape) > 0 {
		n = x.Shape[len(x.Shape)-1]
	}
	for r := 0; r*n < len(x.Data); r++ {
		f(r, x.Data[r*n:(r+1)*n])
	}
}

// refCustom evaluates a custom node through its name's reference.
func refCustom(n *tensor.Node, in []*Array) *Array {
	at := n.Attr().(tensor.CustomAttr)
	ref, ok := customRefs[at.Name]
	if !ok {
		panic(fmt.Sprintf("no float64 reference for custom op %q (ref_custom.go)", at.Name))
	}
	out := newArray(n.DType(), n.Shape())
	if at.InPlace {
		copy(out.Data, in[0].Data)
	}
	ref(at, in, out)
	return out
}

func init() {
	defRef(refCustom, tensor.OpCustom)
	writeRefs[tensor.OpCustomAssign] = func(n *tensor.Node, in []*Array) []*Array { return []*Array{refCustom(n, in)} }
}
