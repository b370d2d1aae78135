//go:build amd64

package vec

//go:noescape
func sqDevAVX2(x []float32, mean float64) (int, float64)

// normalizeAVX2 does Normalize's whole groups of four; gamma and beta are empty when
// absent.
//
//go:noescape
func normalizeAVX2(y, x, gamma, beta []float32, mean, inv float64) int
