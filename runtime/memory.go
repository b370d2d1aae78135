package runtime

import (
	"sort"

	"github.com/gml-dev/gml/internal/sysmem"
)

// accounting tracks the bytes each backend holds per pool, now and at peak.
type accounting struct {
	inUse map[string]*[NumPools]int64
	peak  map[string]*[NumPools]int64
}

func newAccounting() *accounting {
	return &accounting{inUse: map[string]*[NumPools]int64{}, peak: map[string]*[NumPools]int64{}}
}

func (a *accounting) add(backend string, pool Pool, bytes int64) {
	u, p := a.inUse[backend], a.peak[backend]
	if u == nil {
		u, p = new([NumPools]int64), new([NumPools]int64)
		a.inUse[backend], a.peak[backend] = u, p
	}
	u[pool] += bytes
	p[pool] = max(p[pool], u[pool])
}

// alloc allocates through b and counts the buffer on pool. Zero-byte tensors get a
// minimal buffer so every backend sees a valid allocation.
func (r *Runtime) alloc(b Backend, bytes int64, pool Pool) (Buffer, error) {
	buf, err := b.Alloc(max(bytes, 4), pool)
	if err != nil {
		return nil, err
	}
	r.mem.add(b.Name(), pool, buf.Size())
	return buf, nil
}

func (r *Runtime) free(b Backend, buf Buffer, pool Pool) {
	r.mem.add(b.Name(), pool, -buf.Size())
	b.Free(buf)
}

// MemoryReport lists the bytes held by each backend and pool, now and at peak.
type MemoryReport struct {
	Rows []MemoryRow
}

// MemoryRow is one backend and pool.
type MemoryRow struct {
	Backend     string
	Pool        Pool
	Bytes, Peak int64
}

// Memory returns the current accounting of the buffers this runtime allocated.
func (r *Runtime) Memory() MemoryReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	var rep MemoryReport
	names := make([]string, 0, len(r.mem.inUse))
	for n := range r.mem.inUse {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for p := Pool(0); p < NumPools; p++ {
			if u, pk := r.mem.inUse[n][p], r.mem.peak[n][p]; u != 0 || pk != 0 {
				rep.Rows = append(rep.Rows, MemoryRow{n, p, u, pk})
			}
		}
	}
	return rep
}

// Total is the sum of bytes in use over all rows.
func (m MemoryReport) Total() int64 {
	var t int64
	for _, r := range m.Rows {
		t += r.Bytes
	}
	return t
}

// FormatBytes renders a byte count with a binary unit: "1.5 MiB".
func FormatBytes(b int64) string {
	// The signed form, for cells and callers counting in int64, of internal/sysmem's
	// formatter, which every package shares.
	if b < 0 {
		return "-" + sysmem.FormatBytes(uint64(-b)) // -MinInt64 wraps to 1<<63, its magnitude
	}
	return sysmem.FormatBytes(uint64(b))
}
