package nn

import (
	"fmt"
	"math"

	"github.com/gml-dev/gml/tensor"
)

// embedding maps int ids to learned vectors.
type embedding struct {
	layerBase
	C     struct{ Vocab, Dim int }
	table *tensor.Variable
}

// Embedding maps 0-based int ids (any sample shape) to learned vectors of size dim from
// a table of vocab rows: (time) ids become (time, dim).
func Embedding(vocab, dim int, opts ...LayerOption) Layer {
	l := &embedding{}
	initBase(l, "embedding", &layerSettings{}, nil, opts)
	if l.err == nil && (vocab <= 0 || dim <= 0) {
		l.err = fmt.Errorf("nn: Embedding: vocabulary and dimension must be positive, got %d and %d", vocab, dim)
	}
	l.C.Vocab, l.C.Dim = vocab, dim
	if l.inputShape != nil {
		l.inputShape.DType = tensor.I64 // an embedding's input is ids
	}
	return l
}

func (l *embedding) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *embedding) config() any             { return &l.C }
func (l *embedding) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	if !in[0].DType.IsInt() {
		return fmt.Errorf("layer %s needs int ids (an Input with DType(\"int64\")), got %v", l.name, in[0])
	}
	first, err := l.checkRebuild(in)
	if first && err == nil {
		l.table = l.param("embeddings", uniformInit(0.05, l.C.Vocab, l.C.Dim))
	}
	return err
}
func (l *embedding) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	return tensor.Embedding(c.v(l.table), in[0])
}

// posEmbedding adds a learned vector per position.
type posEmbedding struct {
	layerBase
	C     struct{ MaxLen int }
	table *tensor.Variable
}

// PositionalEmbedding adds a learned vector per position to (time, features) samples.
// Options: MaxLen (default: the input's length), Name.
func PositionalEmbedding(opts ...LayerOption) Layer {
	l := &posEmbedding{}
	s := layerSettings{}
	initBase(l, "positional_embedding", &s, []string{"MaxLen"}, opts)
	l.C.MaxLen = s.maxLen
	return l
}

func (l *posEmbedding) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *posEmbedding) config() any             { return &l.C }
func (l *posEmbedding) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	if err := wantRank(l.name, in[0], "(time, features) samples", 2); err != nil {
		return err
	}
	if l.C.MaxLen == 0 {
		l.C.MaxLen = in[0].Shape[0]
	}
	if in[0].Shape[0] > l.C.MaxLen {
		return fmt.Errorf("layer %s: sequence length %d exceeds MaxLen %d", l.name, in[0].Shape[0], l.C.MaxLen)
	}
	first, err := l.checkRebuild(in)
	if first && err == nil {
		l.table = l.param("positions", uniformInit(0.05, l.C.MaxLen, in[0].Shape[1]))
	}
	return err
}
func (l *posEmbedding) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	table := c.v(l.table)
	if t := in[0].Shape()[1]; t < l.C.MaxLen { // the whole table needs no slice (a copy)
		table = tensor.SliceAxis(table, 0, 0, t)
	}
	return tensor.Add(in[0], table)
}

// recurrent is an LSTM or GRU over (time, features) samples, unrolled in the graph.
type recurrent struct {
	layerBase
	C struct {
		Cell            string // "lstm" or "gru"
		Units           int
		ReturnSequences bool
	}
	wx, wh, b, bh *tensor.Variable
}

// LSTM runs a long short-term memory layer over (time, features) samples and returns the
// last hidden state (units), or every step's (time, units) with ReturnSequences. Gates
// are ordered input, forget, cell, output as in PyTorch; the forget bias starts at 1.
func LSTM(units int, opts ...LayerOption) Layer { return newRecurrent("lstm", units, opts) }

// GRU runs a gated recurrent unit layer; gates reset, update, new as in PyTorch.
// Options as LSTM.
func GRU(units int, opts ...LayerOption) Layer { return newRecurrent("gru", units, opts) }

func newRecurrent(cell string, units int, opts []LayerOption) Layer {
	l := &recurrent{}
	s := layerSettings{}
	initBase(l, cell, &s, []string{"ReturnSequences"}, opts)
	if l.err == nil && units <= 0 {
		l.err = fmt.Errorf("nn: %s: units must be positive, got %d", cell, units)
	}
	l.C.Cell, l.C.Units, l.C.ReturnSequences = cell, units, s.returnSeq
	return l
}

func (l *recurrent) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *recurrent) config() any             { return &l.C }

func (l *recurrent) gates() int {
	if l.C.Cell == "lstm" {
		return 4
	}
	return 3
}

func (l *recurrent) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	if err := wantFloat(l.name, in[0]); err != nil {
		return err
	}
	if err := wantRank(l.name, in[0], "(time, features) samples", 2); err != nil {
		return err
	}
	first, err := l.checkRebuild(in)
	if first && err == nil {
		f, u, g := in[0].Shape[1], l.C.Units, l.gates()
		l.wx = l.param("kernel", glorot(f, g*u, f, g*u))
		l.wh = l.param("recurrent_kernel", glorot(u, g*u, u, g*u))
		bias := tensor.New(tensor.F32, g*u)
		if l.C.Cell == "lstm" {
			for i := u; i < 2*u; i++ {
				bias.Float32s()[i] = 1
			}
		}
		l.b = l.param("bias", bias)
		if l.C.Cell == "gru" {
			l.bh = l.param("recurrent_bias", tensor.New(tensor.F32, g*u))
		}
	}
	return err
}

func (l *recurrent) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	x := in[0]
	bsz, steps, u := x.Shape()[0], x.Shape()[1], l.C.Units
	// Project every step's input at once: (B, T, F) @ (F, G*U) + b.
	xp := tensor.Add(c.matmul(x, c.v(l.wx)), c.v(l.b))
	h := tensor.Full(c.g, tensor.F32, tensor.Shape{bsz, u}, 0)
	cell := h
	gate := func(z *tensor.Node, k int) *tensor.Node { return tensor.SliceAxis(z, 1, k*u, (k+1)*u) }
	var outs []*tensor.Node
	for t := 0; t < steps; t++ {
		xt := tensor.Reshape(tensor.SliceAxis(xp, 1, t, t+1), bsz, l.gates()*u)
		hp := c.matmul(h, c.v(l.wh))
		if l.C.Cell == "lstm" {
			z := tensor.Add(xt, hp)
			i, f := tensor.Sigmoid(gate(z, 0)), tensor.Sigmoid(gate(z, 1))
			g, o := tensor.Tanh(gate(z, 2)), tensor.Sigmoid(gate(z, 3))
			cell = tensor.Add(tensor.Mul(f, cell), tensor.Mul(i, g))
			h = tensor.Mul(o, tensor.Tanh(cell))
		} else {
			hp = tensor.Add(hp, c.v(l.bh))
			r := tensor.Sigmoid(tensor.Add(gate(xt, 0), gate(hp, 0)))
			z := tensor.Sigmoid(tensor.Add(gate(xt, 1), gate(hp, 1)))
			n := tensor.Tanh(tensor.Add(gate(xt, 2), tensor.Mul(r, gate(hp, 2))))
			// h = (1-z)*n + z*h = n + z*(h-n)
			h = tensor.Add(n, tensor.Mul(z, tensor.Sub(h, n)))
		}
		if l.C.ReturnSequences {
			outs = append(outs, tensor.Reshape(h, bsz, 1, u))
		}
	}
	if l.C.ReturnSequences {
		if len(outs) == 1 {
			return outs[0]
		}
		return tensor.Concat(1, outs...)
	}
	return h
}

// seqPool reduces (time, features) samples to (features).
type seqPool struct {
	layerBase
	C struct{ Mode string }
}

// SequencePooling reduces (time, features) samples to (features) by the mean over time
// (default) or by taking the first step (Pooling("first"), a class token).
func SequencePooling(opts ...LayerOption) Layer {
	l := &seqPool{}
	s := layerSettings{pooling: "mean"}
	initBase(l, "sequence_pooling", &s, []string{"Pooling"}, opts)
	l.C.Mode = s.pooling
	return l
}

func (l *seqPool) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *seqPool) config() any             { return &l.C }
func (l *seqPool) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	if err := wantRank(l.name, in[0], "(time, features) samples", 2); err != nil {
		return err
	}
	_, err := l.checkRebuild(in)
	return err
}
func (l *seqPool) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	if l.C.Mode == "first" {
		x := in[0]
		return tensor.Reshape(tensor.SliceAxis(x, 1, 0, 1), x.Shape()[0], x.Shape()[2])
	}
	return tensor.Mean(in[0], []int{1}, false)
}

// attention is multi-head scaled dot-product attention with learned projections.
type attention struct {
	layerBase
	C struct {
		Heads   int
		Causal  bool
		Rotary  bool
		Dropout float64
	}
	wq, wk, wv, wo, bq, bk, bv, bo *tensor.Variable
}

// Attention is multi-head attention over (time, features) samples, all heads in one
// batched op. Apply(x) attends x to itself; Apply(x, context) is cross-attention with
// keys and values from context; Apply(x, context, mask) adds an explicit additive mask
// (time, context time) — pass x twice to self-attend with a mask. Options: Heads
// (default 1), Causal, Rotary (rotary position embeddings on queries and keys),
// DropoutRate (on the output), Name.
func Attention(opts ...LayerOption) Layer {
	l := &attention{}
	s := layerSettings{heads: 1}
	initBase(l, "attention", &s, []string{"Heads", "Causal", "Rotary", "DropoutRate"}, opts)
	l.C.Heads, l.C.Causal, l.C.Rotary, l.C.Dropout = s.heads, s.causal, s.rotary, s.dropout
	return l
}

func (l *attention) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *attention) config() any             { return &l.C }

func (l *attention) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 3); err != nil {
		return err
	}
	for _, s := range in[:min(len(in), 2)] {
		if err := wantRank(l.name, s, "(time, features) samples", 2); err != nil {
			return err
		}
		if err := wantFloat(l.name, s); err != nil {
			return err
		}
	}
	d := in[0].Shape[1]
	if d%l.C.Heads != 0 {
		return fmt.Errorf("layer %s: %d features do not split into %d heads", l.name, d, l.C.Heads)
	}
	if l.C.Rotary && (d/l.C.Heads)%2 != 0 {
		return fmt.Errorf("layer %s: rotary embeddings need an even head size, have %d", l.name, d/l.C.Heads)
	}
	first, err := l.checkRebuild(in)
	if first && err == nil {
		dc := d
		if len(in) > 1 {
			dc = in[1].Shape[1]
		}
		l.wq, l.bq = l.param("query/kernel", glorot(d, d, d, d)), l.param("query/bias", tensor.New(tensor.F32, d))
		l.wk, l.bk = l.param("key/kernel", glorot(dc, d, dc, d)), l.param("key/bias", tensor.New(tensor.F32, d))
		l.wv, l.bv = l.param("value/kernel", glorot(dc, d, dc, d)), l.param("value/bias", tensor.New(tensor.F32, d))
		l.wo, l.bo = l.param("output/kernel", glorot(d, d, d, d)), l.param("output/bias", tensor.New(tensor.F32, d))
	}
	return err
}

func (l *attention) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	x, ctx := in[0], in[0]
	if len(in) > 1 {
		ctx = in[1]
	}
	var mask *tensor.Node
	if len(in) > 2 {
		mask = in[2]
	}
	b, t, d := x.Shape()[0], x.Shape()[1], x.Shape()[2]
	s := ctx.Shape()[1]
	if mask != nil && mask.Shape().Rank() == 3 { // (batch, time, context time): one mask for every head
		mask = tensor.Reshape(mask, b, 1, t, s)
	}
	h := l.C.Heads
	// The heads stay inside each time step's row, (B, n, H, D/H): attention reads them
	// in place (AttentionBTHD), so no permute runs forward or backward.
	heads := func(y *tensor.Node, n int) *tensor.Node { return tensor.Reshape(y, b, n, h, d/h) }
	proj := func(y *tensor.Node, w, bias *tensor.Variable) *tensor.Node {
		return tensor.Add(c.matmul(y, c.v(w)), c.v(bias))
	}
	q, k, v := heads(proj(x, l.wq, l.bq), t), heads(proj(ctx, l.wk, l.bk), s), heads(proj(ctx, l.wv, l.bv), s)
	if l.C.Rotary {
		// RoPE rotates rows by their position: the (n·H) rows of (B, n·H, D/H), each
		// head's row at its time step's position.
		rope := func(y *tensor.Node, n int) *tensor.Node {
			return tensor.Reshape(tensor.RoPE(tensor.Reshape(y, b, n*h, d/h), positions(c.g, n, h), tensor.RoPEAttr{}), b, n, h, d/h)
		}
		q, k = rope(q, t), rope(k, s)
	}
	o := tensor.Attention(q, k, v, mask, tensor.AttentionAttr{Causal: l.C.Causal, Scale: float32(1 / math.Sqrt(float64(d/h))),
		Layout: tensor.AttentionBTHD})
	return c.dropout(proj(tensor.Reshape(o, b, t, d), l.wo, l.bo), l.C.Dropout)
}

// positions returns the constant I64 vector of positions 0..n-1, each repeated times
// times in a row.
func positions(g *tensor.Graph, n, times int) *tensor.Node {
	p := tensor.New(tensor.I64, n*times)
	for i := range p.Int64s() {
		p.Int64s()[i] = int64(i / times)
	}
	return g.Const(p)
}
