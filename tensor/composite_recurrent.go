package tensor

import "fmt"

// Recurrent cells as compositions (one matmul per operand, then elementwise gates), in
// PyTorch's gate order so weights import directly once transposed to [in, gates·H].

// linear returns x@w (+ b when b is non-nil).
func linear(x, w, b *Node) *Node {
	y := MatMul(x, w)
	if b != nil {
		y = Add(y, b)
	}
	return y
}

// checkCell validates the shapes of a recurrent cell with the given number of gates.
func checkCell(op string, gates int, x, h, wx, wh *Node) int {
	in := []*Node{x, h, wx, wh}
	if x.shape.Rank() != 2 || h.shape.Rank() != 2 || wx.shape.Rank() != 2 || wh.shape.Rank() != 2 {
		panic(&Error{Op: op, Err: fmt.Errorf("needs x [B, in], h [B, H], wx [in, %dH], wh [H, %dH]; have %s", gates, gates, shapesOf(in))})
	}
	hs := h.shape[1]
	if wx.shape[0] != x.shape[1] || wx.shape[1] != gates*hs || !wh.shape.Equal(Shape{hs, gates * hs}) || h.shape[0] != x.shape[0] {
		panic(&Error{Op: op, Err: fmt.Errorf("needs x [B, in], h [B, H], wx [in, %dH], wh [H, %dH]; have %s", gates, gates, shapesOf(in))})
	}
	return hs
}

// LSTMCell advances an LSTM by one step: gates = x@wx + h@wh + b split into input,
// forget, cell and output gates (i, f, g, o); c2 = σ(f)·c + σ(i)·tanh(g); h2 =
// σ(o)·tanh(c2). Shapes: x [B, in], h and c [B, H], wx [in, 4H], wh [H, 4H], b [4H]
// (nil for none).
func LSTMCell(x, h, c, wx, wh, b *Node) (h2, c2 *Node) {
	checkCell("lstm_cell", 4, x, h, wx, wh)
	if !c.shape.Equal(h.shape) {
		panic(&Error{Op: "lstm_cell", Err: fmt.Errorf("cell state %v must match hidden state %v", c.shape, h.shape)})
	}
	g := Add(linear(x, wx, b), MatMul(h, wh))
	parts := Chunk(g, 4, 1)
	i, f, cand, o := Sigmoid(parts[0]), Sigmoid(parts[1]), Tanh(parts[2]), Sigmoid(parts[3])
	c2 = Add(Mul(f, c), Mul(i, cand))
	h2 = Mul(o, Tanh(c2))
	return h2, c2
}

// GRUCell advances a GRU by one step with PyTorch's equations: with gx = x@wx + bx and
// gh = h@wh + bh split into reset, update and new parts (r, z, n): r = σ(gx_r + gh_r),
// z = σ(gx_z + gh_z), n = tanh(gx_n + r·gh_n), h2 = (1-z)·n + z·h. Shapes: x [B, in],
// h [B, H], wx [in, 3H], wh [H, 3H], bx and bh [3H] (nil for none).
func GRUCell(x, h, wx, wh, bx, bh *Node) *Node {
	checkCell("gru_cell", 3, x, h, wx, wh)
	gx := Chunk(linear(x, wx, bx), 3, 1)
	gh := Chunk(linear(h, wh, bh), 3, 1)
	r := Sigmoid(Add(gx[0], gh[0]))
	z := Sigmoid(Add(gx[1], gh[1]))
	n := Tanh(Add(gx[2], Mul(r, gh[2])))
	return Add(Mul(Sub(OnesLike(z), z), n), Mul(z, h))
}
