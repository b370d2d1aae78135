package vec

import "math"

// The Go code: float32 range reduction and polynomials, accurate to about 1 ulp over
// the whole float32 range. The exp loops inline expCore and run at about twice the speed
// of converting to float64 for math.Exp (5 against 10 ns per element on the H200 host's
// Xeon). Results below the normal range flush to zero.

// expLo and expHi bound the arguments expCore handles: below expLo eˣ is not a normal
// float32, above expHi 2ⁿ would not fit the exponent field.
const (
	expLo = -87.33654
	expHi = 88.3
)

// Expf returns eˣ.
func Expf(x float32) float32 {
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

// Logf returns ln x: x = 2ᵉ·m with m in [√½, √2), then Cephes' logf polynomial in
// f = m - 1 and ln2 split so e·ln2Hi is exact; about 1 ulp, and several times cheaper
// than math.Log's float64 for the one log-sum-exp per row of attention's backward.
// Subnormal, zero, negative, infinite and NaN x go through math.Log.
func Logf(x float32) float32 {
	if !(x >= 0x1p-126 && x <= math.MaxFloat32) {
		return float32(math.Log(float64(x)))
	}
	b := math.Float32bits(x)
	e := float32(int32(b>>23) - 127)
	m := math.Float32frombits(b&0x7fffff | 0x3f800000)
	if m > math.Sqrt2 {
		m *= 0.5
		e++
	}
	f := m - 1
	z := f * f
	y := ((((((((7.0376836292e-2*f-1.1514610310e-1)*f+1.1676998740e-1)*f-1.2420140846e-1)*f+1.4249322787e-1)*f-
		1.6668057665e-1)*f+2.0000714765e-1)*f-2.4999993993e-1)*f + 3.3333331174e-1) * f * z
	y += -2.12194440e-4*e - 0.5*z
	return f + y + 0.693359375*e
}

// Tanhf returns tanh(x): an odd polynomial near zero, where 1 - 2/(e²ˣ+1) would cancel,
// and the exponential form elsewhere.
func Tanhf(x float32) float32 {
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
	r := 1 - 2/(Expf(2*a)+1)
	if x < 0 {
		return -r
	}
	return r
}

// Erff returns erf(x): the rational approximation of doc.go, NaN for NaN.
func Erff(x float32) float32 {
	x = min(max(x, -4), 4) // min and max keep a NaN
	z := x * x
	p := (((((-2.72614225801306e-10*z+2.77068142495902e-08)*z-2.10102402082508e-06)*z-5.69250639462346e-05)*z-7.34990630326855e-04)*z-2.95459980854025e-03)*z - 1.60960333262415e-02
	q := (((-1.45660718464996e-05*z-2.13374055278905e-04)*z-1.68282697438203e-03)*z-7.37332916720468e-03)*z - 1.42647390514189e-02
	return x * p / q
}

func expGo(d, x []float32) {
	d = d[:len(x)]
	for i, v := range x {
		if v >= expLo && v <= expHi {
			d[i] = expCore(v)
		} else {
			d[i] = expEdge(v)
		}
	}
}

func expShiftSumGo(d, x []float32, shift float32) float64 {
	d = d[:len(x)]
	var sum float64
	for i, v := range x {
		if v -= shift; v >= expLo && v <= expHi {
			v = expCore(v)
		} else {
			v = expEdge(v)
		}
		d[i] = v
		sum += float64(v)
	}
	return sum
}

func erfGo(d, x []float32) {
	d = d[:len(x)]
	for i, v := range x {
		d[i] = Erff(v)
	}
}

func geluGo(d, x []float32) {
	d = d[:len(x)]
	for i, v := range x {
		t := Erff(v*(1/math.Sqrt2)) + 1
		h := 0.5 * v
		d[i] = h * t
	}
}

// geluGradGo is GeluGrad's Go code; the conversions keep products apart from the
// sums that follow them, which some architectures would otherwise fuse.
func geluGradGo(c *GeluGradConsts, dx, x, gy []float32) {
	dx, gy = dx[:len(x)], gy[:len(x)]
	for i, v := range x {
		cdf := float32(Erff(v*c.C1)*c.Scale) + c.Bias
		e := v * v * c.C2
		if e >= expLo && e <= expHi {
			e = expCore(e)
		} else {
			e = expEdge(e)
		}
		pdf := e * c.C3
		dx[i] = gy[i] * (cdf + float32(v*pdf))
	}
}

// Sigmoid sets d[i] = 1/(1+e^-x[i]) for every i < len(x).
func Sigmoid(d, x []float32) {
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

// Silu sets d[i] = x[i]/(1+e^-x[i]) for every i < len(x).
func Silu(d, x []float32) {
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
