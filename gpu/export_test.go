package gpu

// RoundEveryProduct makes f32 products that allow half precision round their operands
// whatever their size, until restore is called (for the external tests).
func RoundEveryProduct() (restore func()) {
	old := minRoundedWork
	minRoundedWork = 0
	return func() { minRoundedWork = old }
}
