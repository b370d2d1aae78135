//go:build amd64 || arm64

package parallel

// pause executes the processor's spin-wait hint (PAUSE, YIELD) n times: a polling loop
// then leaves the core's execution units to its hyperthread sibling and does not flood
// the memory system with loads of a line another core is about to write.
func pause(n int)
