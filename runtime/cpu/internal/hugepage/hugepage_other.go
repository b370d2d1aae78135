//go:build !linux

package hugepage

// advise does nothing: huge pages are advised only on Linux.
func advise([]byte) {}
