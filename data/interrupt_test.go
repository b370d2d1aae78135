package data

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// endless is an endless CSV (or an IDX header followed by data) served 4 KiB a read;
// it interrupts the cell at its tenth read, as a user would in the middle.
type endless struct {
	head      string
	reads     int
	interrupt func()
}

func (e *endless) Read(p []byte) (int, error) {
	if e.reads++; e.reads == 10 {
		e.interrupt()
	}
	p = p[:min(len(p), 4096)]
	n := copy(p, e.head)
	e.head = e.head[n:]
	for k := n; k < len(p); k++ {
		p[k] = "1,2\n"[k%4]
	}
	return len(p), nil
}

func TestDecodingStopsOnInterrupt(t *testing.T) {
	tests := []struct {
		name   string
		decode func(r io.Reader) error
		head   string
	}{
		{"csv", func(r io.Reader) error { _, err := DecodeCSV(r); return err }, "a,b\n"},
		{"idx", func(r io.Reader) error { _, err := DecodeIDX(r, tensor.F32); return err }, "\x00\x00\x08\x01\x01\x00\x00\x00"}, // 16 MiB of uint8
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			defer runtime.BindInterrupt(ctx)()
			r := &endless{head: tc.head, interrupt: cancel}
			if err := tc.decode(r); !errors.Is(err, runtime.ErrInterrupted) {
				t.Errorf("got %v, want %v", err, runtime.ErrInterrupted)
			}
			if r.reads > 10 {
				t.Errorf("%d reads, want none after the interrupt at the 10th", r.reads)
			}
		})
	}
	// Without an interrupt, decoding reads as before.
	if _, err := DecodeCSV(strings.NewReader("a,b\n1,2\n")); err != nil {
		t.Fatal(err)
	}
}
