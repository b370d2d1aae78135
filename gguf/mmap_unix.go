//go:build unix

package gguf

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only. The mapping outlives f's descriptor.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	if size == 0 {
		return []byte{}, nil, nil // mmap rejects empty files; parse reports the bad magic
	}
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return unix.Munmap(b) }, nil
}
