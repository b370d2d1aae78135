package runtime

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/gml-dev/gml/tensor"
)

// Pool classifies what a buffer holds, which decides its lifetime and the line of the
// memory report it is counted on.
type Pool uint8

// The pools.
const (
	PoolWeights     Pool = iota // model variables: resident across runs and cells
	PoolOptimizer               // optimizer moments and counters: resident
	PoolActivations             // intermediate values of one run, reused across runs
	PoolScratch                 // backend temporaries (packing, im2col) and transfer buffers
	PoolIO                      // graph inputs and outputs
	NumPools
)

var poolNames = [NumPools]string{"weights", "optimizer", "activations", "scratch", "io"}

func (p Pool) String() string {
	if p < NumPools {
		return poolNames[p]
	}
	return fmt.Sprintf("pool(%d)", uint8(p))
}

// Buffer is backend memory that holds one contiguous row-major tensor. Only the backend
// that allocated a buffer can read or write it.
type Buffer interface {
	// Size is the buffer's capacity in bytes.
	Size() int64
}

// Backend is the narrow interface every device implements: the CPU backend in
// runtime/cpu, the Vulkan backend in gpu. The scheduler decides which nodes a backend
// runs (Supports), allocates every buffer through it, and hands it whole segments of a
// graph to prepare once and run many times. Every method is required, and no backend
// has abilities beyond them today: profiling is part of Program.Run (each backend times
// its nodes its own way: wall clock on the CPU, timestamp queries on the GPU), and a
// missing kernel is Supports returning false. An ability only some backends will have
// (asynchronous runs, events) is to be a separate small interface found by type
// assertion, so this set stays what every device must provide.
type Backend interface {
	// Name identifies the backend in logs and tables: "cpu", "vulkan".
	Name() string
	// Info describes the device.
	Info() DeviceInfo
	// Supports reports whether Prepare accepts node n (its op, dtypes and attributes).
	// Unsupported nodes run on the CPU backend; the scheduler counts those fallbacks.
	Supports(n *tensor.Node) bool
	// Alloc returns a buffer of at least bytes bytes, zero-filled, counted on pool.
	// Out of memory is an error that says how much was asked and how much is free.
	Alloc(bytes int64, pool Pool) (Buffer, error)
	// Free releases a buffer from Alloc.
	Free(b Buffer)
	// Upload copies src into b starting at byte 0.
	Upload(b Buffer, src []byte) error
	// Download copies the first len(dst) bytes of b into dst.
	Download(b Buffer, dst []byte) error
	// Prepare compiles a segment (pipelines, command buffers, kernels) for repeated runs.
	Prepare(seg *Segment) (Program, error)
	// Close releases every device object; the backend is unusable afterwards.
	Close() error
}

// Segment is a run of consecutive nodes of one graph assigned to one backend.
// The scheduler has allocated a buffer for every node the segment reads or writes:
// Buffers maps each node in Nodes, and each input of those nodes, to its buffer.
// Nodes whose op is OpReshape share their input's buffer (the scheduler aliases them),
// and in-place ops (tensor.Op.Writes) share the buffer of the input they write, so
// backends treat Reshape as a no-op and write updates straight into variable buffers.
type Segment struct {
	Nodes   []*tensor.Node
	Buffers map[*tensor.Node]Buffer
	// Escapes, when not nil, holds the nodes of Nodes whose values are read after the
	// segment has run, or by readers that name another node (a lowered fused node
	// whose result they are): fetched outputs, values later segments read. A backend
	// may then leave unwritten the buffer of any other node once the segment's own
	// readers have its value (the CPU backend's fusion keeps such values in cache).
	// nil: any node's value may be read afterwards.
	Escapes map[*tensor.Node]bool
}

// Program is a prepared segment.
type Program interface {
	// Run computes the segment's nodes into their buffers. When prof is non-nil the
	// backend records each node's time in it (profiling is opt-in and costs nothing
	// when off). Run returns when results are visible to Download.
	Run(prof *Profile) error
	// Release frees what Prepare built (not the segment's buffers).
	Release()
}

// DeviceInfo describes a device for `gml devices`, rt.Devices() and logs.
type DeviceInfo struct {
	Backend      string     // "cpu", "vulkan"
	Index        int        // the device's number among its backend's devices (GML_VK_DEVICE=N)
	Name         string     // "AMD EPYC 9B14 (2 threads)", "NVIDIA H200"
	Kind         DeviceType // CPU, DiscreteGPU, IntegratedGPU, VirtualGPU, SoftwareGPU (lavapipe), OtherGPU
	Driver       string
	MemoryBytes  int64 // device-local memory
	MaxAlloc     int64 // largest single allocation
	FP16, BF16   bool
	CoopMatKHR   bool // VK_KHR_cooperative_matrix
	CoopMatNV    bool // VK_NV_cooperative_matrix / cooperative_matrix2
	SubgroupSize int
	Threads      int // CPU: worker goroutines
	// Limits of the device's kernels, where the backend has them (0: none or unknown).
	MaxBinding      int64 // largest buffer one kernel binds (maxStorageBufferRange)
	SharedMemory    int64 // workgroup shared memory in bytes
	MaxWorkgroup    int   // most invocations in one workgroup
	TimestampPeriod float64
	Notes           []string
}

// Profile accumulates per-op-kind time and work across runs. It is safe for concurrent
// use by backends.
type Profile struct {
	mu    sync.Mutex
	stats map[tensor.Op]*OpStat
}

// OpStat is one row of a profile.
type OpStat struct {
	Op    tensor.Op
	Count int
	Time  time.Duration
	FLOPs float64
}

// NewProfile returns an empty profile.
func NewProfile() *Profile { return &Profile{stats: map[tensor.Op]*OpStat{}} }

// Record adds one execution of node n that took d.
func (p *Profile) Record(n *tensor.Node, d time.Duration) { p.RecordWork(n, d, FLOPs(n)) }

// RecordWork adds one execution of node n that took d and did flops floating-point
// operations: a backend's step that also did the work of other nodes (a fused group
// of elementwise ops, a bias added in a product) counts theirs too, under n's op.
func (p *Profile) RecordWork(n *tensor.Node, d time.Duration, flops float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats[n.Op()]
	if s == nil {
		s = &OpStat{Op: n.Op()}
		p.stats[n.Op()] = s
	}
	s.Count++
	s.Time += d
	s.FLOPs += flops
}

// Stats returns the rows sorted by total time, largest first.
func (p *Profile) Stats() []OpStat {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]OpStat, 0, len(p.stats))
	for _, s := range p.stats {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time > out[j].Time })
	return out
}
