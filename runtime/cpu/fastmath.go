package cpu

import "math"

// Float32 transcendental functions for the activation kernels: Cephes-style range
// reduction and minimax polynomials, accurate to about 1 ulp over the whole float32
// range. The exp loops inline expCore and run at about twice the speed of converting
// to float64 for math.Exp (5 against 10 ns per element on the H200 host's Xeon).
// Results below the normal range flush to zero.

// expLo and expHi bound the arguments expCore handles: below expLo eˣ is not a normal
// float32, above expHi 2ⁿ would not fit the exponent field.
const (
	expLo = -87.33654
	expHi = 88.3
)

// expf returns eˣ. Loops inline its fast path themselves (expf is too large for the
// inliner; expCore is not):
//
//	if v >= expLo && v <= expHi { y = expCore(v) } else { y = expEdge(v) }
func expf(x float32) float32 {
	if x >= expLo && x <= expHi {
		return expCore(x)
	}
	return expEdge(x)
}

// expCore is eˣ for x in [expLo, expHi], without branches so a loop over random signs
// does not mispredict: x = n·ln2 + r with n rounded to nearest by the 1.5·2²³ trick and
// ln2 split so n·ln2Hi is exact, then a degree-6 polynomial for eʳ scaled by 2ⁿ.
func expCore(x float32) float32 {
	n := (x*1.442695040888963 + 12582912) - 12582912
	r := x - n*0.693359375 + n*2.12194440e-4
	p := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
	return (p*r*r + r + 1) * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// expEdge is eˣ outside [expLo, expHi]: NaN stays NaN, large x goes through float64
// (to +Inf beyond the float32 range), small x flushes to zero.
func expEdge(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > expHi:
		return float32(math.Exp(float64(x)))
	}
	return 0
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

// erff returns erf(x): the Taylor series near zero (through x¹³, below 1e-9 relative
// for |x| < 0.5), elsewhere 1 - erfc(|x|) with Numerical Recipes' Chebyshev fit of
// erfc (fractional error below 1.2e-7). Its exponent -x² + P(t) is split in two
// exponentials so that x² is taken exactly (in float64) where float32 would lose
// 1e-6 of a large exponent.
func erff(x float32) float32 {
	a := x
	if a < 0 {
		a = -a
	}
	if a < 0.5 {
		z := x * x
		return x * (1.1283791670955126 + z*(-0.37612638903183754+z*(0.11283791670955126+z*(-0.026866170645131252+
			z*(0.005223977625442188+z*(-0.0008548327023450852+z*0.00012055332981789664))))))
	}
	if a > 10 || a != a {
		if a != a {
			return x
		}
		return float32(math.Copysign(1, float64(x)))
	}
	t := 1 / (1 + 0.5*a)
	p := -1.26551223 + t*(1.00002368+t*(0.37409196+t*(0.09678418+t*(-0.18628806+t*(0.27886807+
		t*(-1.13520398+t*(1.48851587+t*(-0.82215223+t*0.17087277))))))))
	sq := float64(a) * float64(a) // exact: 24 by 24 bits
	hi := float32(sq)
	lo := float32(sq - float64(hi))
	r := 1 - t*expf(-hi)*expf(p-lo)
	if x < 0 {
		return -r
	}
	return r
}

// sigmoidf returns 1/(1+e⁻ˣ).
func sigmoidf(x float32) float32 { return 1 / (1 + expf(-x)) }

// expSlice, sigmoidSlice and siluSlice are the activation loops, with expCore inlined.

func expSlice(d, x []float32) {
	d = d[:len(x)]
	for i, v := range x {
		if v >= expLo && v <= expHi {
			d[i] = expCore(v)
		} else {
			d[i] = expEdge(v)
		}
	}
}

func sigmoidSlice(d, x []float32) {
	d = d[:len(x)]
	for i, v := range x {
		e := -v
		if e >= expLo && e <= expHi {
			e = expCore(e)
		} else {
			e = expEdge(e)
		}
		d[i] = 1 / (1 + e)
	}
}

func siluSlice(d, x []float32) {
	d = d[:len(x)]
	for i, v := range x {
		e := -v
		if e >= expLo && e <= expHi {
			e = expCore(e)
		} else {
			e = expEdge(e)
		}
		d[i] = v / (1 + e)
	}
}
