package hugepage

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestAdviseMarksPages checks, through /proc/self/smaps, that Advise leaves the whole
// huge pages of a large buffer in a mapping marked for huge pages (VmFlags "hg"). The
// mark stays on the address range after the buffer is freed, so a buffer that lands
// where an earlier one was advised says nothing: the test then allocates another.
func TestAdviseMarksPages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("this kernel has no transparent huge pages")
	}
	var keep [][]byte // the buffers tried, kept alive so the next lands elsewhere
	for range 8 {
		b := make([]byte, 3*Size+12345)
		keep = append(keep, b)
		addr := uintptr(unsafe.Pointer(&b[0]))
		off, n := interior(addr, len(b))
		if n == 0 {
			t.Fatalf("interior(%#x, %d) found no whole huge page", addr, len(b))
		}
		page := addr + uintptr(off)
		before, err := vmFlags(page)
		if err != nil {
			t.Fatal(err)
		}
		if marked(before) {
			continue
		}
		Advise(b)
		after, err := vmFlags(page)
		if err != nil {
			t.Fatal(err)
		}
		if !marked(after) {
			t.Errorf("after Advise, VmFlags %q of the mapping of %#x, want hg", after, page)
		}
		return
	}
	t.Skipf("every one of %d buffers landed on memory already marked", len(keep))
}

// marked reports whether VmFlags hold hg (MADV_HUGEPAGE).
func marked(flags string) bool { return strings.Contains(" "+flags+" ", " hg ") }

// vmFlags returns the VmFlags line of the mapping of this process that holds addr.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	in := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping of /proc/self/smaps holds %#x", addr)
}
