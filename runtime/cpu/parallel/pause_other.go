//go:build !amd64 && !arm64

package parallel

// pause has no spin-wait hint to execute on this architecture; the polls between
// clock reads stay cheap without it.
func pause(n int) {}
