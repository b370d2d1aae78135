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
// Subnormal numbers count as zero, as operands and as results (x86's MXCSR DAZ and FTZ
// modes, which the assembly sets for its loop): the moments of a parameter whose
// gradient has become zero (a dead ReLU unit) decay geometrically through the subnormal
// range, where Intel cores take a microcode assist per operation, which made the update
// 10-40 times slower. A subnormal moment moves the parameter by less than lr·1e-38/ε,
// so flushing it changes nothing a model can see.
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
		gi := daz(g[i]) + mulFTZ(wd, pi) // a sum of float32s is never tiny unless subnormal
		gi = ftz(gi)
		mi := ftz(mulFTZ(b1, daz(m[i])) + mulFTZ(nb1, gi))
		vi := ftz(mulFTZ(b2, daz(v[i])) + mulFTZ(mulFTZ(nb2, gi), gi))
		m[i], v[i] = mi, vi
		num := mulFTZ(mulFTZ(mi, c1), lr)
		den := float32(math.Sqrt(float64(mulFTZ(vi, c2)))) + eps // √ of a normal is normal
		p[i] = ftz(mulFTZ(pi, decay) - divFTZ(num, ftz(den)))
	}
}

// tinyBound is the largest magnitude that FTZ flushes: x86 detects tininess after
// rounding, so a result flushes when, rounded to 24 bits with an unbounded exponent, it
// is below the smallest normal 2⁻¹²⁶, which holds for exact results below 2⁻¹²⁶ - 2⁻¹⁵¹
// (that one rounds to even, up to 2⁻¹²⁶).
const tinyBound = 0x1p-126 - 0x1p-151

// daz returns x, or a zero of its sign when x is subnormal.
func daz(x float32) float32 {
	if b := math.Float32bits(x); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return x
}

// ftz returns the rounded result r of an operation whose exact result is never
// tiny-but-normal (sums and differences of float32s are multiples of 2⁻¹⁴⁹, so
// one that rounds to ±2⁻¹²⁶ is exactly that), flushed when subnormal.
func ftz(r float32) float32 { return daz(r) }

// mulFTZ is a·b with x86's FTZ: the float64 product of two float32s is exact, and it
// decides the one case rounding hides, a product that rounds up to ±2⁻¹²⁶.
func mulFTZ(a, b float32) float32 {
	r := float32(a * b)
	if math.Abs(float64(r)) == 0x1p-126 && math.Abs(float64(a)*float64(b)) < tinyBound {
		return math.Float32frombits(math.Float32bits(r) & 0x80000000)
	}
	return daz(r)
}

// divFTZ is a/b with x86's FTZ. When the quotient rounds to ±2⁻¹²⁶, the float64
// quotient settles whether it is tiny, unless it equals the bound, where the exact
// remainder of a fused multiply-add does.
func divFTZ(a, b float32) float32 {
	r := a / b
	if math.Abs(float64(r)) == 0x1p-126 {
		x, y := math.Abs(float64(a)), math.Abs(float64(b))
		if q := x / y; q < tinyBound || q == tinyBound && math.FMA(-tinyBound, y, x) < 0 {
			return math.Float32frombits(math.Float32bits(r) & 0x80000000)
		}
	}
	return daz(r)
}
