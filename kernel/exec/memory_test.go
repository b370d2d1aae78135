package exec

import (
	goruntime "runtime"
	"testing"
)

// liveHeap returns the bytes of live heap after a collection.
func liveHeap() uint64 {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestMemoryPerCellIsBounded runs cells that used to retain memory in yaegi: temporaries
// of top-level expressions (a 1 MiB buffer here), and the nodes of every compiled chunk
// and of every version of a redefined function. It also checks that the reflection on
// yaegi's internals behind releaseTemps and dropCompileHistory still finds them.
func TestMemoryPerCellIsBounded(t *testing.T) {
	i := newInterp(t)
	if data, _ := globalFrame(i.yi); !data.IsValid() || namedSlots(i.yi) == nil {
		t.Fatal("yaegi's global frame or scopes are not where releaseTemps looks")
	}
	cells := []struct {
		name, code string
		perCell    uint64 // bytes of live heap a cell may add, at most
	}{
		{"temporary", "len(make([]byte, 1<<20))", 2 << 10},
		{"1+1", "1+1", 2 << 10},
		{"redefined function", "func f(x int) int {\n\ts := 0\n\tfor k := 0; k < x; k++ {\n\t\ts += k\n\t}\n\treturn s\n}\nf(3)", 2 << 10},
	}
	for _, c := range cells {
		for k := 0; k < 50; k++ { // warm up
			if r, _ := run(t, i, c.code); r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		before := liveHeap()
		const n = 300
		for k := 0; k < n; k++ {
			run(t, i, c.code)
		}
		if grown := int64(liveHeap()) - int64(before); grown > int64(n*c.perCell) {
			t.Errorf("%s: the live heap grew by %d bytes over %d cells, more than %d a cell", c.name, grown, n, c.perCell)
		}
	}
}
