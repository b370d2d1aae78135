package tensor

// Gradient rules of convolution and pooling. A convolution y = Conv(x, w) is bilinear;
// its two adjoints are the transposed convolution (for x) and the filter gradient (for w),
// and the transposed convolution and the filter gradient are differentiated through the
// same three ops.

func init() {
	registerGrad(OpConv, func(n, gy *Node) []*Node {
		x, w := n.inputs[0], n.inputs[1]
		at := n.attr.(ConvAttr)
		return []*Node{convInputGrad(gy, w, at, x.shape), convWeightGrad(x, gy, at, w.shape)}
	})
	// ConvTranspose(x, w) is the x-adjoint of Conv(·, w): its own adjoint in x is that
	// convolution, and its weight gradient is the filter gradient with the roles of
	// input and output gradient exchanged.
	registerGrad(OpConvTranspose, func(n, gy *Node) []*Node {
		x, w := n.inputs[0], n.inputs[1]
		at := forwardConvAttr(n.attr.(ConvAttr))
		return []*Node{Conv(gy, w, at), convWeightGrad(gy, x, at, w.shape)}
	})
	// ConvFilterGrad(x, g) = ∂⟨g, Conv(x, w)⟩/∂w is linear in x and in g.
	registerGrad(OpConvFilterGrad, func(n, gw *Node) []*Node {
		x, g := n.inputs[0], n.inputs[1]
		at := n.attr.(ConvAttr)
		fwd := at
		fwd.FilterShape = nil
		return []*Node{convInputGrad(g, gw, fwd, x.shape), Conv(x, gw, fwd)}
	})
	registerGrad(OpIm2Col, im2colGrad)
	registerGrad(OpMaxPool, func(n, gy *Node) []*Node {
		return []*Node{MaxPoolGrad(n.inputs[0], gy, n.attr.(PoolAttr))}
	})
	registerGrad(OpAvgPool, func(n, gy *Node) []*Node {
		return []*Node{AvgPoolGrad(gy, n.inputs[0].shape, n.attr.(PoolAttr))}
	})
	// AvgPoolGrad is linear in its input and the adjoint of AvgPool, whose adjoint is
	// AvgPool again.
	registerGrad(OpAvgPoolGrad, func(n, gx *Node) []*Node {
		at := n.attr.(PoolAttr)
		at.InputShape = nil
		return []*Node{AvgPool(gx, at)}
	})
}

// convInputGrad is the gradient of Conv(x, w, at) with respect to an input of shape
// xShape: the transposed convolution of gy by w, with the output padding that restores
// the input elements a strided window never reached.
func convInputGrad(gy, w *Node, at ConvAttr, xShape Shape) *Node {
	t := forwardConvAttr(at)
	t.OutputPadding = make([]int, len(t.Stride))
	for i := range t.OutputPadding {
		k := w.shape[2+i]
		full := (gy.shape[2+i]-1)*t.Stride[i] - t.PadBegin[i] - t.PadEnd[i] + t.Dilation[i]*(k-1) + 1
		t.OutputPadding[i] = xShape[2+i] - full
	}
	return ConvTranspose(gy, w, t)
}

// convWeightGrad is the gradient of Conv(x, w, at) with respect to weights of shape
// wShape, given the output gradient gy.
func convWeightGrad(x, gy *Node, at ConvAttr, wShape Shape) *Node {
	t := forwardConvAttr(at)
	t.FilterShape = wShape.Clone()
	return ConvFilterGrad(x, gy, t)
}

// forwardConvAttr copies a convolution attribute without the fields that belong to
// the transposed convolution or the filter gradient.
func forwardConvAttr(at ConvAttr) ConvAttr {
	return ConvAttr{Stride: at.Stride, Dilation: at.Dilation, PadBegin: at.PadBegin, PadEnd: at.PadEnd, Groups: at.Groups}
}

// im2colGrad folds the columns back (col2im): a transposed convolution with C groups
// whose filter for row c·K + j is the one-hot kernel at offset j adds each column entry
// to the input position it was copied from.
func im2colGrad(n, gy *Node) []*Node {
	x := n.inputs[0]
	at := n.attr.(ConvAttr)
	kernel := at.FilterShape
	c, k := x.shape[1], kernel.Size()
	filter := New(x.dtype, append(Shape{c * k, 1}, kernel...)...)
	for ch := 0; ch < c; ch++ {
		for j := 0; j < k; j++ {
			filter.SetFloat((ch*k+j)*k+j, 1)
		}
	}
	fwd := forwardConvAttr(at)
	fwd.Groups = c
	w := n.graph.Const(filter)
	return []*Node{convInputGrad(gy, w, fwd, x.shape)}
}
