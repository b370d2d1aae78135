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
	if !layout() {
		t.Fatal("yaegi's fields are not where dropCompileHistory and releaseTemps look")
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

// TestReleasedTempsKeepInterfaceValues checks that values of cell types converted to
// interfaces at the top level keep their receivers, which yaegi reads from the chunk's
// temporary slots when their methods are called.
func TestReleasedTempsKeepInterfaceValues(t *testing.T) {
	i := newInterp(t)
	steps := []step{
		// A closure made at the top level writes its frame slot back after each call.
		{code: "import \"time\"\nvar slept time.Duration\ngo func() {\n\tt := time.Now()\n\ttime.Sleep(300 * time.Millisecond)\n\tslept = time.Since(t)\n}()\nafter := func() int { return 7 }"},
		{code: "len(make([]byte, 10))", result: "10"},
		{code: "after()", result: "7"},
		{code: "import \"fmt\"\ntype P struct{ X int }\nfunc (p P) String() string { return fmt.Sprint(\"P\", p.X) }\nvar s fmt.Stringer = P{5}\nss := []fmt.Stringer{P{6}, &P{7}}"},
		{code: "len(make([]byte, 1<<20)) + len(make([]int, 10))", result: "1048586"},
		{code: "s.String() + ss[0].String() + ss[1].String()", result: `"P5P6P7"`},
		{code: "m := P{8}.String\nm()", result: `"P8"`},
		{code: "m()", result: `"P8"`},
	}
	for _, st := range steps {
		if r, _ := run(t, i, st.code); r.Err != nil || text(r) != st.result {
			t.Errorf("%q: %v %q, want %q", st.code, r.Err, text(r), st.result)
		}
	}
}
