// Package sysmem says how much memory this process can still get, so that an
// allocation that cannot fit fails with an error naming the size and what is available,
// instead of the Go runtime's fatal "out of memory" (or the OOM killer) ending the
// process. It reads Linux's /proc/meminfo and the cgroup's memory limit (v1 or v2); on
// other systems nothing is known and every check passes.
package sysmem

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// checkFrom is the size from which CheckAlloc looks at the system: smaller allocations
// are always let through, so the check costs nothing for everyday sizes.
const checkFrom = 256 << 20

// Info is what the machine and the cgroup allow.
type Info struct {
	// Total is the memory of the machine, or the cgroup's limit when that is lower.
	Total uint64
	// Available is what can still be allocated: MemAvailable plus free swap, or the room
	// left under the cgroup's limit when that is lower.
	Available uint64
}

// Read returns what is known about memory now; ok is false where nothing is.
func Read() (info Info, ok bool) {
	mi, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return info, false
	}
	fields := map[string]uint64{}
	for _, line := range strings.Split(string(mi), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			if kb, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				fields[strings.TrimSuffix(f[0], ":")] = kb * 1024
			}
		}
	}
	avail, found := fields["MemAvailable"]
	if !found || fields["MemTotal"] == 0 {
		return info, false
	}
	info = Info{Total: fields["MemTotal"], Available: avail + fields["SwapFree"]}
	if limit, usage, ok := cgroupMemory(); ok && limit < info.Total {
		info.Total = limit
		room := uint64(0)
		if limit > usage {
			room = limit - usage
		}
		info.Available = min(info.Available, room)
	}
	return info, true
}

// cgroupMemory returns the memory limit and usage of this process's cgroup, v2 first,
// then v1; ok is false when there is no limit.
func cgroupMemory() (limit, usage uint64, ok bool) {
	for _, files := range [][2]string{
		{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"},
	} {
		l, err1 := readUint(files[0])
		u, err2 := readUint(files[1])
		if err1 == nil && err2 == nil && l < 1<<60 {
			return l, u, true
		}
	}
	return 0, 0, false
}

func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// OOMKills returns how many processes the OOM killer has ended in this cgroup (the
// oom_kill counter of v2's memory.events or v1's memory.oom_control), 0 when unknown.
func OOMKills() int {
	for _, path := range []string{"/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"} {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(v))
				return n
			}
		}
	}
	return 0
}

// TooLargeError is an allocation that cannot fit in the memory available.
type TooLargeError struct {
	What  string // what was to be allocated, e.g. "make([]byte, 1099511627776)"
	Bytes uint64 // its size
	Info  Info   // the memory at the time
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("cannot allocate %s for %s: only %s of memory is available (the machine has %s)",
		FormatBytes(e.Bytes), e.What, FormatBytes(e.Info.Available), FormatBytes(e.Info.Total))
}

// CheckAlloc returns a *TooLargeError when bytes cannot fit in the memory available
// now; what names the allocation in the message (called only then: everyday sizes
// format nothing). Sizes under 256 MiB, and systems where nothing is known, always pass.
func CheckAlloc(bytes uint64, what func() string) error {
	if bytes < checkFrom {
		return nil
	}
	info, ok := Read()
	if !ok || bytes <= info.Available {
		return nil
	}
	return &TooLargeError{What: what(), Bytes: bytes, Info: info}
}

// FormatBytes renders n with a binary unit, e.g. "1.5 GiB" or "512 B".
func FormatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
