package backendtest

import "github.com/gml-dev/gml/tensor"

// References of the elementwise ops. The scalar functions of the unary and binary ops
// are rows of the case tables (cases_elementwise.go), next to the cases that test them.

func init() {
	for _, s := range unarySpecs {
		ref := s.ref
		defRef(func(n *tensor.Node, in []*Array) *Array {
			out := newArray(n.DType(), n.Shape())
			for i, v := range in[0].Data {
				out.Data[i] = ref(v, n.Attr())
			}
			return out
		}, s.op)
	}
	for _, s := range binarySpecs {
		ref := s.ref
		defRef(func(n *tensor.Node, in []*Array) *Array {
			integer := in[0].DType.IsInt()
			return broadcast(n, in, func(v []float64) float64 { return ref(v[0], v[1], integer) })
		}, s.op)
	}
	defRef(func(n *tensor.Node, in []*Array) *Array {
		return broadcast(n, in, func(v []float64) float64 {
			if v[0] != 0 {
				return v[1]
			}
			return v[2]
		})
	}, tensor.OpWhere)
	// Cast rounds to the target type (Array.round, or Array.quantize); an integer
	// narrowed to I32 wraps around, as two's complement does.
	defRef(func(n *tensor.Node, in []*Array) *Array {
		out := in[0].clone()
		out.DType = n.DType()
		if out.DType.IsQuantized() {
			return out.quantize()
		}
		if out.DType == tensor.I32 && in[0].DType.IsInt() {
			for i, v := range out.Data {
				out.Data[i] = float64(int32(int64(v)))
			}
		}
		return out
	}, tensor.OpCast)
}

// broadcast applies f to the elements of the inputs (NumPy broadcasting) at every
// output position.
func broadcast(n *tensor.Node, in []*Array, f func(v []float64) float64) *Array {
	out := newArray(n.DType(), n.Shape())
	v := make([]float64, len(in))
	for i := range out.Data {
		c := unflat(i, out.Shape)
		for k, x := range in {
			v[k] = x.Data[broadcastIndex(c, x.Shape, out.Shape)]
		}
		out.Data[i] = f(v)
	}
	return out
}
