package gpu

import (
	"errors"
	"math"
	"testing"
)

// TestRecorderBarriers checks that only dependent dispatches get a barrier.
func TestRecorderBarriers(t *testing.T) {
	d := openTest(t)
	d.SetProductThreshold(math.MaxInt64) // barriers are the shaders' ordering, even under GML_CUDA_MIN_WORK
	bufs := make([]*Buffer, 4)
	for i := range bufs {
		b, err := d.Alloc(64 * 64 * 4)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		bufs[i] = b
	}
	a, b, c, e := bufs[0], bufs[1], bufs[2], bufs[3]
	mm := func(x, y, out *Buffer) MatMul { return MatMul{M: 64, N: 64, K: 64, A: x, B: y, C: out} }
	cases := []struct {
		name string
		ops  []MatMul
		want int
	}{
		{"independent", []MatMul{mm(a, b, c), mm(a, b, e)}, 0},
		{"read after write", []MatMul{mm(a, b, c), mm(c, b, e)}, 1},
		{"write after read", []MatMul{mm(a, b, c), mm(b, a, a)}, 1},
		{"write after write", []MatMul{mm(a, b, c), mm(a, b, c)}, 1},
		{"chain of three", []MatMul{mm(a, b, c), mm(c, b, e), mm(e, b, c)}, 2},
	}
	for _, cs := range cases {
		rec, err := d.NewRecorder()
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range cs.ops {
			if err := rec.MatMul(op); err != nil {
				t.Fatal(err)
			}
		}
		if rec.Barriers != cs.want {
			t.Errorf("%s: %d barriers, want %d", cs.name, rec.Barriers, cs.want)
		}
		if _, err := rec.Submit(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestThousandRunsNoLeak runs 1,000 small recordings, each allocating, uploading,
// computing, downloading and freeing, and checks that the accounting returns to zero.
func TestThousandRunsNoLeak(t *testing.T) {
	d := openTest(t)
	d.SetProfiling(true)
	x := []float32{1, 2, 3, 4}
	for i := 0; i < 1000; i++ {
		var bufs [3]*Buffer
		for j := range bufs {
			b, err := d.Alloc(16 + uint64(i%7)*1024)
			if err != nil {
				t.Fatal(err)
			}
			bufs[j] = b
		}
		if err := d.Upload(Copy{Buf: bufs[0], Data: Float32Bytes(x)}, Copy{Buf: bufs[1], Data: Float32Bytes(x)}); err != nil {
			t.Fatal(err)
		}
		rec, err := d.NewRecorder()
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.MatMul(MatMul{M: 2, N: 2, K: 2, A: bufs[0], B: bufs[1], C: bufs[2]}); err != nil {
			t.Fatal(err)
		}
		tm, err := rec.Submit()
		if err != nil {
			t.Fatal(err)
		}
		if len(tm) != 1 || tm[0].Ns < 0 {
			t.Fatalf("run %d: timings %+v, want one non-negative", i, tm)
		}
		out := make([]float32, 4)
		if err := d.Download(Copy{Buf: bufs[2], Data: Float32Bytes(out)}); err != nil {
			t.Fatal(err)
		}
		if out[0] != 7 || out[3] != 22 {
			t.Fatalf("run %d: got %v, want [7 10 15 22]", i, out)
		}
		for _, b := range bufs {
			b.Free()
		}
	}
	m := d.Memory()
	if m.InUse != 0 {
		t.Errorf("%d bytes still in use after freeing every buffer", m.InUse)
	}
	d.Trim()
	if m := d.Memory(); m.Reserved != 0 || m.Blocks != 0 {
		t.Errorf("after Trim: %d bytes in %d blocks still reserved", m.Reserved, m.Blocks)
	}
}

// TestDedicatedAndShared checks suballocation reuse and large dedicated blocks.
func TestDedicatedAndShared(t *testing.T) {
	d := openTest(t)
	big := d.mem.blockSize/2 + 1
	b1, err := d.Alloc(big)
	if err != nil {
		t.Fatal(err)
	}
	s1, _ := d.Alloc(1000)
	s2, _ := d.Alloc(1000)
	if s1.blk != s2.blk || s1.off == s2.off {
		t.Errorf("two small buffers did not share a block at different offsets")
	}
	if b1.blk == s1.blk || !b1.blk.own {
		t.Errorf("a %d-byte buffer did not get a block of its own", big)
	}
	s1.Free()
	s1.Free()
	s3, _ := d.Alloc(500)
	if s3.off != 0 {
		t.Errorf("freed space was not reused: offset %d", s3.off)
	}
	for _, b := range []*Buffer{b1, s2, s3} {
		b.Free()
	}
	if m := d.Memory(); m.InUse != 0 || m.Blocks != 1 {
		t.Errorf("after freeing: %+v, want nothing in use and one cached block", m)
	}
}

// openStaged opens the device with mapping turned off, so transfers take the staging
// and deferred-upload paths that discrete GPUs use.
func openStaged(t *testing.T) *Device {
	d := openTest(t)
	d.mem.mappable = false
	return d
}

// TestDeferredUploadsGrow checks deferred uploads that outgrow the deferral buffer (it is
// flushed, then replaced by a bigger one), large copies split over cores, and that
// freeing unrelated memory leaves deferred uploads in place.
func TestDeferredUploadsGrow(t *testing.T) {
	d := openStaged(t)
	sizes := []int{1 << 20, 5 << 20}
	var bufs []*Buffer
	var datas [][]byte
	for i, n := range sizes {
		data := make([]byte, n)
		for j := range data {
			data[j] = byte(j*13 + i)
		}
		b, err := d.Alloc(uint64(n))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		if err := d.Upload(Copy{Buf: b, Data: data}); err != nil {
			t.Fatal(err)
		}
		bufs, datas = append(bufs, b), append(datas, data)
	}
	if len(d.pending) != 1 {
		t.Fatalf("%d uploads deferred after the buffer grew, want 1 (the first flushed)", len(d.pending))
	}
	other, err := d.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	other.Free()
	if len(d.pending) != 1 {
		t.Fatalf("freeing unrelated memory flushed the deferred upload")
	}
	for i, b := range bufs {
		back := make([]byte, len(datas[i]))
		if err := d.Download(Copy{Buf: b, Data: back}); err != nil {
			t.Fatal(err)
		}
		if string(back) != string(datas[i]) {
			t.Errorf("upload %d of %d bytes came back different", i, len(back))
		}
	}
}

// TestStagedTransfers checks deferred small uploads: they reach the GPU before a
// recording that reads them, before a download, and before their memory is reused.
func TestStagedTransfers(t *testing.T) {
	d := openStaged(t)
	x := []float32{1, 2, 3, 4}
	a, _ := d.Alloc(16)
	b, _ := d.Alloc(16)
	c, _ := d.Alloc(16)
	defer a.Free()
	defer b.Free()
	defer c.Free()
	for step := 0; step < 3; step++ {
		x[0] = float32(step)
		if err := d.Upload(Copy{Buf: a, Data: Float32Bytes(x)}, Copy{Buf: b, Data: Float32Bytes(x)}); err != nil {
			t.Fatal(err)
		}
		if len(d.pending) != 2 {
			t.Fatalf("step %d: %d uploads deferred, want 2", step, len(d.pending))
		}
		rec, err := d.NewRecorder()
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.MatMul(MatMul{M: 2, N: 2, K: 2, A: a, B: b, C: c}); err != nil {
			t.Fatal(err)
		}
		if _, err := rec.Submit(); err != nil {
			t.Fatal(err)
		}
		out := make([]float32, 4)
		if err := d.Download(Copy{Buf: c, Data: Float32Bytes(out)}); err != nil {
			t.Fatal(err)
		}
		s := float32(step)
		want := []float32{s*s + 6, 2*s + 8, 3*s + 12, 22}
		for i := range want {
			if out[i] != want[i] {
				t.Fatalf("step %d: got %v, want %v", step, out, want)
			}
		}
	}
	// An upload into memory that is freed and reallocated must not land on the new owner.
	e, _ := d.Alloc(16)
	if err := d.Upload(Copy{Buf: e, Data: Float32Bytes(x)}); err != nil {
		t.Fatal(err)
	}
	e.Free()
	f, _ := d.Alloc(16)
	defer f.Free()
	if err := d.Zero(f); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 4)
	if err := d.Download(Copy{Buf: f, Data: Float32Bytes(got)}); err != nil {
		t.Fatal(err)
	}
	if got[3] != 0 {
		t.Errorf("a deferred upload overwrote reallocated memory: %v", got)
	}
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	g, _ := d.Alloc(uint64(len(big)))
	defer g.Free()
	back := make([]byte, len(big))
	if err := d.Upload(Copy{Buf: g, Data: big}); err != nil {
		t.Fatal(err)
	}
	if err := d.Download(Copy{Buf: g, Data: back}); err != nil {
		t.Fatal(err)
	}
	if string(back) != string(big) {
		t.Error("a 3 MiB staged round trip came back different")
	}
}

// TestReopen opens and closes the device repeatedly, as kernel restarts do, and checks
// that a closed device refuses work with ErrClosed instead of crashing.
func TestReopen(t *testing.T) {
	openTest(t) // skips without Vulkan
	for i := 0; i < 5; i++ {
		d, err := Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := d.Alloc(1 << 20)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Kernel("elementwise", 3, groupSize, 0, 1); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		b.Free()
		if _, err := d.Alloc(16); !errors.Is(err, ErrClosed) {
			t.Fatalf("Alloc after Close: %v, want ErrClosed", err)
		}
		if _, err := d.NewRecorder(); !errors.Is(err, ErrClosed) {
			t.Fatalf("NewRecorder after Close: %v, want ErrClosed", err)
		}
	}
}

// TestSplitKUsesScratch checks that a product with few output tiles and a long K is
// split: a partial-products dispatch into scratch, a barrier, and a summing dispatch.
func TestSplitKUsesScratch(t *testing.T) {
	d := openTest(t)
	d.SetProductThreshold(math.MaxInt64) // the shader path, even under GML_CUDA_MIN_WORK
	var bufs [3]*Buffer
	for i, n := range []uint64{32 * 784 * 4, 784 * 128 * 4, 32 * 128 * 4} {
		b, err := d.Alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		bufs[i] = b
	}
	rec, err := d.NewRecorder()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Discard()
	if err := rec.MatMul(MatMul{M: 32, N: 128, K: 784, A: bufs[0], B: bufs[1], C: bufs[2]}); err != nil {
		t.Fatal(err)
	}
	if len(rec.scratch) != 1 || rec.Barriers != 1 {
		t.Errorf("split-K: %d scratch buffers and %d barriers, want 1 and 1", len(rec.scratch), rec.Barriers)
	}
}
