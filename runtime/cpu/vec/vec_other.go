//go:build !amd64

package vec

// asmImpl reports that there is no assembly for this architecture.
func asmImpl(Level) (impl, bool) { return impl{}, false }
