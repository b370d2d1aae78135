//go:build !amd64

package vec

// asmImpl reports that there is no assembly for this architecture.
func asmImpl(Level) (impl, bool) { return impl{}, false }

// asm does nothing: without assembly the level is Go, where call.run runs the Go code.
func (c *call) asm(*[4][]float32) int { return 0 }
