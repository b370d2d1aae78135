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
//
// Subnormal numbers count as zero, as operands and as results (ftz.go says why).
func AdamStep(c *AdamConsts, p, g, m, v []float32) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	i := 0
	if active.adam != nil {
		i = active.adam(c, p, g, m, v)
	}
	adamGo(c, p[i:], g[i:], m[i:], v[i:])
}

func adamGo(c *AdamConsts, p, g, m, v []float32) {
	var k AdamConsts
	for i, x := range c {
		k[i] = daz(x)
	}
	b1, nb1, b2, nb2, wd, lr, c1, c2, eps, decay := k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8], k[9]
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	for i := range p {
		pi := daz(p[i])
		gi := addFTZ(daz(g[i]), mulFTZ(wd, pi))
		mi := addFTZ(mulFTZ(b1, daz(m[i])), mulFTZ(nb1, gi))
		vi := addFTZ(mulFTZ(b2, daz(v[i])), mulFTZ(mulFTZ(nb2, gi), gi))
		m[i], v[i] = mi, vi
		num := mulFTZ(mulFTZ(mi, c1), lr)
		den := addFTZ(float32(math.Sqrt(float64(mulFTZ(vi, c2)))), eps) // √ of a float32 is never tiny
		p[i] = subFTZ(mulFTZ(pi, decay), divFTZ(num, den))
	}
}
