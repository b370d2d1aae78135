package data

import (
	"io"

	"github.com/gml-dev/gml/runtime"
)

// interruptible returns r with reads that fail with runtime.ErrInterrupted once the
// running cell is interrupted, so that decoding a large file stops within one read
// (a poll per read of a few KiB costs nothing measurable).
func interruptible(r io.Reader) io.Reader { return interruptReader{r} }

type interruptReader struct{ r io.Reader }

func (ir interruptReader) Read(p []byte) (int, error) {
	if err := runtime.Interrupted(); err != nil {
		return 0, err
	}
	return ir.r.Read(p)
}
