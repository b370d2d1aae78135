package ag

import (
	"fmt"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// DeviceBuffer is F32 storage that lives on a tape's device: capacity slots of rows
// values each (a replay buffer of transitions, a memory bank), written and gathered by
// device-side ops so that sampling a batch costs no host traffic. Slots are columns in
// ggml's terms; on the device the buffer is a (capacity, rows) variable, one slot per
// row, so GetRows is one gather.
type DeviceBuffer struct {
	tape           *Tape
	v              *Tensor // the (capacity, rows) buffer variable
	rows, capacity int
	freed          bool
}

// maxBufferShare is the part of a device's free memory one buffer may take.
const maxBufferShare = 0.85

// Buffer allocates a zeroed device buffer of capacity slots of rows values on the
// current tape's device. It fails, with the sizes involved, when it would take more
// than 85% of the device's free memory.
func Buffer(rows, capacity int) (*DeviceBuffer, error) {
	if rows <= 0 || capacity <= 0 {
		return nil, fmt.Errorf("ag: Buffer(%d, %d): rows and capacity must be positive", rows, capacity)
	}
	tp := CurrentTape()
	bytes := int64(rows) * int64(capacity) * 4
	info := tp.rt.DeviceInfo()
	free := info.MemoryBytes - tp.rt.Memory().Total()
	if info.MemoryBytes > 0 && float64(bytes) > maxBufferShare*float64(free) {
		return nil, fmt.Errorf("ag: Buffer(%d, %d) needs %s, more than 85%% of the %s free on %s (%s in all, %s used by this runtime)",
			rows, capacity, runtime.FormatBytes(bytes), runtime.FormatBytes(free), info.Name,
			runtime.FormatBytes(info.MemoryBytes), runtime.FormatBytes(tp.rt.Memory().Total()))
	}
	b := &DeviceBuffer{tape: tp, rows: rows, capacity: capacity}
	b.v = newVariable(tp, tensor.New(tensor.F32, capacity, rows), true).SetName(fmt.Sprintf("buffer_%dx%d", capacity, rows))
	// Allocate now, so a device that cannot hold it says so here.
	if err := tp.rt.Write(b.v.p.v, b.v.p.v.Init()); err != nil {
		return nil, fmt.Errorf("ag: Buffer(%d, %d): %w", rows, capacity, err)
	}
	return b, nil
}

// Rows is the number of values per slot.
func (b *DeviceBuffer) Rows() int { return b.rows }

// Capacity is the number of slots.
func (b *DeviceBuffer) Capacity() int { return b.capacity }

func (b *DeviceBuffer) check(op string) {
	if b.freed {
		fail(op, "the buffer was freed")
	}
}

// Write stores data, n slots shaped (n, rows), at slots offset..offset+n-1, on the
// device (data may be host data or a computed tensor).
func (b *DeviceBuffer) Write(offset int, data *Tensor) {
	const op = "buffer_write"
	b.check(op)
	if data == nil || data.Rank() != 2 || data.shape[1] != b.rows || data.dtype != tensor.F32 {
		fail(op, "data must be f32[n %d], have %s", b.rows, describeOrNil(data))
	}
	n := data.shape[0]
	if offset < 0 || offset+n > b.capacity {
		fail(op, "slots %d..%d do not fit in a buffer of %d", offset, offset+n-1, b.capacity)
	}
	idx := tensor.New(tensor.I64, n, b.rows)
	for i, d := 0, idx.Int64s(); i < n; i++ {
		for j := 0; j < b.rows; j++ {
			d[i*b.rows+j] = int64(offset + i)
		}
	}
	var updated *Tensor
	NoGrad(func() {
		updated = record(op, func(in []*tensor.Node) *tensor.Node {
			return tensor.Scatter(in[0], in[1], in[2], 0, tensor.ScatterReduceNone)
		}, b.v, Const(idx), data)
	})
	b.v.Assign(updated)
}

// GetRows gathers the slots named by idx (integers, any shape) into a tensor of shape
// idx.shape + (rows), on the device.
func (b *DeviceBuffer) GetRows(idx *Tensor) *Tensor {
	b.check("buffer_get_rows")
	return Gather(b.v, idx, 0)
}

// Read copies slots start..end-1 to the host as (end-start, rows).
func (b *DeviceBuffer) Read(start, end int) *tensor.Tensor {
	b.check("buffer_read")
	if start < 0 || end > b.capacity || start >= end {
		fail("buffer_read", "slots %d..%d outside a buffer of %d", start, end-1, b.capacity)
	}
	return Slice(b.v, 0, start, end).Value()
}

// Free releases the buffer's device memory; using it afterwards is an error.
func (b *DeviceBuffer) Free() {
	if b.freed {
		return
	}
	tp := b.tape
	tp.mu.Lock()
	if tp.open != nil && tp.open.pendingWrite(b.v.p.v) {
		if err := tp.flush(); err != nil {
			tp.mu.Unlock()
			failErr("buffer_free", err)
		}
	}
	delete(tp.params, b.v.p.v)
	tp.mu.Unlock()
	tp.rt.Release(b.v.p.v)
	b.freed = true
}
