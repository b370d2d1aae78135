package ag

import (
	"math"
)

// MultiheadAttention is multi-head scaled dot-product attention with its own query,
// key, value and output projections (each a Linear of dim features), attention
// dropout in training mode, and masks. It runs FlashAttention over all heads at once.
type MultiheadAttention struct {
	Q, K, V, Out *Linear
	heads        int
	dropout      float64
	causal       bool
	training     bool
}

// NewMultiheadAttention makes attention over dim features split into heads (dim must
// divide evenly); DropoutRate drops attention outputs in training mode, Causal makes
// Forward's self-attention causal, NoBias leaves out the projections' biases.
func NewMultiheadAttention(dim, heads int, opts ...Option) *MultiheadAttention {
	var s settings
	s.apply("multihead_attention", []string{"DropoutRate", "Causal", "NoBias"}, opts)
	positive("multihead_attention", "dim", dim)
	positive("multihead_attention", "heads", heads)
	if dim%heads != 0 {
		fail("multihead_attention", "%d heads do not divide %d features", heads, dim)
	}
	if s.dropout < 0 || s.dropout >= 1 {
		fail("multihead_attention", "dropout rate %v outside [0, 1)", s.dropout)
	}
	var lin []Option
	if s.noBias {
		lin = append(lin, NoBias())
	}
	return &MultiheadAttention{
		Q: NewLinear(dim, dim, lin...), K: NewLinear(dim, dim, lin...), V: NewLinear(dim, dim, lin...),
		Out: NewLinear(dim, dim, lin...), heads: heads, dropout: s.dropout, causal: s.causal, training: true,
	}
}

func (a *MultiheadAttention) setTraining(on bool) { a.training = on }

// Forward is self-attention of x (B, T, dim), causal when the layer was made Causal.
func (a *MultiheadAttention) Forward(x *Tensor) *Tensor { return a.attend(x, x, x, nil, a.causal) }

// Attend attends from queries q (B, Tq, dim) to keys k and values v (B, Tk, dim), with
// an optional mask broadcasting to (B, heads, Tq, Tk) (see FlashAttention) and causal
// masking when causal is set. It returns (B, Tq, dim).
func (a *MultiheadAttention) Attend(q, k, v, mask *Tensor, causal bool) *Tensor {
	return a.attend(q, k, v, mask, causal)
}

func (a *MultiheadAttention) attend(q, k, v, mask *Tensor, causal bool) *Tensor {
	dim := a.Q.Weight.shape[0]
	for _, x := range []*Tensor{q, k, v} {
		if x == nil || x.Rank() != 3 || x.shape[2] != dim {
			fail("multihead_attention", "q, k and v must be (batch, time, %d); have %s", dim, shapes(q, k, v))
		}
	}
	split := func(x *Tensor) *Tensor { // (B, T, dim) -> (B, H, T, dim/H)
		return Permute(Reshape(x, x.shape[0], x.shape[1], a.heads, dim/a.heads), 0, 2, 1, 3)
	}
	o := FlashAttention(split(a.Q.Forward(q)), split(a.K.Forward(k)), split(a.V.Forward(v)), mask, causal)
	o = Reshape(Permute(o, 0, 2, 1, 3), q.shape[0], q.shape[1], dim)
	if a.training && a.dropout > 0 {
		o = Dropout(o, a.dropout)
	}
	return a.Out.Forward(o)
}

// CausalMask returns the additive (t, t) mask of causal attention: 0 on and below the
// diagonal, -Inf above, for FlashAttention or Attend with an explicit mask.
func CausalMask(t int) *Tensor {
	positive("causal_mask", "length", t)
	m := make([]float32, t*t)
	for i := 0; i < t; i++ {
		for j := i + 1; j < t; j++ {
			m[i*t+j] = float32(math.Inf(-1))
		}
	}
	return FromFloat32s([]int{t, t}, m)
}
