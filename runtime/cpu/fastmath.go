package cpu

import "math"

// Float32 transcendental functions for the activation kernels: Cephes-style range
// reduction and minimax polynomials, accurate to about 1 ulp over the whole float32
// range, and about twice as fast as converting to float64 for package math. Results
// below the normal range flush to zero.

// expf returns eˣ.
func expf(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 88.72283:
		return float32(math.Inf(1))
	case x < -87.33654:
		return 0
	}
	// x = n·ln2 + r with |r| <= ln2/2; ln2 is split so n·ln2Hi is exact.
	t := x*1.442695040888963 + 0.5
	n := float32(int32(t))
	if t < 0 && n != t {
		n-- // floor for negative t
	}
	r := x - n*0.693359375 + n*2.12194440e-4
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	p = p*r*r + r + 1
	if n > 127 { // 2ⁿ itself overflows though the product does not
		return p * 2 * math.Float32frombits(uint32(int32(n)+126)<<23)
	}
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// tanhf returns tanh(x): an odd polynomial near zero, where 1 - 2/(e²ˣ+1) would cancel,
// and the exponential form elsewhere.
func tanhf(x float32) float32 {
	a := x
	if a < 0 {
		a = -a
	}
	if a < 0.625 {
		z := x * x
		p := ((((-5.70498872745e-3*z+2.06390887954e-2)*z-5.37397155531e-2)*z+1.33314422036e-1)*z - 3.33332819422e-1) * z
		return x + x*p
	}
	if a > 9.1 {
		return float32(math.Copysign(1, float64(x)))
	}
	r := 1 - 2/(expf(2*a)+1)
	if x < 0 {
		return -r
	}
	return r
}

// sigmoidf returns 1/(1+e⁻ˣ).
func sigmoidf(x float32) float32 { return 1 / (1 + expf(-x)) }
