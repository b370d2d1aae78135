package onnx

import (
	"fmt"
	"strings"

	"github.com/gml-dev/gml/tensor"
)

// Recurrent layers (RNN, GRU, LSTM), unrolled over the sequence, which is static: the
// input projection of every step is one product, then each step multiplies the state
// by the recurrence weights of all gates at once. sequence_lens masks the steps past a
// sequence's end (outputs zero, state held), which also makes the reverse direction
// start at each sequence's own end.

func init() {
	register(7, lowerRecurrent, "RNN", "GRU", "LSTM")
}

// rnnSpec is one recurrent node's configuration.
type rnnSpec struct {
	op        string
	gates     int
	hidden    int
	acts      []activation
	clip      float32
	hasClip   bool
	lbr       bool // GRU linear_before_reset
	coupled   bool // LSTM input_forget
	batchMajr bool // layout 1
}

// activation is one of the recurrent layers' activation functions with its
// parameters.
type activation struct {
	name        string
	alpha, beta float32
}

func (a activation) apply(x *tensor.Node) *tensor.Node {
	g, dt := x.Graph(), x.DType()
	s := func(v float32) *tensor.Node { return g.Scalar(dt, float64(v)) }
	switch strings.ToLower(a.name) {
	case "sigmoid":
		return tensor.Sigmoid(x)
	case "tanh":
		return tensor.Tanh(x)
	case "relu":
		return tensor.Relu(x)
	case "leakyrelu":
		return tensor.LeakyRelu(x, a.alpha)
	case "thresholdedrelu":
		return tensor.Where(tensor.Greater(x, s(a.alpha)), x, s(0))
	case "scaledtanh":
		return tensor.Mul(tensor.Tanh(tensor.Mul(x, s(a.beta))), s(a.alpha))
	case "hardsigmoid":
		return tensor.HardSigmoid(x, a.alpha, a.beta)
	case "elu":
		return tensor.Elu(x, a.alpha)
	case "softsign":
		return tensor.Div(x, tensor.Add(s(1), tensor.Abs(x)))
	case "softplus":
		return tensor.Softplus(x)
	case "affine":
		return tensor.Add(tensor.Mul(x, s(a.alpha)), s(a.beta))
	}
	panic(lowerError{fmt.Errorf("activation %q: %w", a.name, ErrUnsupported)})
}

// activationDefaults are the alpha and beta an activation takes when the node gives
// none.
var activationDefaults = map[string][2]float32{
	"leakyrelu": {0.01, 0}, "thresholdedrelu": {1, 0}, "scaledtanh": {1, 1},
	"hardsigmoid": {0.2, 0.5}, "elu": {1, 0}, "affine": {1, 0},
}

func lowerRecurrent(c *ctx) {
	dt := c.sameTypes(0, 1, 2)
	c.requireFloat(0)
	sp := rnnSpec{op: c.n.op, hidden: c.attrInt("hidden_size", 0)}
	var defActs []string
	switch sp.op {
	case "RNN":
		sp.gates, defActs = 1, []string{"Tanh"}
	case "GRU":
		sp.gates, defActs = 3, []string{"Sigmoid", "Tanh"}
		sp.lbr = c.attrInt("linear_before_reset", 0) != 0
	case "LSTM":
		sp.gates, defActs = 4, []string{"Sigmoid", "Tanh", "Tanh"}
		sp.coupled = c.attrInt("input_forget", 0) != 0
	}
	dir := c.attrString("direction", "forward")
	dirs := 1
	switch dir {
	case "forward", "reverse":
	case "bidirectional":
		dirs = 2
	default:
		c.failf("direction %q", dir)
	}
	names := c.attrStrings("activations")
	if names == nil {
		for range dirs {
			names = append(names, defActs...)
		}
	}
	if len(names) != dirs*len(defActs) {
		c.failf("%d activations, want %d", len(names), dirs*len(defActs))
	}
	alphas, _ := c.attrFloats("activation_alpha")
	betas, _ := c.attrFloats("activation_beta")
	ai, bi := 0, 0
	for _, n := range names {
		a := activation{name: n}
		if d, ok := activationDefaults[strings.ToLower(n)]; ok {
			a.alpha, a.beta = d[0], d[1]
			if ai < len(alphas) {
				a.alpha = alphas[ai]
				ai++
			}
			if bi < len(betas) && (strings.EqualFold(n, "scaledtanh") || strings.EqualFold(n, "hardsigmoid") || strings.EqualFold(n, "affine")) {
				a.beta = betas[bi]
				bi++
			}
		}
		sp.acts = append(sp.acts, a)
	}
	if a := c.attr("clip"); a != nil {
		sp.clip, sp.hasClip = a.GetF(), true
	}
	sp.batchMajr = c.attrInt("layout", 0) != 0

	x := c.x(0)
	if sp.batchMajr {
		x = tensor.Permute(x, 1, 0, 2)
	}
	xs := x.Shape()
	if len(xs) != 3 {
		c.failf("X %v must be (seq, batch, input)", c.shape(0))
	}
	seq, batch := xs[0], xs[1]
	w, r := c.x(1), c.x(2)
	gh := sp.gates * sp.hidden
	if !w.Shape().Equal(tensor.Shape{dirs, gh, xs[2]}) || !r.Shape().Equal(tensor.Shape{dirs, gh, sp.hidden}) {
		c.failf("W %v and R %v do not fit %d directions, %d gates of %d units and input %v", w.Shape(), r.Shape(), dirs, sp.gates, sp.hidden, xs)
	}
	opt := func(i int, shape ...int) *tensor.Node {
		if !c.has(i) || c.shape(i).Size() == 0 {
			return nil
		}
		n := c.x(i)
		if !n.Shape().Equal(shape) {
			c.failf("input %d is %v, want %v", i, n.Shape(), tensor.Shape(shape))
		}
		return n
	}
	b := opt(3, dirs, 2*gh)
	var mask []*tensor.Node // per step, (batch, 1) booleans: the step is inside the sequence
	if lens := opt(4, batch); lens != nil {
		for t := range seq {
			m := tensor.Less(c.scalar(lens.DType(), float64(t)), lens)
			mask = append(mask, tensor.Reshape(m, batch, 1))
		}
	}
	stateIn := func(i int) *tensor.Node {
		if !c.has(i) || c.shape(i).Size() == 0 {
			return nil
		}
		n := c.x(i)
		if sp.batchMajr {
			n = tensor.Permute(n, 1, 0, 2)
		}
		if !n.Shape().Equal(tensor.Shape{dirs, batch, sp.hidden}) {
			c.failf("initial state %d is %v, want %v", i, c.shape(i), tensor.Shape{dirs, batch, sp.hidden})
		}
		return n
	}
	h0, c0 := stateIn(5), (*tensor.Node)(nil)
	var p *tensor.Node
	if sp.op == "LSTM" {
		c0 = stateIn(6)
		p = opt(7, dirs, 3*sp.hidden)
	}
	var ys, hs, cs []*tensor.Node
	for d := range dirs {
		pick := func(n *tensor.Node) *tensor.Node {
			if n == nil {
				return nil
			}
			s := n.Shape()
			return tensor.Reshape(tensor.SliceAxis(n, 0, d, d+1), s[1:]...)
		}
		reverse := dir == "reverse" || d == 1
		acts := sp.acts[d*len(defActs) : (d+1)*len(defActs)]
		y, h, cell := runDirection(c, sp, acts, x, pick(w), pick(r), pick(b), pick(p), pick(h0), pick(c0), mask, reverse)
		ys, hs, cs = append(ys, y), append(hs, h), append(cs, cell)
	}
	stack := func(parts []*tensor.Node, axis int) *tensor.Node {
		for i, n := range parts {
			parts[i] = tensor.Unsqueeze(n, axis)
		}
		if len(parts) == 1 {
			return parts[0]
		}
		return tensor.Concat(axis, parts...)
	}
	if c.wants(0) {
		y := stack(ys, 1) // (seq, dirs, batch, hidden)
		if sp.batchMajr {
			y = tensor.Permute(y, 2, 0, 1, 3)
		}
		c.set(0, y, dt)
	}
	for i, states := range [][]*tensor.Node{hs, cs} {
		if !c.wants(1+i) || states[0] == nil {
			continue
		}
		s := stack(states, 0) // (dirs, batch, hidden)
		if sp.batchMajr {
			s = tensor.Permute(s, 1, 0, 2)
		}
		c.set(1+i, s, dt)
	}
}

// runDirection unrolls one direction. Weights: w (G*H, input), r (G*H, H), b (2*G*H)
// or nil, p (3*H) or nil; states (batch, H) or nil for zeros. It returns the outputs
// stacked over time (seq, batch, H), the last state and, for LSTM, the last cell.
func runDirection(c *ctx, sp rnnSpec, acts []activation, x, w, r, b, p, h, cell *tensor.Node, mask []*tensor.Node, reverse bool) (y, hLast, cLast *tensor.Node) {
	xs := x.Shape()
	seq, batch, hid := xs[0], xs[1], sp.hidden
	dt := x.DType()
	g := x.Graph()
	gh := sp.gates * hid
	// All steps' input projections at once: (seq*batch, input) @ Wᵀ + Wb (+ Rb).
	xw := tensor.MatMulT(tensor.Reshape(x, seq*batch, xs[2]), w, false, true)
	var rb *tensor.Node
	if b != nil {
		wb := tensor.SliceAxis(b, 0, 0, gh)
		rb = tensor.SliceAxis(b, 0, gh, 2*gh)
		if sp.op == "GRU" {
			// Rb of the candidate gate is applied inside the reset product when
			// linear_before_reset: keep it separate; the others fold into the input.
			xw = tensor.Add(xw, tensor.Add(wb, tensor.Concat(0, tensor.SliceAxis(rb, 0, 0, 2*hid), tensor.Full(g, dt, tensor.Shape{hid}, 0))))
			rb = tensor.SliceAxis(rb, 0, 2*hid, 3*hid)
		} else {
			xw = tensor.Add(xw, tensor.Add(wb, rb))
			rb = nil
		}
	}
	xw = tensor.Reshape(xw, seq, batch, gh)
	zeros := tensor.Full(g, dt, tensor.Shape{batch, hid}, 0)
	if h == nil {
		h = zeros
	}
	if sp.op == "LSTM" && cell == nil {
		cell = zeros
	}
	gate := func(z *tensor.Node, k int) *tensor.Node { return tensor.SliceAxis(z, 1, k*hid, (k+1)*hid) }
	clip := func(z *tensor.Node) *tensor.Node {
		if !sp.hasClip {
			return z
		}
		return tensor.Minimum(tensor.Maximum(z, g.Scalar(dt, float64(-sp.clip))), g.Scalar(dt, float64(sp.clip)))
	}
	peep := func(k int) *tensor.Node {
		if p == nil {
			return nil
		}
		return tensor.SliceAxis(p, 0, k*hid, (k+1)*hid)
	}
	var rzr, rh *tensor.Node
	if sp.op == "GRU" {
		rzr, rh = tensor.SliceAxis(r, 0, 0, 2*hid), tensor.SliceAxis(r, 0, 2*hid, 3*hid)
	}
	outs := make([]*tensor.Node, seq)
	for step := range seq {
		t := step
		if reverse {
			t = seq - 1 - step
		}
		xt := tensor.Reshape(tensor.SliceAxis(xw, 0, t, t+1), batch, gh)
		var hNew, cNew *tensor.Node
		switch sp.op {
		case "RNN":
			hNew = acts[0].apply(clip(tensor.Add(xt, tensor.MatMulT(h, r, false, true))))
		case "GRU":
			// z and r are contiguous: one sum and one activation for both.
			hr := tensor.MatMulT(h, rzr, false, true)
			zr := acts[0].apply(clip(tensor.Add(tensor.SliceAxis(xt, 1, 0, 2*hid), hr)))
			z, rt := gate(zr, 0), gate(zr, 1)
			var cand *tensor.Node
			if sp.lbr {
				hh := tensor.MatMulT(h, rh, false, true)
				if rb != nil {
					hh = tensor.Add(hh, rb)
				}
				cand = tensor.Add(gate(xt, 2), tensor.Mul(rt, hh))
			} else {
				cand = tensor.Add(gate(xt, 2), tensor.MatMulT(tensor.Mul(rt, h), rh, false, true))
				if rb != nil {
					cand = tensor.Add(cand, rb)
				}
			}
			ht := acts[1].apply(clip(cand))
			one := g.Scalar(dt, 1)
			hNew = tensor.Add(tensor.Mul(tensor.Sub(one, z), ht), tensor.Mul(z, h))
		case "LSTM":
			zt := tensor.Add(xt, tensor.MatMulT(h, r, false, true))
			if p == nil {
				// Without peepholes the gates i, o and f (contiguous) take one
				// activation.
				zt = clip(zt)
				iof := acts[0].apply(tensor.SliceAxis(zt, 1, 0, 3*hid))
				it, ot := gate(iof, 0), gate(iof, 1)
				ft := gate(iof, 2)
				if sp.coupled {
					ft = tensor.Sub(g.Scalar(dt, 1), it)
				}
				cNew = tensor.Add(tensor.Mul(ft, cell), tensor.Mul(it, acts[1].apply(gate(zt, 3))))
				hNew = tensor.Mul(ot, acts[2].apply(cNew))
				break
			}
			withPeep := func(z *tensor.Node, k int, cs *tensor.Node) *tensor.Node {
				if pk := peep(k); pk != nil {
					z = tensor.Add(z, tensor.Mul(pk, cs))
				}
				return z
			}
			it := acts[0].apply(clip(withPeep(gate(zt, 0), 0, cell)))
			var ft *tensor.Node
			if sp.coupled {
				ft = tensor.Sub(g.Scalar(dt, 1), it)
			} else {
				ft = acts[0].apply(clip(withPeep(gate(zt, 2), 2, cell)))
			}
			ct := acts[1].apply(clip(gate(zt, 3)))
			cNew = tensor.Add(tensor.Mul(ft, cell), tensor.Mul(it, ct))
			ot := acts[0].apply(clip(withPeep(gate(zt, 1), 1, cNew)))
			hNew = tensor.Mul(ot, acts[2].apply(cNew))
		}
		if mask != nil {
			m := mask[t]
			outs[t] = tensor.Where(m, hNew, zeros)
			hNew = tensor.Where(m, hNew, h)
			if cNew != nil {
				cNew = tensor.Where(m, cNew, cell)
			}
		} else {
			outs[t] = hNew
		}
		h, cell = hNew, cNew
	}
	for i, o := range outs {
		outs[i] = tensor.Unsqueeze(o, 0)
	}
	if len(outs) == 1 {
		return outs[0], h, cell
	}
	return tensor.Concat(0, outs...), h, cell
}
