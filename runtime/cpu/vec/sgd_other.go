//go:build !amd64

package vec

// sgdAsm does nothing: there is no assembly for this architecture.
func sgdAsm(Level, *SGDConsts, bool, []float32, []float32, []float32) int { return 0 }
