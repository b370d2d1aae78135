//go:build !amd64

package vec

// sgdAsmBuilt says that sgdAsm runs no assembly here, so SGDStep always runs the Go
// code, whatever level a future port of the other loops may set.
const sgdAsmBuilt = false

// sgdAsm does nothing: there is no assembly for this architecture.
func sgdAsm(Level, *SGDConsts, bool, []float32, []float32, []float32) int { return 0 }
