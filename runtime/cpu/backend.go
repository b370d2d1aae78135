package cpu

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gml-dev/gml/internal/sysmem"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/runtime/cpu/internal/hugepage"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
)

func init() {
	runtime.Register("cpu", 0, func() (runtime.Backend, error) { return New(), nil })
}

// alignment is the byte alignment of every buffer: one cache line, and the widest
// vector register (AVX-512).
const alignment = 64

// Backend is the CPU backend. Its buffers are host memory, so Upload and Download are
// copies; its kernels run on goroutines sized to the machine.
type Backend struct {
	used   [runtime.NumPools]atomic.Int64
	closed atomic.Bool
}

// New returns a CPU backend. Backends hold no process-wide state, so any number may
// exist; the runtime opens one per process through the registry.
func New() *Backend { return &Backend{} }

// buffer is host memory whose first byte is 64-byte aligned.
type buffer struct {
	data []byte
	pool runtime.Pool
}

func (b *buffer) Size() int64 { return int64(len(b.data)) }

// Name returns "cpu".
func (c *Backend) Name() string { return "cpu" }

// Info describes the processor.
func (c *Backend) Info() runtime.DeviceInfo {
	info := runtime.DeviceInfo{
		Backend:     "cpu",
		Name:        fmt.Sprintf("%s (%d threads)", cpuModel(), parallel.Workers()),
		Kind:        "cpu",
		MemoryBytes: totalMemory(),
		FP16:        true,
		BF16:        true,
		Threads:     parallel.Workers(),
	}
	info.MaxAlloc = info.MemoryBytes
	info.Notes = append(info.Notes, "gemm: "+gemm.Default().String())
	if note := gemm.DefaultNote(); note != "" {
		info.Notes = append(info.Notes, note)
	}
	return info
}

// Alloc returns zero-filled, 64-byte-aligned host memory counted on pool.
func (c *Backend) Alloc(bytes int64, pool runtime.Pool) (runtime.Buffer, error) {
	if c.closed.Load() {
		return nil, fmt.Errorf("cpu: Alloc after Close")
	}
	if bytes < 0 {
		return nil, fmt.Errorf("cpu: Alloc of a negative size (%d bytes)", bytes)
	}
	// A size beyond the memory available would end the process in the Go runtime.
	if err := sysmem.CheckAlloc(uint64(bytes), func() string { return "a CPU buffer" }); err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	c.used[pool%runtime.NumPools].Add(bytes)
	return &buffer{data: alignedBytes(int(bytes)), pool: pool}, nil
}

// Used reports the bytes currently allocated on pool.
func (c *Backend) Used(pool runtime.Pool) int64 { return c.used[pool%runtime.NumPools].Load() }

// alignedBytes returns n zeroed bytes starting on a 64-byte boundary (backed by uint64
// words so the garbage collector keeps the whole block alive through the slice). A
// large buffer (a layer's weights or activations) is advised for huge pages: products
// read its rows a page apart.
func alignedBytes(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+alignment)/8+1)
	p := unsafe.Pointer(&words[0])
	off := (alignment - int(uintptr(p)%alignment)) % alignment
	b := unsafe.Slice((*byte)(unsafe.Add(p, off)), n)
	hugepage.Advise(b)
	return b
}

// Free releases a buffer's accounting; the memory goes back to the garbage collector.
func (c *Backend) Free(b runtime.Buffer) {
	if buf, ok := b.(*buffer); ok && buf.data != nil {
		c.used[buf.pool%runtime.NumPools].Add(-int64(len(buf.data)))
		buf.data = nil
	}
}

// hostBytes returns the memory of a buffer allocated by a CPU backend.
func hostBytes(b runtime.Buffer) ([]byte, error) {
	buf, ok := b.(*buffer)
	if !ok {
		return nil, fmt.Errorf("cpu: buffer of type %T was not allocated by the CPU backend", b)
	}
	return buf.data, nil
}

// Upload copies src into b.
func (c *Backend) Upload(b runtime.Buffer, src []byte) error {
	dst, err := hostBytes(b)
	if err != nil {
		return err
	}
	if len(src) > len(dst) {
		return fmt.Errorf("cpu: Upload of %d bytes into a %d-byte buffer", len(src), len(dst))
	}
	copy(dst, src)
	return nil
}

// Download copies the first len(dst) bytes of b into dst.
func (c *Backend) Download(b runtime.Buffer, dst []byte) error {
	src, err := hostBytes(b)
	if err != nil {
		return err
	}
	if len(dst) > len(src) {
		return fmt.Errorf("cpu: Download of %d bytes from a %d-byte buffer", len(dst), len(src))
	}
	copy(dst, src)
	return nil
}

// Close marks the backend unusable. Buffers are garbage collected.
func (c *Backend) Close() error {
	c.closed.Store(true)
	return nil
}

var machine struct {
	once  sync.Once
	model string
	mem   int64
}

func readMachine() {
	machine.once.Do(func() {
		machine.model = "CPU"
		if f, err := os.Open("/proc/cpuinfo"); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
					machine.model = strings.TrimSpace(v)
					break
				}
			}
			f.Close()
		}
		if f, err := os.Open("/proc/meminfo"); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				fields := strings.Fields(sc.Text())
				if len(fields) >= 2 && fields[0] == "MemTotal:" {
					kb, _ := strconv.ParseInt(fields[1], 10, 64)
					machine.mem = kb * 1024
					break
				}
			}
			f.Close()
		}
	})
}

// cpuModel is the processor's model name from /proc/cpuinfo, or "CPU".
func cpuModel() string { readMachine(); return machine.model }

// totalMemory is the machine's memory from /proc/meminfo, or 0 when unknown.
func totalMemory() int64 { readMachine(); return machine.mem }
