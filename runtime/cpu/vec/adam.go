package vec

import "math"

// AdamConsts are the scalars of one Adam step, by index: β1, 1-β1, β2, 1-β2, the
// weight decay folded into the gradient (0 for AdamW), the learning rate, the bias
// corrections 1/(1-β1ᵗ) and 1/(1-β2ᵗ), ε, and the decoupled decay factor of the
// parameter (1 for Adam).
type AdamConsts [10]float32

// AdamStep updates p, m and v in place from the gradient g, element by element, in
// float32 rounded after each operation (the assembly does the same operations in the
// same order, so every level gives the same result):
//
//	g' = g + wd·p;  m = β1·m + (1-β1)·g';  v = β2·v + (1-β2)·g'·g'
//	p  = p·decay - lr·(m·c1) / (√(v·c2) + ε)
func AdamStep(c *AdamConsts, p, g, m, v []float32) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	i := 0
	if active.adam != nil {
		i = active.adam(c, p, g, m, v)
	}
	adamGo(c, p[i:], g[i:], m[i:], v[i:])
}

func adamGo(c *AdamConsts, p, g, m, v []float32) {
	b1, nb1, b2, nb2, wd, lr, c1, c2, eps, decay := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9]
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	for i := range p {
		gi := g[i] + wd*p[i]
		mi := b1*m[i] + nb1*gi
		vi := b2*v[i] + nb2*gi*gi
		m[i], v[i] = mi, vi
		p[i] = p[i]*decay - lr*(mi*c1)/(float32(math.Sqrt(float64(vi*c2)))+eps)
	}
}
