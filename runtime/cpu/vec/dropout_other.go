//go:build !amd64

package vec

// dropoutAsm does nothing: there is no assembly for this architecture.
func dropoutAsm(Level, []float32, []float32, uint32, uint32, uint32, float32) int { return 0 }
