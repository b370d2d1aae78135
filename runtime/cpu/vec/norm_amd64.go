//go:build amd64

package vec

//go:noescape
func sqDevAVX2(x []float32, mean float64) (int, float64)

// sqDevAVX512 is sqDevAVX2 with the sixteen float64 running sums in two vectors: the
// same lanes, so the same result.
//
//go:noescape
func sqDevAVX512(x []float32, mean float64) (int, float64)

// normalizeAVX2 does Normalize's whole groups of four; gamma and beta are empty when
// absent.
//
//go:noescape
func normalizeAVX2(y, x, gamma, beta []float32, mean, inv float64) int

// normalizeAVX512 does Normalize's whole groups of eight, as normalizeAVX2.
//
//go:noescape
func normalizeAVX512(y, x, gamma, beta []float32, mean, inv float64) int

// The whole rows of NormCentre, NormGradMid and NormGradOut, n a multiple of 8; dgp,
// gamma, m2, add and sums are nil when absent, n a multiple of 16 with sums.

//go:noescape
func normCentreAVX2(xc, sq, x, mean []float32, n int, sums []float64)

//go:noescape
func normGradMidAVX2(xhat, p, dgp, g, xc, gy, gamma, rstd []float32, n int, sums []float64)

//go:noescape
func normGradOutAVX2(dx, g, xhat, m1, m2, rstd, add []float32, n int)
