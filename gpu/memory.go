package gpu

import (
	"fmt"
	"sort"
	"unsafe"

	vk "github.com/goki/vulkan"

	"github.com/gml-dev/gml/internal/sysmem"
)

// Buffer is a range of device memory holding a tensor's bytes. It is a suballocation of
// a large block (or a block of its own when large). Free returns it.
type Buffer struct {
	d     *Device
	blk   *block
	off   uint64
	size  uint64
	freed bool
}

// Size is the buffer's length in bytes.
func (b *Buffer) Size() uint64 { return b.size }

// block is one VkDeviceMemory with one VkBuffer over all of it.
type block struct {
	id     int
	mem    vk.DeviceMemory
	buf    vk.Buffer
	size   uint64
	mapped unsafe.Pointer // non-nil when the memory is host-visible
	free   []span         // sorted, coalesced free ranges
	own    bool           // a dedicated block for one large buffer
	used   uint64
	// exported blocks can be imported by an outside product engine (interop.go), which
	// maps all memSize bytes of the allocation.
	exported bool
	memSize  uint64
}

type span struct{ off, size uint64 }

const (
	defaultBlockSize = 256 << 20
	bufferAlign      = 256
)

// allocator suballocates device-local memory. Blocks are kept when empty until Trim.
type allocator struct {
	d         *Device
	blockSize uint64
	typeIndex uint32
	heapSize  uint64
	mappable  bool // device-local memory is host-visible and fast (unified memory)
	blocks    []*block
	nextID    int
	inUse     uint64
	reserved  uint64
}

func newAllocator(d *Device) *allocator {
	a := &allocator{d: d, blockSize: defaultBlockSize}
	if r := d.Info.MaxStorageBufferRange; r > 0 && r < a.blockSize {
		a.blockSize = r &^ (bufferAlign - 1)
	}
	if m := d.Info.MaxAllocation; m > 0 && m < a.blockSize {
		a.blockSize = m &^ (bufferAlign - 1)
	}
	var mp vk.PhysicalDeviceMemoryProperties
	vk.GetPhysicalDeviceMemoryProperties(d.pd, &mp)
	mp.Deref()
	const local = vk.MemoryPropertyFlags(vk.MemoryPropertyDeviceLocalBit)
	const hostVis = vk.MemoryPropertyFlags(vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit)
	best := -1
	for i := uint32(0); i < mp.MemoryTypeCount; i++ {
		mp.MemoryTypes[i].Deref()
		f := mp.MemoryTypes[i].PropertyFlags
		if f&local == 0 {
			continue
		}
		mp.MemoryHeaps[mp.MemoryTypes[i].HeapIndex].Deref()
		heap := uint64(mp.MemoryHeaps[mp.MemoryTypes[i].HeapIndex].Size)
		// Host-visible device-local memory is used directly only on devices whose memory
		// is the host's (integrated GPUs, CPU devices): there mapping costs nothing. On a
		// discrete card it is a PCIe window, slow to read, so staging is used instead.
		unified := d.Info.Type == "integrated" || d.Info.Type == "cpu"
		vis := f&hostVis == hostVis && unified
		if best < 0 || (vis && !a.mappable) {
			best, a.mappable, a.heapSize = int(i), vis, heap
		}
	}
	a.typeIndex = uint32(max(best, 0))
	return a
}

// OutOfMemoryError reports an allocation the device could not satisfy.
type OutOfMemoryError struct {
	Asked, InUse, Heap uint64
}

func (e *OutOfMemoryError) Error() string {
	free := uint64(0)
	if e.Heap > e.InUse {
		free = e.Heap - e.InUse
	}
	return fmt.Sprintf("gpu: out of device memory: asked for %s, %s in use by gml, about %s free of %s", sysmem.FormatBytes(e.Asked), sysmem.FormatBytes(e.InUse), sysmem.FormatBytes(free), sysmem.FormatBytes(e.Heap))
}

func (a *allocator) newBlock(size uint64, own bool) (*block, error) {
	d := a.d
	// A size beyond the heap fails here, with the memory named, rather than in the
	// driver (some drivers try, and the process runs out of host memory).
	if a.heapSize > 0 && size > a.heapSize-min(a.reserved, a.heapSize) {
		return nil, &OutOfMemoryError{Asked: size, InUse: a.reserved, Heap: a.heapSize}
	}
	if size > d.Info.MaxStorageBufferRange && d.Info.MaxStorageBufferRange > 0 {
		return nil, fmt.Errorf("gpu: a buffer of %s exceeds the device's largest storage binding (%s); split the tensor", sysmem.FormatBytes(size), sysmem.FormatBytes(d.Info.MaxStorageBufferRange))
	}
	if d.Info.MaxAllocation > 0 && size > d.Info.MaxAllocation {
		return nil, fmt.Errorf("gpu: a buffer of %s exceeds the device's largest allocation (%s); split the tensor", sysmem.FormatBytes(size), sysmem.FormatBytes(d.Info.MaxAllocation))
	}
	var buf vk.Buffer
	// With an outside product engine, blocks are allocated exportable so that it can
	// import them (interop_vk.go); otherwise the chains are nil.
	bufNext := d.bufferExportChain()
	defer freeChain(bufNext)
	if err := check(vk.CreateBuffer(d.dev, &vk.BufferCreateInfo{SType: vk.StructureTypeBufferCreateInfo, PNext: bufNext, Size: vk.DeviceSize(size), Usage: vk.BufferUsageFlags(deviceUsage), SharingMode: vk.SharingModeExclusive}, nil, &buf), "vkCreateBuffer"); err != nil {
		return nil, err
	}
	var req vk.MemoryRequirements
	vk.GetBufferMemoryRequirements(d.dev, buf, &req)
	req.Deref()
	var mem vk.DeviceMemory
	memNext := d.memoryExportChain(buf)
	defer freeChain(memNext)
	res := vk.AllocateMemory(d.dev, &vk.MemoryAllocateInfo{SType: vk.StructureTypeMemoryAllocateInfo, PNext: memNext, AllocationSize: req.Size, MemoryTypeIndex: a.typeIndex}, nil, &mem)
	if res != vk.Success {
		vk.DestroyBuffer(d.dev, buf, nil)
		if res == vk.ErrorOutOfDeviceMemory || res == vk.ErrorOutOfHostMemory {
			return nil, &OutOfMemoryError{Asked: size, InUse: a.reserved, Heap: a.heapSize}
		}
		return nil, check(res, "vkAllocateMemory")
	}
	if err := check(vk.BindBufferMemory(d.dev, buf, mem, 0), "vkBindBufferMemory"); err != nil {
		vk.DestroyBuffer(d.dev, buf, nil)
		vk.FreeMemory(d.dev, mem, nil)
		return nil, err
	}
	b := &block{id: a.nextID, mem: mem, buf: buf, size: size, own: own, free: []span{{0, size}}, exported: memNext != nil, memSize: uint64(req.Size)}
	a.nextID++
	if a.mappable {
		var p unsafe.Pointer
		if err := check(vk.MapMemory(d.dev, mem, 0, vk.DeviceSize(vk.WholeSize), 0, &p), "vkMapMemory"); err != nil {
			vk.DestroyBuffer(d.dev, buf, nil)
			vk.FreeMemory(d.dev, mem, nil)
			return nil, err
		}
		b.mapped = p
	}
	a.blocks = append(a.blocks, b)
	a.reserved += size
	return b, nil
}

func (a *allocator) destroyBlock(b *block) {
	a.d.forgetBlock(b)
	a.d.pipes.forgetBuffer(b.buf)
	if b.mapped != nil {
		vk.UnmapMemory(a.d.dev, b.mem)
	}
	vk.DestroyBuffer(a.d.dev, b.buf, nil)
	vk.FreeMemory(a.d.dev, b.mem, nil)
	a.reserved -= b.size
	for i, x := range a.blocks {
		if x == b {
			a.blocks = append(a.blocks[:i], a.blocks[i+1:]...)
			break
		}
	}
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) &^ (a - 1) }

// take carves size bytes out of b's free list, first fit, or reports false.
func (b *block) take(size uint64) (uint64, bool) {
	for i, s := range b.free {
		if s.size < size {
			continue
		}
		off := s.off
		if s.size == size {
			b.free = append(b.free[:i], b.free[i+1:]...)
		} else {
			b.free[i] = span{s.off + size, s.size - size}
		}
		b.used += size
		return off, true
	}
	return 0, false
}

// give returns a range to b's free list, merging neighbours.
func (b *block) give(off, size uint64) {
	i := sort.Search(len(b.free), func(i int) bool { return b.free[i].off > off })
	b.free = append(b.free, span{})
	copy(b.free[i+1:], b.free[i:])
	b.free[i] = span{off, size}
	if i+1 < len(b.free) && b.free[i].off+b.free[i].size == b.free[i+1].off {
		b.free[i].size += b.free[i+1].size
		b.free = append(b.free[:i+1], b.free[i+2:]...)
	}
	if i > 0 && b.free[i-1].off+b.free[i-1].size == b.free[i].off {
		b.free[i-1].size += b.free[i].size
		b.free = append(b.free[:i], b.free[i+1:]...)
	}
	b.used -= size
}

func (a *allocator) alloc(size uint64) (*Buffer, error) {
	if size == 0 {
		size = 4
	}
	rounded := alignUp(size, bufferAlign)
	if rounded > a.blockSize/2 {
		b, err := a.newBlock(rounded, true)
		if err != nil {
			return nil, err
		}
		b.used = rounded
		b.free = nil
		a.inUse += rounded
		return &Buffer{d: a.d, blk: b, size: size}, nil
	}
	for _, b := range a.blocks {
		if b.own {
			continue
		}
		if off, ok := b.take(rounded); ok {
			a.inUse += rounded
			return &Buffer{d: a.d, blk: b, off: off, size: size}, nil
		}
	}
	b, err := a.newBlock(a.blockSize, false)
	if err != nil {
		return nil, err
	}
	off, _ := b.take(rounded)
	a.inUse += rounded
	return &Buffer{d: a.d, blk: b, off: off, size: size}, nil
}

func (a *allocator) release(buf *Buffer) {
	rounded := alignUp(max(buf.size, 4), bufferAlign)
	a.inUse -= rounded
	if buf.blk.own {
		a.destroyBlock(buf.blk)
		return
	}
	buf.blk.give(buf.off, rounded)
}

// trim frees every empty shared block.
func (a *allocator) trim() {
	for _, b := range append([]*block(nil), a.blocks...) {
		if b.used == 0 {
			a.destroyBlock(b)
		}
	}
}

func (a *allocator) destroy() {
	for len(a.blocks) > 0 {
		a.destroyBlock(a.blocks[0])
	}
	a.inUse = 0
}

// Alloc returns a device buffer of size bytes. Its contents are undefined.
func (d *Device) Alloc(size uint64) (*Buffer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	return d.mem.alloc(size)
}

// Free returns the buffer's memory to the device; it is safe to call twice.
func (b *Buffer) Free() {
	d := b.d
	d.settle(b) // asynchronous transfers into or out of b finish first
	d.mu.Lock()
	defer d.mu.Unlock()
	if b.freed || d.closed {
		b.freed = true
		return
	}
	b.freed = true
	// A deferred upload into this memory must land before the memory is reused; uploads
	// elsewhere wait for the next submission as planned.
	for _, p := range d.pending {
		if p.dst == b.blk.buf && p.dstOff < b.off+b.size && b.off < p.dstOff+p.size {
			if err := d.flushPending(); err != nil {
				d.pending, d.pendUsed = d.pending[:0], 0
			}
			break
		}
	}
	d.mem.release(b)
}

// MemoryStats reports gml's device memory: bytes held by live buffers and bytes reserved
// in blocks (including free space inside them).
type MemoryStats struct {
	InUse, Reserved, Heap uint64
	Blocks                int
}

// Memory returns the allocator's accounting.
func (d *Device) Memory() MemoryStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return MemoryStats{InUse: d.mem.inUse, Reserved: d.mem.reserved, Heap: d.mem.heapSize, Blocks: len(d.mem.blocks)}
}

// Trim releases every block that holds no live buffer.
func (d *Device) Trim() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.mem.trim()
	}
}
