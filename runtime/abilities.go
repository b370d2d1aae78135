package runtime

import (
	"time"

	"github.com/gml-dev/gml/tensor"
)

// Optional abilities of a backend. Backend is what every device must provide; these
// are what some can do better, each a small interface the runtime finds by type
// assertion. Where a backend lacks one, the runtime does the same thing another way
// (through the host, synchronously), so every call of the low-level API works on
// every device, and an ability changes speed, never results.

// MemoryReporter is a backend that knows its device's free and total memory.
type MemoryReporter interface {
	// MemoryInfo returns the bytes free for new allocations (what the driver's budget
	// leaves, or the heap less what this process reserved) and the device-local total.
	MemoryInfo() (free, total int64)
}

// SupportExplainer is a backend that says why it does not run a node.
type SupportExplainer interface {
	// WhyUnsupported returns why Supports(n) is false ("no shader for top_k", "the
	// shader takes f32 data; input 1 is f16"), or "" when it is true.
	WhyUnsupported(n *tensor.Node) string
}

// RangeIO is a backend that transfers at an offset into a buffer. Without it, a write
// at an offset reads the buffer back, patches it and uploads it whole.
type RangeIO interface {
	UploadAt(b Buffer, offset int64, src []byte) error
	DownloadAt(b Buffer, offset int64, dst []byte) error
}

// Filler is a backend that fills a buffer's bytes on the device: offset and size are
// multiples of 4 and pattern is repeated (as vkCmdFillBuffer does).
type Filler interface {
	Fill(b Buffer, offset, size int64, pattern uint32) error
}

// Copier is a backend that copies between two of its buffers on the device.
type Copier interface {
	Copy(dst Buffer, dstOffset int64, src Buffer, srcOffset, size int64) error
}

// HostVisibility is a backend whose buffers the host may address directly (host memory,
// unified memory); HostVisible reports it per buffer.
type HostVisibility interface {
	HostVisible(b Buffer) bool
}

// Completion is a backend's handle on work it runs asynchronously.
type Completion interface {
	// Wait blocks until the work has completed and returns its error. It may be called
	// any number of times.
	Wait() error
	// Done reports, without blocking, whether the work has completed.
	Done() bool
}

// TimedCompletion is a completion that knows when the device ran its work, on the
// host's clock (device timestamps calibrated against it). ok is false until the work
// completed, or when the device could not time it.
type TimedCompletion interface {
	Completion
	Span() (start, end time.Time, ok bool)
}

// AsyncTransfer is a backend that moves data without blocking the caller. UploadAsync
// has copied src by the time it returns (the caller may reuse it); DownloadAsync fills
// dst when the work completes (after Wait, or once Done reports true). Work submitted
// this way is not ordered against other work on the device: order it with events.
type AsyncTransfer interface {
	UploadAsync(b Buffer, offset int64, src []byte) (Completion, error)
	DownloadAsync(b Buffer, offset int64, dst []byte) (Completion, error)
	CopyAsync(dst Buffer, dstOffset int64, src Buffer, srcOffset, size int64) (Completion, error)
}

// EventRecorder is a backend with work in flight: Record returns a completion that
// completes when everything submitted to the device so far has.
type EventRecorder interface {
	Record() (Completion, error)
}

// AsyncProgram is a prepared segment that can start without waiting: the returned
// completion completes when the segment's results are visible to Download. A program
// may not be started again (nor Run) until its last start completed.
type AsyncProgram interface {
	Program
	Start() (Completion, error)
}
