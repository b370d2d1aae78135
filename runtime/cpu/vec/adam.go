package vec

import "math"

// AdamConsts are the scalars of one Adam step, by index: β1, 1-β1, β2, 1-β2, the
// weight decay folded into the gradient (0 for AdamW), the learning rate, the bias
// corrections 1/(1-β1ᵗ) and 1/(1-β2ᵗ), ε, and the decoupled decay factor of the
// parameter (1 for Adam).
type AdamConsts [10]float32

// AdamStep updates p, m and v in place from the gradient g, element by element, in
// float32 rounded after each operation:
//
//	g' = g + wd·p;  m = β1·m + (1-β1)·g';  v = β2·v + (1-β2)·g'·g'
//	p  = p·decay - lr·(m·c1) / (√(v·c2) + ε)
//
// The assembly treats subnormal numbers as zero, as operands and as results (MXCSR's
// DAZ and FTZ modes around its loop): the moments of a parameter whose gradient has
// become zero (a dead ReLU unit) decay geometrically through the subnormal range, where
// Intel cores take a microcode assist per operation, which made the update 10-30 times
// slower; flushing moves a parameter by less than lr·2⁻¹²⁶/ε, nothing a model can see.
// It also takes the last elements, padded to a whole vector, so the result of an
// element does not depend on where a slice (a thread's share) ends. The Go code (other
// architectures, whose cores handle subnormals at full speed, and GML_SIMD=go) does the
// same operations without flushing, so it gives the same bits unless a subnormal occurs.
func AdamStep(c *AdamConsts, p, g, m, v []float32) {
	var k call
	k.op, k.s[0], k.s[1], k.s[2], k.s[3], k.in, k.out, k.adam = opAdam, p, g[:len(p)], m[:len(p)], v[:len(p)], 0xf, 1<<0|1<<2|1<<3, c
	k.run()
}

func adamGo(c *AdamConsts, p, g, m, v []float32) {
	b1, nb1, b2, nb2, wd, lr, c1, c2, eps, decay := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9]
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	for i := range p {
		// Each product rounded (float32(...)), so no architecture fuses a multiply-add.
		gi := g[i] + float32(wd*p[i])
		mi := float32(b1*m[i]) + float32(nb1*gi)
		vi := float32(b2*v[i]) + float32(float32(nb2*gi)*gi)
		m[i], v[i] = mi, vi
		p[i] = float32(p[i]*decay) - float32(lr*float32(mi*c1))/(float32(math.Sqrt(float64(float32(vi*c2))))+eps)
	}
}
