package tensor

// The state-space ops' gradients: one backward node computes every input's gradient in
// a reverse pass; the rule slices them apart. Inputs that do not lead to a wrt node get
// their slice anyway (Grad drops it, and the runtime computes only what is fetched).
func init() {
	for grad, fwd := range ssmBackward {
		registerGrad(fwd, func(n, gy *Node) []*Node {
			all := Apply(grad, n.attr, append(append([]*Node(nil), n.inputs...), gy)...)
			out := make([]*Node, len(n.inputs))
			off := 0
			for i, x := range n.inputs {
				size := x.shape.Size()
				out[i] = Reshape(SliceAxis(all, 0, off, off+size), x.shape...)
				off += size
			}
			return out
		})
	}
}
