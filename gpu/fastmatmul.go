package gpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	vk "github.com/goki/vulkan"

	"github.com/gml-dev/gml/tensor"
)

// Which products go to the device's outside engine (interop.go), and how a product of
// the benchmarks (Recorder.MatMul) or of a graph (a MatMul node) becomes one.

// probeFastPath looks for a product library for the device before it is created: the
// libraries, a GPU they see with the device's UUID, and the Vulkan interop the engine
// needs. It returns nil and the reason when there is no library to use; a fastPath that
// is off (with its reason) when there is one that cannot be used with this device.
func probeFastPath(inst vk.Instance, pd vk.PhysicalDevice, in Info) (*fastPath, string) {
	switch v := strings.ToLower(os.Getenv("GML_CUDA")); v {
	case "0", "off", "false", "no":
		return nil, "turned off by GML_CUDA=" + v
	}
	switch in.VendorID {
	case 0x10de: // NVIDIA
	case 0x1002:
		return nil, "no product library for AMD GPUs yet (hipBLASLt would plug in as cuBLASLt does: gpu/doc.go)"
	default:
		return nil, "no product library for " + in.Name
	}
	lib, err := loadCUDA()
	if err != nil {
		return nil, err.Error()
	}
	ord, err := lib.deviceByUUID(deviceUUID(inst, pd))
	caps := queryExportCaps(inst, pd, in)
	f := newFastPath(newCUDAEngine(lib, ord), caps)
	if err != nil {
		f.off(err.Error())
	} else if why := caps.missing(); why != "" {
		f.off(why)
	}
	return f, ""
}

// off marks the engine unusable before the device is created.
func (f *fastPath) off(reason string) {
	f.state, f.reason, f.exportMemory = fastOff, reason, false
}

// fastExtensions lists the device extensions the engine needs, NUL-terminated.
func (d *Device) fastExtensions() []string {
	if d.fast == nil || d.fast.state == fastOff {
		return nil
	}
	return []string{"VK_KHR_external_memory_fd\x00", "VK_KHR_external_semaphore_fd\x00"}
}

// fastUnavailable turns the engine off while the device is being created.
func (d *Device) fastUnavailable(reason string) {
	if d.fast != nil && d.fast.state != fastOff {
		d.fast.off(reason)
	}
}

// initFast creates the timeline semaphore the engine shares, once the device exists.
func (d *Device) initFast() {
	f := d.fast
	if f == nil || f.state == fastOff {
		return
	}
	tl, err := newTimeline(d, true)
	if err != nil {
		f.off(err.Error())
		return
	}
	f.tl = tl
}

// selfTest runs one product through the engine on Vulkan memory and checks it against
// the host, with a short stall limit: a driver or sandbox that accepts the calls but
// does not share the memory or the semaphore is found here.
func (f *fastPath) selfTest(d *Device) error {
	const m, n, k = 64, 48, 80
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	for i := range b {
		b[i] = float32(rng.NormFloat64())
	}
	f.setStage("allocating and filling the self-test's exportable buffers")
	var bufs [3]*Buffer
	for i, size := range []int{m * k, k * n, m * n} {
		buf, err := d.Alloc(uint64(4 * size))
		if err != nil {
			return err
		}
		defer buf.Free()
		bufs[i] = buf
	}
	if err := d.Upload(Copy{Buf: bufs[0], Data: Float32Bytes(a)}, Copy{Buf: bufs[1], Data: Float32Bytes(b)}); err != nil {
		return err
	}
	if err := d.Zero(bufs[2]); err != nil {
		return err
	}
	// The self-test has no shader path: an engine that fails it is not used.
	p := &extProduct{M: m, N: n, K: k, Batch: 1, A: bufs[0], B: bufs[1], C: bufs[2], LDA: k, LDB: n, LDC: n, In: F32, Out: F32, Label: "self-test"}
	// The self-test has no shader path: a run that cannot queue it fails with the
	// engine's error, and the engine is not used.
	p.fallback = func(*Recorder) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		if why := f.bad[p.key]; why != "" {
			return errors.New(why)
		}
		return errors.New(f.reason)
	}
	f.setStage("importing the self-test's memory, planning and first running its product (cudaImportExternalMemory, cublasLtMatmul)")
	if err := f.engine.plan(p); err != nil {
		return fmt.Errorf("self-test: %w", err)
	}
	r, err := d.NewRecorder()
	if err != nil {
		return err
	}
	if _, err := r.add(p); err != nil {
		r.Discard()
		return err
	}
	f.setStage("running the self-test's product between Vulkan work (timeline semaphore waits and signals)")
	stall := f.stall
	f.stall = min(stall, 5*time.Second)
	_, err = r.Submit()
	f.stall = stall
	if err != nil {
		return fmt.Errorf("self-test product: %w", err)
	}
	f.setStage("reading the self-test's result back")
	got := make([]float32, m*n)
	if err := d.Download(Copy{Buf: bufs[2], Data: Float32Bytes(got)}); err != nil {
		return err
	}
	for i := range m {
		for j := range n {
			var want, mag float64
			for l := range k {
				x := float64(a[i*k+l]) * float64(b[l*n+j])
				want += x
				mag += math.Abs(x)
			}
			if math.Abs(float64(got[i*n+j])-want) > 1e-4*mag+1e-6 {
				return fmt.Errorf("self-test: a %dx%dx%d product through Vulkan memory gave %g at (%d,%d), want %g: the memory or the semaphore is not shared", m, n, k, got[i*n+j], i, j, want)
			}
		}
	}
	return nil
}

// fastMatMul records p through the engine when the device has one and p is big enough;
// it reports false when p stays on the shaders (tuning overrides, small products,
// shapes the engine cannot plan).
func (r *Recorder) fastMatMul(p MatMul) (bool, error) {
	f := r.d.fast
	if f == nil || p.Tile != nil || p.Shader != "" {
		return false, nil
	}
	q := p
	push, err := q.normalize()
	if err != nil || !f.accepts(r.d, int64(q.Batch)*int64(q.M)*int64(q.N)*int64(q.K), q.Input, q.TF32 && q.Input == F32) {
		return false, nil
	}
	label := p.Label
	if label == "" {
		label = "matmul"
	}
	e := &extProduct{
		M: q.M, N: q.N, K: q.K, Batch: q.Batch, TransA: q.TransA, TransB: q.TransB,
		A: q.A, B: q.B, C: q.C, LDA: q.LDA, LDB: q.LDB, LDC: q.LDC,
		SA: int(push.sA), SB: int(push.sB), SC: int(push.sC),
		In: q.Input, Out: F32, TF32: q.TF32 && q.Input == F32, Beta: q.Beta, Label: label,
		fallback: func(r *Recorder) error { return r.matMulShaders(p) },
	}
	return r.external(e)
}

// recordFastMatMul records a MatMul node through the engine when the device has one and
// the product is big enough: f32 products in f32 (TensorFloat-32 when the node allows
// it), f16 and bf16 ones accumulating in f32 and written in their type, and f32 ones of
// 16-bit precision on operands rounded into scratch, as the shaders round them. The
// engine reads transposed operands in place. It reports false when the product stays
// on the shaders.
func recordFastMatMul(r *Recorder, n *tensor.Node, p MatMul, out *Buffer, in []*Buffer) (bool, error) {
	f := r.d.fast
	if f == nil {
		return false, nil
	}
	at := n.Attr().(tensor.MatMulAttr)
	dt := n.DType()
	operands := inputType(dt)
	if dt == tensor.F32 && at.Precision != tensor.F32 {
		operands = inputType(at.Precision)
	}
	q := p
	sA, sB, sC, err := q.layout()
	if err != nil || !f.accepts(r.d, int64(q.Batch)*int64(q.M)*int64(q.N)*int64(q.K), operands, at.TF32 && operands == F32) {
		return false, nil // the shaders report a bad layout
	}
	e := &extProduct{
		M: q.M, N: q.N, K: q.K, Batch: q.Batch, TransA: q.TransA, TransB: q.TransB,
		A: in[0], B: in[1], C: out, LDA: q.LDA, LDB: q.LDB, LDC: q.LDC,
		SA: sA, SB: sB, SC: sC,
		In: inputType(dt), Out: inputType(dt), TF32: at.TF32, Label: "matmul",
		fallback: func(r *Recorder) error { return recordMatMulShaders(r, n, p, out, in) },
	}
	half := tensor.F32
	if dt == tensor.F32 && at.Precision != tensor.F32 {
		half = at.Precision
		for i := range 2 {
			t, err := r.scratchBuffer(uint64(2 * n.Input(i).Shape().Size()))
			if err != nil {
				return false, err
			}
			if i == 0 {
				e.A = t
			} else {
				e.B = t
			}
		}
		e.In, e.TF32 = inputType(half), false
	}
	if !f.plan(e) {
		return false, nil
	}
	if half != tensor.F32 {
		for i, t := range []*Buffer{e.A, e.B} {
			if err := r.cast("matmul_round", tensor.F32, half, n.Input(i).Shape().Size(), in[i], t); err != nil {
				return false, err
			}
		}
	}
	return r.add(e)
}
