package gpu

import (
	"fmt"
	"time"

	vk "github.com/goki/vulkan"
)

// Handover is one figure of HandoverProbe: how long one way of ordering work between
// the Vulkan queue and the engine's stream takes per round trip.
type Handover struct {
	// Case names the way in a word ("vulkan_then_engine"), What in a sentence.
	Case, What string
	// Micros is the mean wall time of one round trip, in microseconds.
	Micros float64
}

// HandoverProbe measures what a crossing between the Vulkan queue and the product
// engine's stream (cuBLASLt's) costs against each side alone, the host ordering every
// step by polling the timeline, over reps round trips per way after reps/10 unmeasured
// ones. Each side runs a 64³ f32 product. It also returns the scheduling settings in
// force, so that one run per setting of GML_VK_QUEUE_PRIORITY, GML_CUDA_STREAM_PRIORITY,
// GML_CUDA_SCHEDULE or a driver variable compares them (`gml bench gpu-matmul
// -handover`; gpu/PERF.md has the H200's figures). It fails when no engine runs
// products (CheckProductPath says why), and an error during the round trips turns the
// engine off, since the timeline may then wait for a value nobody signals.
func (d *Device) HandoverProbe(reps int) (settings string, times []Handover, err error) {
	if p := d.CheckProductPath(); !p.Active {
		return "", nil, fmt.Errorf("gpu: handover probe: no product engine runs: %s", p)
	}
	return d.handoverProbe(reps)
}

// handoverProbe is HandoverProbe on whichever engine d has (tests give it a fake one).
func (d *Device) handoverProbe(reps int) (string, []Handover, error) {
	if reps <= 0 {
		return "", nil, fmt.Errorf("gpu: handover probe: %d round trips, want at least 1", reps)
	}
	f := d.fast
	const n = 64
	bufs := make([]*Buffer, 3)
	for i := range bufs {
		b, err := d.Alloc(4 * n * n)
		if err != nil {
			return "", nil, err
		}
		defer b.Free()
		if err := d.Zero(b); err != nil {
			return "", nil, err
		}
		bufs[i] = b
	}
	// A tiny shader product, recorded once; and a tiny engine product, planned once.
	r, err := d.NewRecorder()
	if err != nil {
		return "", nil, err
	}
	tile := Tile{BM: 64, BN: 64, BK: 16, TM: 4, TN: 4, WarpN: 8}
	if err := r.MatMul(MatMul{M: n, N: n, K: n, A: bufs[0], B: bufs[1], C: bufs[2], Tile: &tile}); err != nil {
		r.Discard()
		return "", nil, err
	}
	rc, err := r.End()
	if err != nil {
		return "", nil, err
	}
	defer rc.Release()
	p := &extProduct{M: n, N: n, K: n, Batch: 1, A: bufs[0], B: bufs[1], C: bufs[2], LDA: n, LDB: n, LDC: n, In: F32, Out: F32, Label: "probe"}
	if err := f.engine.plan(p); err != nil {
		return "", nil, fmt.Errorf("gpu: handover probe: planning a %d³ product: %w", n, err)
	}
	batch := f.engine.batch([]*extProduct{p}, false)
	defer batch.release()

	d.mu.Lock()
	defer d.mu.Unlock()
	local, err := newTimeline(d, false)
	if err != nil {
		return "", nil, err
	}
	defer local.destroy()
	spin := func(tl *timeline, v uint64) error {
		for {
			cur, err := tl.value()
			if err != nil || cur >= v {
				return err
			}
		}
	}
	vulkan := func(tl *timeline, v uint64) error {
		saved := f.tl
		f.tl = tl
		err := d.submitSignal([]vk.CommandBuffer{rc.cb}, v)
		f.tl = saved
		if err != nil {
			return err
		}
		if err := spin(tl, v); err != nil {
			return err
		}
		return d.waitFence()
	}
	engine := func(wait, signal uint64) error {
		if err := batch.enqueue(wait, signal); err != nil {
			return err
		}
		return spin(f.tl, signal)
	}
	var localNext uint64
	ways := []struct {
		name, what string
		step       func() error
	}{
		{"vulkan_own_timeline", "Vulkan alone, signalling a timeline of its own", func() error {
			localNext++
			return vulkan(local, localNext)
		}},
		{"vulkan_shared_timeline", "Vulkan alone, signalling the timeline shared with the engine", func() error {
			f.tl.next++
			return vulkan(f.tl, f.tl.next)
		}},
		{"engine_alone", "the engine alone, waiting for a reached value and signalling", func() error {
			cur, err := f.tl.value()
			if err != nil {
				return err
			}
			f.tl.next = max(f.tl.next, cur) + 1
			return engine(cur, f.tl.next)
		}},
		{"vulkan_then_engine", "Vulkan then the engine (one hand-over each way)", func() error {
			f.tl.next += 2
			if err := vulkan(f.tl, f.tl.next-1); err != nil {
				return err
			}
			return engine(f.tl.next-1, f.tl.next)
		}},
	}
	times := make([]Handover, 0, len(ways))
	for _, w := range ways {
		run := func(count int) error {
			for range count {
				if err := w.step(); err != nil {
					err = fmt.Errorf("gpu: handover probe (%s): %w", w.what, err)
					f.turnOff(err, "")
					return err
				}
			}
			return nil
		}
		if err := run(reps / 10); err != nil {
			return "", nil, err
		}
		start := time.Now()
		if err := run(reps); err != nil {
			return "", nil, err
		}
		times = append(times, Handover{Case: w.name, What: w.what, Micros: float64(time.Since(start).Nanoseconds()) / 1e3 / float64(reps)})
	}
	return d.handoverSettings(), times, nil
}

// handoverSettings describes the scheduling settings in force: the queue's global
// priority, the engine's, and whether the driver could launch CUDA kernels from Vulkan
// command buffers (they would run in the Vulkan context, with no switch).
func (d *Device) handoverSettings() string {
	vkPrio := d.queuePriority
	if vkPrio == "" {
		vkPrio = "default"
	}
	engine := d.fast.engine.describe()
	if c, ok := d.fast.engine.(*cudaEngine); ok {
		engine = c.settings()
	}
	return fmt.Sprintf("queue global priority %s (KHR/EXT_global_priority offered: %v/%v); %s; VK_NV_cuda_kernel_launch: %v", vkPrio,
		d.Info.HasExtension("VK_KHR_global_priority"), d.Info.HasExtension("VK_EXT_global_priority"), engine,
		d.Info.HasExtension("VK_NV_cuda_kernel_launch"))
}
