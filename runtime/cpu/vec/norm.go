package vec

// Row statistics and the normalisation of layer and RMS norms, in float64 lanes.

// SqDev returns Σ(x[i]-mean)² accumulated in float64 in the order of Sum: sixteen
// running sums over whole groups of sixteen, merged in a fixed order, then the tail in
// order. Every level gives the same result.
func SqDev(x []float32, mean float64) float64 {
	var n int
	var s float64
	if active.level >= AVX2 {
		n, s = sqDevAVX2(x, mean)
	} else {
		n, s = sqDevGo(x, mean)
	}
	for _, v := range x[n:] {
		d := float64(v) - mean
		s += float64(d * d) // rounded product: no architecture fuses it into an FMA
	}
	return s
}

// sqDevGo is the Go code of SqDev's whole groups.
func sqDevGo(x []float32, mean float64) (int, float64) {
	var p [16]float64
	n := len(x) &^ 15
	for i := 0; i < n; i += 16 {
		g := x[i : i+16]
		for k := range p {
			d := float64(g[k]) - mean
			p[k] += float64(d * d)
		}
	}
	var a [4]float64
	for l := range a {
		a[l] = (p[l] + p[4+l]) + (p[8+l] + p[12+l])
	}
	return n, (a[0] + a[2]) + (a[1] + a[3])
}

// Normalize sets y[j] = float32((x[j]-mean)·inv·gamma[j] + beta[j]) for j < len(x),
// each operation in float64 and rounded once at the end; gamma or beta may be nil (no
// scale, no shift), else as long as x, and y at least as long. Every level gives the
// same result.
func Normalize(y, x, gamma, beta []float32, mean, inv float64) {
	y = y[:len(x)]
	if gamma != nil {
		gamma = gamma[:len(x)]
	}
	if beta != nil {
		beta = beta[:len(x)]
	}
	j := 0
	if active.level >= AVX2 {
		j = normalizeAVX2(y, x, gamma, beta, mean, inv)
	}
	for ; j < len(x); j++ {
		o := (float64(x[j]) - mean) * inv
		if gamma != nil {
			o = float64(o * float64(gamma[j])) // rounded: the assembly does not fuse it either
		}
		if beta != nil {
			o += float64(beta[j])
		}
		y[j] = float32(o)
	}
}
