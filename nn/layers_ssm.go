package nn

import (
	"fmt"
	"math"

	"github.com/gml-dev/gml/tensor"
)

// State-space and linear-attention blocks over (time, features) samples, built on the
// engine's fused recurrences (tensor.SSMConv and SSMScan, WKV6, WKV7), which run on the
// CPU and the GPU and train through their fused backward ops. Each block is residual
// and pre-normalised, so blocks stack like TransformerBlock.

func init() {
	layerKinds["mamba_block"] = func() Layer { return &mambaBlock{} }
	layerKinds["rwkv_block"] = func() Layer { return &rwkvBlock{} }
}

// mambaBlock is a Mamba (selective state-space) block.
type mambaBlock struct {
	layerBase
	C struct{ State, ConvWidth, Expand, DtRank int }

	// weights
	norm, inProj, convW, convB, xProj, dtProj, dtBias, aLog, dSkip, outProj *tensor.Variable
}

// MambaBlock is a Mamba block (Gu and Dao, 2023) over (time, features) samples, with
// features D: x + out(ssm(silu(conv(in_x))) · silu(in_z)) after an RMS norm, where in_x
// and in_z are the two halves of a projection to 2·expand·D channels, conv is a causal
// depthwise convolution of convWidth taps, and ssm is the selective scan with a state of
// stateSize per channel whose step Δ, input matrix B and output matrix C are computed
// from the token (the "selective" part). The usual sizes are stateSize 16, convWidth 4,
// expand 2. Options: Name.
func MambaBlock(stateSize, convWidth, expand int, opts ...LayerOption) Layer {
	l := &mambaBlock{}
	initBase(l, "mamba_block", &layerSettings{}, nil, opts)
	if l.err == nil && (stateSize <= 0 || convWidth <= 0 || expand <= 0) {
		l.err = fmt.Errorf("nn: MambaBlock: state size, convolution width and expansion must be positive, got %d, %d, %d", stateSize, convWidth, expand)
	}
	l.C.State, l.C.ConvWidth, l.C.Expand = stateSize, convWidth, expand
	return l
}

func (l *mambaBlock) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *mambaBlock) config() any             { return &l.C }

func (l *mambaBlock) setup(in []Spec) error {
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
	if !first || err != nil {
		return err
	}
	d := in[0].Shape[1]
	e, n, k := l.C.Expand*d, l.C.State, l.C.ConvWidth
	l.C.DtRank = (d + 15) / 16
	r := l.C.DtRank
	l.norm = l.param("norm", filled(1, d))
	l.inProj = l.param("in_proj", glorot(d, 2*e, d, 2*e))
	l.convW = l.param("conv_kernel", uniformInit(1/math.Sqrt(float64(k)), e, k))
	l.convB = l.param("conv_bias", tensor.New(tensor.F32, e))
	l.xProj = l.param("x_proj", glorot(e, r+2*n, e, r+2*n))
	l.dtProj = l.param("dt_proj", uniformInit(1/math.Sqrt(float64(r)), r, e))
	// Δ starts between 0.001 and 0.1 (log-uniform): dt_bias is softplus's inverse of it.
	bias := tensor.New(tensor.F32, e)
	aLog := tensor.New(tensor.F32, e, n)
	rngMu.Lock()
	for i := range e {
		dt := math.Exp(math.Log(0.001) + rng.Float64()*(math.Log(0.1)-math.Log(0.001)))
		bias.Float32s()[i] = float32(dt + math.Log(-math.Expm1(-dt)))
	}
	rngMu.Unlock()
	// A = −(1, 2, …, N) for every channel, stored as log(−A).
	for c := range e {
		for j := range n {
			aLog.Float32s()[c*n+j] = float32(math.Log(float64(j + 1)))
		}
	}
	l.dtBias = l.param("dt_bias", bias)
	l.aLog = l.param("a_log", aLog)
	l.dSkip = l.param("d", filled(1, e))
	l.outProj = l.param("out_proj", glorot(e, d, e, d))
	return nil
}

func (l *mambaBlock) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	x := in[0]
	d := x.Shape()[2]
	e, n, r := l.C.Expand*d, l.C.State, l.C.DtRank
	h := tensor.RMSNorm(x, c.v(l.norm), []int{-1}, 1e-5)
	xz := tensor.Split(c.matmul(h, c.v(l.inProj)), 2, e, e)
	xc := tensor.Silu(tensor.Add(tensor.SSMConv(xz[0], c.v(l.convW), nil), c.v(l.convB)))
	parts := tensor.Split(c.matmul(xc, c.v(l.xProj)), 2, r, n, n)
	dt := tensor.Softplus(tensor.Add(c.matmul(parts[0], c.v(l.dtProj)), c.v(l.dtBias)))
	a := tensor.Neg(tensor.Exp(c.v(l.aLog)))
	y, _ := tensor.SSMScan(xc, dt, a, parts[1], parts[2], nil)
	y = tensor.Add(y, tensor.Mul(xc, c.v(l.dSkip)))
	y = tensor.Mul(y, tensor.Silu(xz[1]))
	return tensor.Add(x, c.matmul(y, c.v(l.outProj)))
}

// rwkvBlock is an RWKV block: time mixing through WKV6 or WKV7, then channel mixing.
type rwkvBlock struct {
	layerBase
	C struct{ Version, Heads, FFDim, DecayRank int }
	// time mixing
	ln1g, ln1b, mix, wr, wk, wv, wg, wo, w0, wd1, wd2, u, a0, wa, gng, gnb *tensor.Variable
	// channel mixing
	ln2g, ln2b, cmix, ck, cv, cr *tensor.Variable
}

// RWKVBlock is an RWKV block (Peng et al.) over (time, features) samples: x +
// TimeMix(LayerNorm(x)), then h + ChannelMix(LayerNorm(h)). Time mixing interpolates
// each token with the previous one (token shift), projects to receptance, key, value,
// gate and a data-dependent decay, runs the version's wkv recurrence per head (version 6:
// RWKV-6's, with a learned bonus for the current token; version 7: RWKV-7's, with the
// state corrected towards the normalised key by a learned in-context rate), normalises
// each head and projects back through the gate. Channel mixing is RWKV's squared-ReLU
// feed-forward gated by a sigmoid receptance. Features must divide into Heads (default:
// heads of 64, or one head). Options: Heads, FeedForward (hidden size, default 4 ×
// features), Name.
func RWKVBlock(version int, opts ...LayerOption) Layer {
	l := &rwkvBlock{}
	s := layerSettings{}
	initBase(l, "rwkv_block", &s, []string{"Heads", "FeedForward"}, opts)
	if l.err == nil && version != 6 && version != 7 {
		l.err = fmt.Errorf("nn: RWKVBlock: version must be 6 or 7, got %d", version)
	}
	l.C.Version, l.C.Heads, l.C.FFDim = version, s.heads, s.ffDim
	return l
}

func (l *rwkvBlock) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *rwkvBlock) config() any             { return &l.C }

func (l *rwkvBlock) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	if err := wantFloat(l.name, in[0]); err != nil {
		return err
	}
	if err := wantRank(l.name, in[0], "(time, features) samples", 2); err != nil {
		return err
	}
	c := in[0].Shape[1]
	if l.C.Heads == 0 {
		l.C.Heads = max(1, c/64)
		if c%l.C.Heads != 0 {
			l.C.Heads = 1
		}
	}
	if c%l.C.Heads != 0 {
		return fmt.Errorf("layer %s: %d features do not divide into %d heads", l.name, c, l.C.Heads)
	}
	first, err := l.checkRebuild(in)
	if !first || err != nil {
		return err
	}
	if l.C.FFDim == 0 {
		l.C.FFDim = 4 * c
	}
	l.C.DecayRank = max(8, c/8)
	f, dr := l.C.FFDim, l.C.DecayRank
	s := c / l.C.Heads
	lin := func(name string, in, out int) *tensor.Variable { return l.param(name, glorot(in, out, in, out)) }
	l.ln1g, l.ln1b = l.param("ln1_gamma", filled(1, c)), l.param("ln1_beta", tensor.New(tensor.F32, c))
	// Mixing coefficients of the token shift for r, k, v, g, w (and a): one row each.
	l.mix = l.param("time_mix", uniformInit(0.5, 6, c))
	l.wr, l.wk, l.wv, l.wg, l.wo = lin("receptance", c, c), lin("key", c, c), lin("value", c, c), lin("gate", c, c), lin("output", c, c)
	// The decay: w0 + tanh(x·wd1)·wd2 (a low-rank, data-dependent offset).
	w0 := tensor.New(tensor.F32, c)
	for i := range c {
		w0.Float32s()[i] = float32(-6 + 5*math.Pow(float64(i)/float64(max(c-1, 1)), 0.7)) // RWKV's spread of decay speeds
	}
	l.w0 = l.param("decay", w0)
	l.wd1 = l.param("decay_lora_a", uniformInit(0.01, c, dr))
	l.wd2 = l.param("decay_lora_b", uniformInit(0.01, dr, c))
	if l.C.Version == 6 {
		l.u = l.param("bonus", uniformInit(0.5, l.C.Heads, s))
	} else {
		l.a0 = l.param("iclr_bias", tensor.New(tensor.F32, c))
		l.wa = lin("iclr", c, c)
	}
	l.gng, l.gnb = l.param("head_norm_gamma", filled(1, s)), l.param("head_norm_beta", tensor.New(tensor.F32, s))
	l.ln2g, l.ln2b = l.param("ln2_gamma", filled(1, c)), l.param("ln2_beta", tensor.New(tensor.F32, c))
	l.cmix = l.param("channel_mix", uniformInit(0.5, 2, c))
	l.ck, l.cv, l.cr = lin("ffn_key", c, f), lin("ffn_value", f, c), lin("ffn_receptance", c, c)
	return nil
}

// tokenShift returns x[t−1] − x[t] for (batch, time, features) x, with zeros before
// the first token.
func tokenShift(x *tensor.Node) *tensor.Node {
	s := x.Shape()
	prev := tensor.Concat(1, tensor.Full(x.Graph(), x.DType(), tensor.Shape{s[0], 1, s[2]}, 0), tensor.SliceAxis(x, 1, 0, s[1]-1))
	return tensor.Sub(prev, x)
}

func (l *rwkvBlock) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	x := in[0]
	sh := x.Shape()
	b, t, ch := sh[0], sh[1], sh[2]
	hh, s := l.C.Heads, ch/l.C.Heads
	heads := func(v *tensor.Node) *tensor.Node { return tensor.Reshape(v, b, t, hh, s) }

	h := tensor.LayerNorm(x, c.v(l.ln1g), c.v(l.ln1b), []int{-1}, 1e-5)
	dx := tokenShift(h)
	mix := tensor.Split(c.v(l.mix), 0, 1, 1, 1, 1, 1, 1)
	lerp := func(i int) *tensor.Node { return tensor.Add(h, tensor.Mul(dx, tensor.Reshape(mix[i], ch))) }
	r := c.matmul(lerp(0), c.v(l.wr))
	k := c.matmul(lerp(1), c.v(l.wk))
	v := c.matmul(lerp(2), c.v(l.wv))
	g := tensor.Silu(c.matmul(lerp(3), c.v(l.wg)))
	dd := tensor.Add(c.v(l.w0), c.matmul(tensor.Tanh(c.matmul(lerp(4), c.v(l.wd1))), c.v(l.wd2)))
	var y *tensor.Node
	if l.C.Version == 6 {
		w := tensor.Exp(tensor.Neg(tensor.Exp(dd))) // decay factors in (0, 1)
		y, _ = tensor.WKV6(heads(r), heads(k), heads(v), heads(w), c.v(l.u), nil)
	} else {
		// RWKV-7 bounds the decay to (e^−0.607, 1) and corrects the state towards the
		// normalised key kk at the in-context rate a: a_t = −kk, b_t = kk·a.
		w := tensor.Exp(tensor.MulScalar(tensor.Sigmoid(dd), -0.606531))
		a := tensor.Sigmoid(tensor.Add(c.v(l.a0), c.matmul(lerp(5), c.v(l.wa))))
		kh := heads(k)
		norm := tensor.Sqrt(tensor.AddScalar(tensor.Sum(tensor.Square(kh), []int{-1}, true), 1e-12))
		kk := tensor.Div(kh, norm)
		y, _ = tensor.WKV7(heads(r), heads(w), kh, heads(v), tensor.Neg(kk), tensor.Mul(kk, heads(a)), nil)
	}
	y = tensor.LayerNorm(y, c.v(l.gng), c.v(l.gnb), []int{-1}, 64e-5)
	att := c.matmul(tensor.Mul(tensor.Reshape(y, b, t, ch), g), c.v(l.wo))
	x = tensor.Add(x, att)

	h2 := tensor.LayerNorm(x, c.v(l.ln2g), c.v(l.ln2b), []int{-1}, 1e-5)
	dx2 := tokenShift(h2)
	cm := tensor.Split(c.v(l.cmix), 0, 1, 1)
	kx := tensor.Add(h2, tensor.Mul(dx2, tensor.Reshape(cm[0], ch)))
	rx := tensor.Add(h2, tensor.Mul(dx2, tensor.Reshape(cm[1], ch)))
	kf := tensor.Square(tensor.Relu(c.matmul(kx, c.v(l.ck))))
	ffn := tensor.Mul(tensor.Sigmoid(c.matmul(rx, c.v(l.cr))), c.matmul(kf, c.v(l.cv)))
	return tensor.Add(x, ffn)
}
