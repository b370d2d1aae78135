//go:build !unix

package gguf

import (
	"io"
	"os"
)

// mapFile reads the file into memory where mmap is not available.
func mapFile(f *os.File, size int) ([]byte, func() error, error) {
	b := make([]byte, size)
	_, err := io.ReadFull(f, b)
	return b, nil, err
}
