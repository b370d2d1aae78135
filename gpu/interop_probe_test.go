package gpu

import (
	"testing"
	"time"

	vk "github.com/goki/vulkan"
)

// TestHandoverProbe measures what a crossing between the Vulkan queue and the engine's
// stream costs against each side alone, the host ordering every step by polling the
// timeline; it logs microseconds per round trip (go test -v). With the device's own
// engine it measures (PERF.md, cuBLASLt, has the H200's figures); without one it runs
// the same steps through the fake engine, where the figures mean nothing. It logs the
// scheduling settings in force, so that one run per setting of GML_VK_QUEUE_PRIORITY,
// GML_CUDA_STREAM_PRIORITY, GML_CUDA_SCHEDULE or a driver variable compares them.
func TestHandoverProbe(t *testing.T) {
	d := openTest(t)
	reps := 200
	if p := d.CheckProductPath(); !p.Active {
		attachFake(t, d)
		reps = 5
	}
	f := d.fast
	const n = 64
	bufs := make([]*Buffer, 3)
	for i := range bufs {
		b, err := d.Alloc(4 * n * n)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		if err := d.Zero(b); err != nil {
			t.Fatal(err)
		}
		bufs[i] = b
	}
	// A tiny shader product, recorded once; and a tiny engine product, planned once.
	r, err := d.NewRecorder()
	if err != nil {
		t.Fatal(err)
	}
	tile := Tile{BM: 64, BN: 64, BK: 16, TM: 4, TN: 4, WarpN: 8}
	if err := r.MatMul(MatMul{M: n, N: n, K: n, A: bufs[0], B: bufs[1], C: bufs[2], Tile: &tile}); err != nil {
		t.Fatal(err)
	}
	rc, err := r.End()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Release()
	p := &extProduct{M: n, N: n, K: n, Batch: 1, A: bufs[0], B: bufs[1], C: bufs[2], LDA: n, LDB: n, LDC: n, In: F32, Out: F32, Label: "probe"}
	if err := f.engine.plan(p); err != nil {
		t.Fatal(err)
	}
	batch := f.engine.batch([]*extProduct{p}, false)
	defer batch.release()

	d.mu.Lock()
	defer d.mu.Unlock()
	spin := func(tl *timeline, v uint64) {
		for {
			cur, err := tl.value()
			if err != nil {
				t.Fatal(err)
			}
			if cur >= v {
				return
			}
		}
	}
	vulkan := func(tl *timeline, v uint64) {
		saved := f.tl
		f.tl = tl
		err := d.submitSignal([]vk.CommandBuffer{rc.cb}, v)
		f.tl = saved
		if err != nil {
			t.Fatal(err)
		}
		spin(tl, v)
		if err := d.waitFence(); err != nil {
			t.Fatal(err)
		}
	}
	engine := func(wait, signal uint64) {
		t.Helper()
		if err := batch.enqueue(wait, signal); err != nil {
			t.Fatal(err)
		}
		spin(f.tl, signal)
	}
	local, err := newTimeline(d, false)
	if err != nil {
		t.Fatal(err)
	}
	defer local.destroy()
	var localNext uint64
	measure := func(name string, step func()) {
		for range reps / 10 {
			step()
		}
		start := time.Now()
		for range reps {
			step()
		}
		t.Logf("%-58s %7.1f us per round trip", name, float64(time.Since(start).Nanoseconds())/1e3/float64(reps))
	}
	// CUDA kernels launched from Vulkan command buffers would run in the Vulkan context,
	// with no switch: whether the driver offers that is worth knowing next to the figures.
	t.Logf("VK_NV_cuda_kernel_launch: %v", d.Info.HasExtension("VK_NV_cuda_kernel_launch"))
	vkPrio := d.queuePriority
	if vkPrio == "" {
		vkPrio = "default"
	}
	settings := "fake engine"
	if c, ok := f.engine.(*cudaEngine); ok {
		settings = c.settings()
	}
	t.Logf("queue global priority %s (KHR/EXT_global_priority offered: %v/%v); %s", vkPrio,
		d.Info.HasExtension("VK_KHR_global_priority"), d.Info.HasExtension("VK_EXT_global_priority"), settings)
	measure("Vulkan alone, signalling a timeline of its own", func() {
		localNext++
		vulkan(local, localNext)
	})
	measure("Vulkan alone, signalling the timeline shared with CUDA", func() {
		f.tl.next++
		vulkan(f.tl, f.tl.next)
	})
	measure("CUDA alone, waiting for a reached value and signalling", func() {
		cur, err := f.tl.value()
		if err != nil {
			t.Fatal(err)
		}
		f.tl.next = max(f.tl.next, cur) + 1
		engine(cur, f.tl.next)
	})
	measure("Vulkan then CUDA (one hand-over each way)", func() {
		f.tl.next += 2
		vulkan(f.tl, f.tl.next-1)
		engine(f.tl.next-1, f.tl.next)
	})
}
