package nn

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// transformerBlock is a pre-norm transformer encoder block built from other layers.
type transformerBlock struct {
	layerBase
	C struct {
		Heads   int
		FFDim   int
		Norm    string
		Causal  bool
		Rotary  bool
		Dropout float64
	}
	norm1, attn, norm2, ff1, ff2 Layer
}

// TransformerBlock is a pre-norm transformer block over (time, features) samples:
// x + Dropout(Attention(Norm(x))), then h + Dropout(Dense(FeedForward(Norm(h)))) with a
// GELU hidden layer. Options: Heads (default 1), FeedForward (default 4 × features),
// Norm ("layer" or "rms"), Causal, Rotary, DropoutRate, Name.
func TransformerBlock(opts ...LayerOption) Layer {
	l := &transformerBlock{}
	s := layerSettings{heads: 1, norm: "layer"}
	initBase(l, "transformer_block", &s, []string{"Heads", "FeedForward", "Norm", "Causal", "Rotary", "DropoutRate"}, opts)
	l.C.Heads, l.C.FFDim, l.C.Norm, l.C.Causal, l.C.Rotary, l.C.Dropout = s.heads, s.ffDim, s.norm, s.causal, s.rotary, s.dropout
	return l
}

func (l *transformerBlock) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *transformerBlock) config() any             { return &l.C }

// sublayers lists the block's parts (nil before setup).
func (l *transformerBlock) sublayers() []Layer {
	if l.attn == nil {
		return nil
	}
	return []Layer{l.norm1, l.attn, l.norm2, l.ff1, l.ff2}
}

// Params lists the trainable variables of every part.
func (l *transformerBlock) Params() []*tensor.Variable {
	var out []*tensor.Variable
	for _, s := range l.sublayers() {
		out = append(out, s.Params()...)
	}
	return out
}

func (l *transformerBlock) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	if err := wantRank(l.name, in[0], "(time, features) samples", 2); err != nil {
		return err
	}
	first, err := l.checkRebuild(in)
	if err != nil || !first {
		return err
	}
	d := in[0].Shape[1]
	ff := l.C.FFDim
	if ff == 0 {
		ff = 4 * d
	}
	norm := LayerNorm
	if l.C.Norm == "rms" {
		norm = RMSNorm
	}
	attnOpts := []LayerOption{Heads(l.C.Heads), Name(l.name + "/attention")}
	if l.C.Causal {
		attnOpts = append(attnOpts, Causal())
	}
	if l.C.Rotary {
		attnOpts = append(attnOpts, Rotary())
	}
	l.norm1, l.norm2 = norm(Name(l.name+"/norm1")), norm(Name(l.name+"/norm2"))
	l.attn = Attention(attnOpts...)
	l.ff1 = Dense(ff, Activation("gelu"), Name(l.name+"/ff1"))
	l.ff2 = Dense(d, Name(l.name+"/ff2"))
	spec := in[0]
	for _, s := range []Layer{l.norm1, l.attn, l.norm2, l.ff1, l.ff2} {
		if err := s.base().err; err != nil {
			return err
		}
		if spec, err = inferSpec(s, []Spec{spec}); err != nil {
			return fmt.Errorf("layer %s: %w", l.name, err)
		}
	}
	return nil
}

func (l *transformerBlock) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	x := in[0]
	one := func(s Layer, y *tensor.Node) *tensor.Node { return s.forward(c, []*tensor.Node{y}) }
	h := tensor.Add(x, c.dropout(one(l.attn, one(l.norm1, x)), l.C.Dropout))
	f := one(l.ff2, one(l.ff1, one(l.norm2, h)))
	return tensor.Add(h, c.dropout(f, l.C.Dropout))
}
