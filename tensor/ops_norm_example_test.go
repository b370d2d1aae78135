package tensor_test

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// Causal self-attention over (batch, heads, time, dim) with rotary position embedding
// on queries and keys.
func ExampleAttention() {
	g := tensor.NewGraph()
	q := g.Input("q", tensor.F32, 2, 4, 16, 32)
	k := g.Input("k", tensor.F32, 2, 4, 16, 32)
	v := g.Input("v", tensor.F32, 2, 4, 16, 32)
	pos := g.Input("positions", tensor.I32, 16)
	rope := tensor.RoPEAttr{Base: 10000}
	y := tensor.Attention(tensor.RoPE(q, pos, rope), tensor.RoPE(k, pos, rope), v, nil,
		tensor.AttentionAttr{Causal: true})
	fmt.Println(y.Shape(), y.Attr().(tensor.AttentionAttr).Scale)
	// Output: [2 4 16 32] 0.17677669
}

// Decompose rewrites a fused op into primitives that define its semantics.
func ExampleDecompose() {
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 4, 10)
	y := tensor.LayerNorm(x, nil, nil, nil, 1e-5)
	before := g.Len()
	d := tensor.Decompose(y)
	fmt.Println(d.Op(), d.Shape(), g.Len()-before, "new nodes")
	// Output: mul [4 10] 8 new nodes
}
