//go:build amd64

package vec

//go:noescape
func sgdAVX2(c *SGDConsts, nesterov bool, p, g, vel []float32) int

// sgdAsm runs the SGD assembly at level l (AVX2 at both assembly levels: the update is
// bound by memory) and returns how many elements it did.
func sgdAsm(l Level, c *SGDConsts, nesterov bool, p, g, vel []float32) int {
	if l == Go {
		return 0
	}
	return sgdAVX2(c, nesterov, p, g, vel)
}
