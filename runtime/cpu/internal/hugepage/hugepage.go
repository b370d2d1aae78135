// Package hugepage asks the operating system to back large buffers with huge pages (2
// MiB on x86-64 Linux) where it can, so that the products that stream them (GEMM's
// operands and packed panels, whose rows lie on a page each when they are 16 KiB apart)
// walk fewer pages: on the H200 host's Xeon, with transparent huge pages in `madvise`
// mode, the 1024×4096×4096 products of an mlp4096 training step ran 2-13% faster at 2
// threads with their operands and packing buffers so advised (alternating processes,
// eight of nine pairs faster). Elsewhere (other systems, huge pages off) it does nothing.
//
// The mark is on the address range, not the buffer: once the buffer is freed, the Go heap
// reuses the range and later objects there may be backed by huge pages too, which can
// raise resident memory by up to a huge page where the heap is sparse.
package hugepage

import "unsafe"

// Size is the huge page size advised for.
const Size = 2 << 20

// MinBytes is the least buffer Advise marks: such a buffer holds at least one whole
// aligned huge page wherever it starts, and its partial pages at either end are at
// most half of it.
const MinBytes = 2 * Size

// Advise marks the whole huge pages within b as eligible for huge pages, when b holds at
// least MinBytes (smaller buffers are left alone). It is a hint: it changes neither b's
// contents nor where it lies, and any failure leaves b on ordinary pages.
func Advise(b []byte) {
	if len(b) < MinBytes {
		return
	}
	off, n := interior(uintptr(unsafe.Pointer(unsafe.SliceData(b))), len(b))
	if n > 0 {
		advise(b[off : off+n])
	}
}

// AdviseFloats is Advise for a float32 buffer.
func AdviseFloats(f []float32) {
	Advise(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f)))
}

// interior returns the offset and length of the whole Size-aligned pages within the n
// bytes at addr.
func interior(addr uintptr, n int) (off, length int) {
	start := (addr + Size - 1) &^ (Size - 1)
	end := (addr + uintptr(n)) &^ (Size - 1)
	if end <= start {
		return 0, 0
	}
	return int(start - addr), int(end - start)
}
