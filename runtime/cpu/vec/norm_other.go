//go:build !amd64

package vec

// The level is Go on other architectures, so these are never called. Those that report
// how much they did do nothing; the others, which would leave their rows unwritten,
// panic with the reason, as the attention rows do.

const errNoNormRows = "vec: the norm row passes are AVX2 assembly, absent on this architecture (call them only where the level is AVX2 or wider)"

func sqDevAVX2(x []float32, mean float64) (int, float64) { return 0, 0 }

func sqDevAVX512(x []float32, mean float64) (int, float64) { return 0, 0 }

func normalizeAVX2(y, x, gamma, beta []float32, mean, inv float64) int { return 0 }

func normalizeAVX512(y, x, gamma, beta []float32, mean, inv float64) int { return 0 }

func normCentreAVX2(xc, sq, x, mean []float32, n int, sums []float64) { panic(errNoNormRows) }

func normGradMidAVX2(xhat, p, dgp, g, xc, gy, gamma, rstd []float32, n int, sums []float64) {
	panic(errNoNormRows)
}

func normGradOutAVX2(dx, g, xhat, m1, m2, rstd, add []float32, n int) { panic(errNoNormRows) }
