package vec

// Row statistics and the normalisation of layer and RMS norms, in float64 lanes.

// SqDev returns Σ(x[i]-mean)² accumulated in float64 lanes: sixteen
// running sums over whole groups of sixteen, merged in a fixed order, then the tail in
// order. Every level gives the same result.
func SqDev(x []float32, mean float64) float64 {
	var n int
	var s float64
	switch {
	case active.level >= AVX512:
		n, s = sqDevAVX512(x, mean)
	case active.level >= AVX2:
		n, s = sqDevAVX2(x, mean)
	default:
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
	switch {
	case active.level >= AVX512:
		j = normalizeAVX512(y, x, gamma, beta, mean, inv)
	case active.level >= AVX2:
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

// The passes of a norm's backward over a block of rows of n elements, with one value
// per row (len(mean), len(rstd) rows), each operation a float32 one rounded as Go
// rounds it, so every level gives the same bits (and those of the separate nodes).

// NormCentre sets xc = x - mean[r] and sq = xc·xc in each row r and, where sums is not
// nil, sums[r] to the row's sum of sq: SumEach's bits, added as the pass writes sq
// where the assembly can (rows of whole groups of sixteen), so the row is not read
// again.
func NormCentre(xc, sq, x, mean []float32, n int, sums []float64) {
	cnt := len(mean) * n
	xc, sq, x = xc[:cnt], sq[:cnt], x[:cnt]
	if sums != nil {
		sums = sums[:len(mean)]
	}
	if active.level >= AVX2 && n%8 == 0 && n > 0 {
		if sums != nil && n%16 == 0 {
			normCentreAVX2(xc, sq, x, mean, n, sums)
			return
		}
		normCentreAVX2(xc, sq, x, mean, n, nil)
	} else {
		for r, m := range mean {
			for j := r * n; j < (r+1)*n; j++ {
				c := x[j] - m
				xc[j], sq[j] = c, c*c
			}
		}
	}
	if sums != nil {
		SumEach(sums, sq, n)
	}
}

// NormGradMid sets, in each row r, g = gy·gamma where gamma (a row of n) is not nil,
// xhat = xc·rstd[r], p = g·xhat and, where dgp is not nil, dgp = gy·xhat. Without
// gamma g is only read: the gradient itself (gy, or a value like it). Where sums is not
// nil, sums[r] and sums[rows+r] are set to the row sums of p and of g (rows =
// len(rstd)), as NormCentre's.
func NormGradMid(xhat, p, dgp, g, xc, gy, gamma, rstd []float32, n int, sums []float64) {
	rows := len(rstd)
	cnt := rows * n
	xhat, p, xc, g = xhat[:cnt], p[:cnt], xc[:cnt], g[:cnt]
	if dgp != nil || gamma != nil {
		gy = gy[:cnt]
	}
	if dgp != nil {
		dgp = dgp[:cnt]
	}
	if gamma != nil {
		gamma = gamma[:n]
	}
	if sums != nil {
		sums = sums[:2*rows]
	}
	if active.level >= AVX2 && n%8 == 0 && n > 0 {
		if sums != nil && n%16 == 0 {
			normGradMidAVX2(xhat, p, dgp, g, xc, gy, gamma, rstd, n, sums)
			return
		}
		normGradMidAVX2(xhat, p, dgp, g, xc, gy, gamma, rstd, n, nil)
	} else {
		for r, s := range rstd {
			for j := r * n; j < (r+1)*n; j++ {
				if gamma != nil {
					g[j] = gy[j] * gamma[j-r*n]
				}
				h := xc[j] * s
				xhat[j], p[j] = h, g[j]*h
				if dgp != nil {
					dgp[j] = gy[j] * h
				}
			}
		}
	}
	if sums != nil {
		SumEach(sums[:rows], p, n)
		SumEach(sums[rows:], g, n)
	}
}

// NormGradOut sets dx = rstd[r]·(g - (xhat·m1[r] + m2[r])) + add in each row r, without
// the m2 term where m2 is nil (a norm that does not centre) and without add (the
// gradient a residual connection adds) where add is nil.
func NormGradOut(dx, g, xhat, m1, m2, rstd, add []float32, n int) {
	cnt := len(rstd) * n
	dx, g, xhat, m1 = dx[:cnt], g[:cnt], xhat[:cnt], m1[:len(rstd)]
	if m2 != nil {
		m2 = m2[:len(rstd)]
	}
	if add != nil {
		add = add[:cnt]
	}
	if active.level >= AVX2 && n%8 == 0 && n > 0 {
		normGradOutAVX2(dx, g, xhat, m1, m2, rstd, add, n)
		return
	}
	for r, s := range rstd {
		for j := r * n; j < (r+1)*n; j++ {
			t := float32(xhat[j] * m1[r]) // rounded: no fused multiply-add
			if m2 != nil {
				t += m2[r]
			}
			d := s * (g[j] - t)
			if add != nil {
				d = float32(d) + add[j]
			}
			dx[j] = d
		}
	}
}
