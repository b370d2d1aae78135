package gpu

import (
	"fmt"
	"sync/atomic"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// Backend is the Vulkan implementation of runtime.Backend: its buffers live in device
// memory and each prepared segment is one recorded command buffer, resubmitted on
// every run.
type Backend struct {
	d    *Device
	used [runtime.NumPools]atomic.Int64
}

// NewBackend opens the device GML_VK_DEVICE names, or the best one. The error wraps
// ErrNoVulkan when Vulkan is unusable here.
func NewBackend() (*Backend, error) {
	d, err := Open()
	if err != nil {
		return nil, err
	}
	return &Backend{d: d}, nil
}

// Device returns the backend's device (for diagnostics and benchmarks).
func (b *Backend) Device() *Device { return b.d }

// Name returns "vulkan".
func (b *Backend) Name() string { return "vulkan" }

// Info describes the device in the runtime's terms (runtimeInfo), with the path its
// matrix products take.
func (b *Backend) Info() runtime.DeviceInfo {
	in := runtimeInfo(b.d.Info)
	in.Notes = append(in.Notes, "matrix products: "+b.d.ProductPath().String())
	return in
}

// buffer is a device buffer counted on a pool.
type buffer struct {
	b    *Buffer
	pool runtime.Pool
}

func (x *buffer) Size() int64 { return int64(x.b.size) }

func devBuffer(b runtime.Buffer) (*Buffer, error) {
	x, ok := b.(*buffer)
	if !ok || x.b == nil {
		return nil, fmt.Errorf("gpu: buffer of type %T was not allocated by the Vulkan backend", b)
	}
	return x.b, nil
}

// Alloc returns a zero-filled device buffer counted on pool.
func (b *Backend) Alloc(bytes int64, pool runtime.Pool) (runtime.Buffer, error) {
	if bytes < 0 {
		return nil, fmt.Errorf("gpu: Alloc of a negative size (%d bytes)", bytes)
	}
	buf, err := b.d.Alloc(uint64(bytes))
	if err != nil {
		return nil, err
	}
	if err := b.d.Zero(buf); err != nil {
		buf.Free()
		return nil, err
	}
	b.used[pool%runtime.NumPools].Add(bytes)
	return &buffer{b: buf, pool: pool}, nil
}

// Used reports the bytes allocated on pool.
func (b *Backend) Used(pool runtime.Pool) int64 { return b.used[pool%runtime.NumPools].Load() }

// Free releases a buffer from Alloc.
func (b *Backend) Free(rb runtime.Buffer) {
	x, ok := rb.(*buffer)
	if !ok || x.b == nil {
		return
	}
	b.used[x.pool%runtime.NumPools].Add(-int64(x.b.size))
	x.b.Free()
	x.b = nil
}

// Upload copies src into the start of the buffer.
func (b *Backend) Upload(rb runtime.Buffer, src []byte) error {
	buf, err := devBuffer(rb)
	if err != nil {
		return err
	}
	return b.d.Upload(Copy{Buf: buf, Data: src})
}

// Download copies the first len(dst) bytes of the buffer into dst.
func (b *Backend) Download(rb runtime.Buffer, dst []byte) error {
	buf, err := devBuffer(rb)
	if err != nil {
		return err
	}
	return b.d.Download(Copy{Buf: buf, Data: dst})
}

// Close frees every device object.
func (b *Backend) Close() error { return b.d.Close() }

// Supports reports whether a shader implements node n: F32 data, except for typed ops,
// which check their dtypes themselves.
func (b *Backend) Supports(n *tensor.Node) bool { return b.WhyUnsupported(n) == "" }

// WhyUnsupported says why no shader runs node n, or returns "" when one does
// (runtime.SupportExplainer).
func (b *Backend) WhyUnsupported(n *tensor.Node) string {
	switch n.Op() {
	case tensor.OpInput, tensor.OpConst, tensor.OpVariable:
		return ""
	}
	op, ok := ops[n.Op()]
	if !ok {
		return fmt.Sprintf("the Vulkan backend has no shader for %s", n.Op())
	}
	if !op.typed {
		if n.DType() != tensor.F32 {
			return fmt.Sprintf("the %s shader computes f32, not %s", n.Op(), n.DType())
		}
		for i, in := range n.Inputs() {
			if in.DType() != tensor.F32 && !op.anyTypeInput(i) {
				return fmt.Sprintf("the %s shader takes f32 inputs; input %d is %s", n.Op(), i, in.DType())
			}
		}
	}
	if op.supports != nil && !op.supports(b.d, n) {
		if n.Shape().Size() >= 1<<31 {
			return fmt.Sprintf("shaders index with 32 bits; %v has 2^31 elements or more", n)
		}
		return fmt.Sprintf("the %s shader does not take %v (its dtypes, shapes or attributes) on %s", n.Op(), n, b.d.Info.Name)
	}
	return ""
}
