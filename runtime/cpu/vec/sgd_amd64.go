//go:build amd64

package vec

//go:noescape
func sgdAVX2(c *SGDConsts, nesterov bool, p, g, vel []float32) int

// sgdAsmBuilt says that sgdAsm runs assembly on this architecture.
const sgdAsmBuilt = true

// sgdAsm runs the SGD assembly for an assembly level (AVX2 at both: the update is bound
// by memory) and returns how many elements it did.
func sgdAsm(_ Level, c *SGDConsts, nesterov bool, p, g, vel []float32) int {
	return sgdAVX2(c, nesterov, p, g, vel)
}
