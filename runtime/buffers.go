package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"

	"github.com/gml-dev/gml/tensor"
)

// Usage says what a DeviceBuffer is for, which decides the memory pool it is counted on
// (as ggml's buffer usage does).
type Usage uint8

// The usages.
const (
	UsageAny     Usage = iota // scratch, transfers: counted on the scratch pool
	UsageWeights              // long-lived parameters: the weights pool
	UsageCompute              // activations of a computation: the activations pool
)

func (u Usage) String() string {
	switch u {
	case UsageWeights:
		return "weights"
	case UsageCompute:
		return "compute"
	}
	return "any"
}

func (u Usage) pool() Pool {
	switch u {
	case UsageWeights:
		return PoolWeights
	case UsageCompute:
		return PoolActivations
	}
	return PoolScratch
}

var bufferIDs atomic.Uint64

// ErrFreed is wrapped by every error of a call on a buffer or executable after Free.
var ErrFreed = errors.New("used after Free")

// DeviceBuffer is memory on one device that a cell allocates, fills, copies and reads
// directly, and binds to an executable's inputs. Free releases it; an unreachable
// buffer is released when collected. Every call after Free returns an error wrapping
// ErrFreed.
//
// Calls on a buffer are ordered: each waits for the asynchronous transfers in flight on
// that buffer (WriteAsync, ReadAsync, CopyToAsync) first, so results are right whatever
// the order of calls; events exist to let the caller overlap work on other buffers.
type DeviceBuffer struct {
	dev *PhysicalDevice
	st  *bufState
}

// bufState is a buffer's memory and state, shared with its cleanup (which must not
// reach the DeviceBuffer itself).
type bufState struct {
	id      uint64 // allocation order: locks of two buffers are taken in this order
	mu      sync.Mutex
	b       Backend
	buf     Buffer
	size    int64
	usage   Usage
	freed   bool
	pending []*Event // asynchronous work on the buffer not yet seen complete
}

// Alloc allocates a buffer of bytes bytes (zero-filled) on the device, opening it.
func (d *PhysicalDevice) Alloc(bytes int64, usage Usage) (*DeviceBuffer, error) {
	if bytes < 0 {
		return nil, fmt.Errorf("runtime: Alloc of %d bytes on %s", bytes, d.id)
	}
	b, err := d.Open()
	if err != nil {
		return nil, err
	}
	buf, err := b.Alloc(max(bytes, 4), usage.pool())
	if err != nil {
		return nil, fmt.Errorf("runtime: Alloc of %s on %s: %w", FormatBytes(bytes), d.id, err)
	}
	st := &bufState{id: bufferIDs.Add(1), b: b, buf: buf, size: bytes, usage: usage}
	db := &DeviceBuffer{dev: d, st: st}
	goruntime.AddCleanup(db, (*bufState).free, st)
	return db, nil
}

// AllocTensor allocates a buffer sized for a tensor of dtype dt and shape.
func (d *PhysicalDevice) AllocTensor(dt tensor.DType, usage Usage, shape ...int) (*DeviceBuffer, error) {
	if err := dt.CheckShape(shape); err != nil {
		return nil, fmt.Errorf("runtime: AllocTensor: %w", err)
	}
	return d.Alloc(int64(dt.Bytes(tensor.Shape(shape).Size())), usage)
}

// Size is the buffer's size in bytes.
func (db *DeviceBuffer) Size() int64 { return db.st.size }

// Usage is what the buffer was allocated for.
func (db *DeviceBuffer) Usage() Usage { return db.st.usage }

// Device is the device the buffer lives on.
func (db *DeviceBuffer) Device() *PhysicalDevice { return db.dev }

// HostVisible reports whether the host addresses the buffer's memory directly (CPU
// buffers, GPUs whose memory is the host's), so transfers are plain copies.
func (db *DeviceBuffer) HostVisible() bool {
	st := db.st
	st.mu.Lock()
	defer st.mu.Unlock()
	h, ok := st.b.(HostVisibility)
	return ok && !st.freed && h.HostVisible(st.buf)
}

// Freed reports whether Free was called.
func (db *DeviceBuffer) Freed() bool {
	db.st.mu.Lock()
	defer db.st.mu.Unlock()
	return db.st.freed
}

// String describes the buffer: "vulkan:0 buffer 4.0 MiB (weights)".
func (db *DeviceBuffer) String() string {
	s := fmt.Sprintf("%s buffer %s (%s)", db.dev.id, FormatBytes(db.st.size), db.st.usage)
	if db.Freed() {
		s += " (freed)"
	}
	return s
}

// Free releases the buffer's memory, after the asynchronous work on it completes. It is
// safe to call more than once.
func (db *DeviceBuffer) Free() { db.st.free() }

func (st *bufState) free() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.freed {
		return
	}
	st.settle()
	st.freed = true
	st.b.Free(st.buf)
}

// settle waits for the buffer's asynchronous work. st.mu must be held.
func (st *bufState) settle() {
	for _, e := range st.pending {
		e.Synchronize()
	}
	st.pending = nil
}

// use locks the buffer for an operation and settles its asynchronous work, or reports
// a freed buffer. The caller unlocks st.mu.
func (db *DeviceBuffer) use(op string) (*bufState, error) {
	st := db.st
	st.mu.Lock()
	if st.freed {
		st.mu.Unlock()
		return nil, fmt.Errorf("runtime: %s on %v: %w", op, db, ErrFreed)
	}
	st.settle()
	return st, nil
}

func (db *DeviceBuffer) checkRange(op string, offset, n int64) error {
	if offset < 0 || n < 0 || offset+n > db.st.size {
		return fmt.Errorf("runtime: %s of %d bytes at offset %d overruns %v", op, n, offset, db)
	}
	return nil
}

// Write copies src into the buffer at byte offset.
func (db *DeviceBuffer) Write(offset int64, src []byte) error {
	if err := db.checkRange("Write", offset, int64(len(src))); err != nil {
		return err
	}
	st, err := db.use("Write")
	if err != nil {
		return err
	}
	defer st.mu.Unlock()
	return writeAt(st.b, st.buf, st.size, offset, src)
}

// writeAt writes src at offset through RangeIO, or by patching the whole buffer.
func writeAt(b Backend, buf Buffer, size, offset int64, src []byte) error {
	if rio, ok := b.(RangeIO); ok {
		return rio.UploadAt(buf, offset, src)
	}
	if offset == 0 {
		return b.Upload(buf, src)
	}
	whole := make([]byte, size)
	if err := b.Download(buf, whole); err != nil {
		return err
	}
	copy(whole[offset:], src)
	return b.Upload(buf, whole)
}

// readAt reads dst from offset through RangeIO, or by reading from the start.
func readAt(b Backend, buf Buffer, offset int64, dst []byte) error {
	if rio, ok := b.(RangeIO); ok {
		return rio.DownloadAt(buf, offset, dst)
	}
	if offset == 0 {
		return b.Download(buf, dst)
	}
	head := make([]byte, offset+int64(len(dst)))
	if err := b.Download(buf, head); err != nil {
		return err
	}
	copy(dst, head[offset:])
	return nil
}

// Read copies the buffer's bytes from offset into dst.
func (db *DeviceBuffer) Read(offset int64, dst []byte) error {
	if err := db.checkRange("Read", offset, int64(len(dst))); err != nil {
		return err
	}
	st, err := db.use("Read")
	if err != nil {
		return err
	}
	defer st.mu.Unlock()
	return readAt(st.b, st.buf, offset, dst)
}

// Set writes t's data at the start of the buffer.
func (db *DeviceBuffer) Set(t *tensor.Tensor) error { return db.Write(0, t.Bytes()) }

// Tensor reads the start of the buffer as a tensor of dtype dt and shape.
func (db *DeviceBuffer) Tensor(dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	if err := dt.CheckShape(shape); err != nil {
		return nil, fmt.Errorf("runtime: Tensor: %w", err)
	}
	t := tensor.New(dt, shape...)
	if err := db.Read(0, t.Bytes()); err != nil {
		return nil, err
	}
	return t, nil
}

// Clear sets every byte of the buffer to value.
func (db *DeviceBuffer) Clear(value byte) error {
	v := uint32(value)
	return db.fill(v|v<<8|v<<16|v<<24, nil)
}

// Fill sets every element of the buffer, read as dtype dt, to v (a trailing part
// smaller than one element is left alone).
func (db *DeviceBuffer) Fill(dt tensor.DType, v float64) error {
	if dt.IsQuantized() || !dt.Valid() {
		return fmt.Errorf("runtime: Fill with %v: want a plain dtype (f32, f16, bf16, i32, i64, bool)", dt)
	}
	elem := tensor.Scalar(dt, v).Bytes()
	var pattern uint32
	switch len(elem) {
	case 1:
		pattern = uint32(elem[0]) * 0x01010101
	case 2:
		h := uint32(binary.LittleEndian.Uint16(elem))
		pattern = h | h<<16
	case 4:
		pattern = binary.LittleEndian.Uint32(elem)
	default:
		// Eight-byte elements repeat no 4-byte pattern in general: fill on the host.
		return db.fill(0, elem)
	}
	return db.fill(pattern, nil)
}

// fill repeats a 4-byte pattern (or elem, when set) over the buffer: on the device
// when the backend can (Filler), else through the host.
func (db *DeviceBuffer) fill(pattern uint32, elem []byte) error {
	st, err := db.use("Fill")
	if err != nil {
		return err
	}
	defer st.mu.Unlock()
	whole := st.size &^ 3
	if f, ok := st.b.(Filler); ok && elem == nil {
		if err := f.Fill(st.buf, 0, whole, pattern); err != nil {
			return err
		}
		if rest := st.size - whole; rest > 0 {
			tail := make([]byte, 4)
			binary.LittleEndian.PutUint32(tail, pattern)
			return writeAt(st.b, st.buf, st.size, whole, tail[:rest])
		}
		return nil
	}
	if elem == nil {
		elem = binary.LittleEndian.AppendUint32(nil, pattern)
	}
	data := make([]byte, st.size-st.size%int64(len(elem)))
	for i := 0; i < len(data); i += len(elem) {
		copy(data[i:], elem)
	}
	return writeAt(st.b, st.buf, st.size, 0, data)
}

// CopyTo copies the whole buffer into the start of dst, which must be at least as
// large: on the device when both are on one device with a copy engine, else through
// the host (between devices).
func (db *DeviceBuffer) CopyTo(dst *DeviceBuffer) error {
	if dst.st.size < db.st.size {
		return fmt.Errorf("runtime: CopyTo from %v into the smaller %v", db, dst)
	}
	if db.st == dst.st {
		return nil
	}
	src, to, unlock, err := lockPair(db, dst, "CopyTo")
	if err != nil {
		return err
	}
	defer unlock()
	return copyBuffers(to.b, to.buf, to.size, src.b, src.buf, src.size)
}

// copyBuffers copies n bytes of src into dst: on the device when one backend holds both
// and can, else through host memory.
func copyBuffers(db Backend, dst Buffer, dstSize int64, sb Backend, src Buffer, n int64) error {
	if db == sb {
		if c, ok := db.(Copier); ok {
			return c.Copy(dst, 0, src, 0, n)
		}
	}
	staging := make([]byte, n)
	if err := sb.Download(src, staging); err != nil {
		return err
	}
	return writeAt(db, dst, dstSize, 0, staging)
}

// BufferGroup holds buffers that are freed together, as ggml's multi-buffer does: the
// weights of one model, the activations of one computation.
type BufferGroup struct {
	mu   sync.Mutex
	bufs []*DeviceBuffer
}

// NewBufferGroup returns a group holding bufs.
func NewBufferGroup(bufs ...*DeviceBuffer) *BufferGroup {
	return &BufferGroup{bufs: append([]*DeviceBuffer(nil), bufs...)}
}

// Alloc allocates a buffer on d and adds it to the group.
func (g *BufferGroup) Alloc(d *PhysicalDevice, bytes int64, usage Usage) (*DeviceBuffer, error) {
	b, err := d.Alloc(bytes, usage)
	if err != nil {
		return nil, err
	}
	g.Add(b)
	return b, nil
}

// Add puts buffers into the group.
func (g *BufferGroup) Add(bufs ...*DeviceBuffer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bufs = append(g.bufs, bufs...)
}

// Buffers lists the group's buffers.
func (g *BufferGroup) Buffers() []*DeviceBuffer {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*DeviceBuffer(nil), g.bufs...)
}

// Size is the bytes of the group's buffers not yet freed.
func (g *BufferGroup) Size() int64 {
	var n int64
	for _, b := range g.Buffers() {
		if !b.Freed() {
			n += b.Size()
		}
	}
	return n
}

// Free frees every buffer of the group (those freed already are skipped) and empties it.
func (g *BufferGroup) Free() {
	g.mu.Lock()
	bufs := g.bufs
	g.bufs = nil
	g.mu.Unlock()
	for _, b := range bufs {
		b.Free()
	}
}

// String describes the group: "buffer group: 3 buffers, 12.0 MiB".
func (g *BufferGroup) String() string {
	return fmt.Sprintf("buffer group: %d buffers, %s", len(g.Buffers()), FormatBytes(g.Size()))
}
