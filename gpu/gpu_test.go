package gpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	vk "github.com/goki/vulkan"

	"github.com/gml-dev/gml/shaders"
	"github.com/gml-dev/gml/tensor"
)

// openTest opens the default device, skipping only when Vulkan is absent altogether.
func openTest(t testing.TB) *Device {
	t.Helper()
	d, err := Open()
	if errors.Is(err, ErrNoVulkan) {
		t.Skipf("no Vulkan loader or device on this machine: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestDevicesRender(t *testing.T) {
	d := openTest(t)
	infos, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) == 0 {
		t.Fatal("Devices returned no device although Open succeeded")
	}
	text := infos.String()
	for _, want := range []string{d.Info.Name, "subgroup size", "max allocation", "memory heaps"} {
		if !strings.Contains(text, want) {
			t.Errorf("device table lacks %q:\n%s", want, text)
		}
	}
	mime := d.Info.MIMEBundle()
	if h, _ := mime["text/html"].(string); !strings.Contains(h, "<table>") || !strings.Contains(h, "fp16") {
		t.Errorf("text/html is not a device table: %q", h)
	}
	if _, ok := mime["text/plain"].(string); !ok {
		t.Error("MIMEBundle has no text/plain")
	}
}

func TestChoose(t *testing.T) {
	v := uint32(1<<22 | 3<<12)
	infos := []Info{
		{Index: 0, Name: "llvmpipe", Type: "cpu", apiVersion: v},
		{Index: 1, Name: "Intel UHD", Type: "integrated", apiVersion: v, Heaps: []Heap{{Size: 1 << 30, DeviceLocal: true}}},
		{Index: 2, Name: "NVIDIA H200", Type: "discrete", apiVersion: v, Heaps: []Heap{{Size: 1 << 37, DeviceLocal: true}}},
		{Index: 3, Name: "old", Type: "discrete", apiVersion: 1 << 22},
	}
	cases := []struct {
		want    string
		infos   []Info
		pick    int
		wantErr string
	}{
		{"", infos, 2, ""},
		{"", infos[:2], 1, ""},
		{"", infos[:1], 0, ""},
		{"0", infos, 0, ""},
		{"uhd", infos, 1, ""},
		{"7", infos, 0, "there are 4 devices"},
		{"radeon", infos, 0, "matches no device"},
		{"", infos[3:], 0, "older than Vulkan 1.1"},
	}
	for _, c := range cases {
		got, err := choose(c.infos, c.want)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("choose(%q): error %v, want one containing %q", c.want, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.pick {
			t.Errorf("choose(%q) = %d, %v; want %d", c.want, got, err, c.pick)
		}
	}
}

func TestOutOfMemoryMessage(t *testing.T) {
	e := &OutOfMemoryError{Asked: 3 << 30, InUse: 1 << 30, Heap: 2 << 30}
	for _, want := range []string{"asked for 3.0 GiB", "1.0 GiB in use", "1.0 GiB free of 2.0 GiB"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("%q lacks %q", e.Error(), want)
		}
	}
}

func TestAllocTooLarge(t *testing.T) {
	d := openTest(t)
	_, err := d.Alloc(1 << 50)
	var oom *OutOfMemoryError
	if !errors.As(err, &oom) || !strings.Contains(err.Error(), "PiB") || !strings.Contains(err.Error(), "free of") {
		t.Fatalf("allocating 1 PiB: got %v, want an error naming the size and the memory available", err)
	}
}

func TestUploadDownloadRoundTrip(t *testing.T) {
	d := openTest(t)
	sizes := []int{1, 3, 1000, 70000}
	bufs := make([]*Buffer, len(sizes))
	ups := make([]Copy, len(sizes))
	for i, n := range sizes {
		b, err := d.Alloc(uint64(n))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		data := make([]byte, n)
		for j := range data {
			data[j] = byte(j*7 + i)
		}
		bufs[i], ups[i] = b, Copy{Buf: b, Data: data}
	}
	if err := d.Upload(ups...); err != nil {
		t.Fatal(err)
	}
	downs := make([]Copy, len(sizes))
	for i, n := range sizes {
		downs[i] = Copy{Buf: bufs[i], Data: make([]byte, n)}
	}
	if err := d.Download(downs...); err != nil {
		t.Fatal(err)
	}
	for i := range sizes {
		if string(downs[i].Data) != string(ups[i].Data) {
			t.Errorf("buffer %d (%d bytes) came back different", i, sizes[i])
		}
	}
	if err := d.Upload(Copy{Buf: bufs[0], Offset: 1, Data: []byte{1}}); err == nil {
		t.Error("an upload past the end of a buffer returned no error")
	}
}

// refMatMul computes the product in float64 on the host, for comparison.
func refMatMul(p MatMul, a, b, c []float32) []float32 {
	out := append([]float32(nil), c...)
	sA, sB, sC := p.M*p.K, p.K*p.N, p.M*p.N
	if p.BroadcastA {
		sA = 0
	}
	if p.BroadcastB {
		sB = 0
	}
	for z := 0; z < p.Batch; z++ {
		for i := 0; i < p.M; i++ {
			for j := 0; j < p.N; j++ {
				var s float64
				for k := 0; k < p.K; k++ {
					av := a[z*sA+i*p.K+k]
					if p.TransA {
						av = a[z*sA+k*p.M+i]
					}
					bv := b[z*sB+k*p.N+j]
					if p.TransB {
						bv = b[z*sB+j*p.K+k]
					}
					s += float64(av) * float64(bv)
				}
				idx := z*sC + i*p.N + j
				if p.Beta != 0 { // with Beta 0, C (poisoned with NaN) is overwritten, not read
					s += float64(p.Beta) * float64(c[idx])
				}
				out[idx] = float32(s)
			}
		}
	}
	return out
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// relErr is ‖got − want‖ / ‖want‖; a NaN or infinity on either side is +Inf, so a
// comparison `relErr(...) > tol` cannot pass on it.
func relErr(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) || math.IsNaN(w) || math.IsInf(g, 0) || math.IsInf(w, 0) {
			return math.Inf(1)
		}
		num += (g - w) * (g - w)
		den += w * w
	}
	return math.Sqrt(num / math.Max(den, 1e-30))
}

// runMatMul uploads random operands, runs p on the device and returns the result with
// the host reference. C is poisoned with NaN (or random values when Beta is set) first.
func runMatMul(t *testing.T, d *Device, p MatMul, r *rand.Rand) (got, want []float32) {
	t.Helper()
	na, nb := p.Batch*p.M*p.K, p.Batch*p.K*p.N
	if p.BroadcastA {
		na = p.M * p.K
	}
	if p.BroadcastB {
		nb = p.K * p.N
	}
	a, b := randSlice(r, na), randSlice(r, nb)
	c := make([]float32, p.Batch*p.M*p.N)
	for i := range c {
		c[i] = float32(math.NaN())
		if p.Beta != 0 {
			c[i] = float32(r.NormFloat64())
		}
	}
	var ab, bb []byte
	switch p.Input {
	case F32:
		ab, bb = Float32Bytes(a), Float32Bytes(b)
	case F16, BF16:
		conv, back := tensor.Float32ToF16, tensor.F16ToFloat32
		if p.Input == BF16 {
			conv, back = tensor.Float32ToBF16, tensor.BF16ToFloat32
		}
		ah, bh := make([]uint16, na), make([]uint16, nb)
		for i := range a {
			ah[i] = conv(a[i])
			a[i] = back(ah[i])
		}
		for i := range b {
			bh[i] = conv(b[i])
			b[i] = back(bh[i])
		}
		ab, bb = Uint16Bytes(ah), Uint16Bytes(bh)
	}
	bufs := make([]*Buffer, 3)
	for i, n := range []int{len(ab), len(bb), 4 * len(c)} {
		buf, err := d.Alloc(uint64(n))
		if err != nil {
			t.Fatal(err)
		}
		defer buf.Free()
		bufs[i] = buf
	}
	p.A, p.B, p.C = bufs[0], bufs[1], bufs[2]
	if err := d.Upload(Copy{Buf: p.A, Data: ab}, Copy{Buf: p.B, Data: bb}, Copy{Buf: p.C, Data: Float32Bytes(c)}); err != nil {
		t.Fatal(err)
	}
	rec, err := d.NewRecorder()
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.MatMul(p); err != nil {
		rec.Discard()
		t.Fatal(err)
	}
	if _, err := rec.Submit(); err != nil {
		t.Fatal(err)
	}
	got = make([]float32, len(c))
	if err := d.Download(Copy{Buf: p.C, Data: Float32Bytes(got)}); err != nil {
		t.Fatal(err)
	}
	return got, refMatMul(p, a, b, c)
}

func TestMatMulF32(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(1, 2))
	// Explicit tiles cover the subgroup arrangements (WarpN) and 512-thread groups within
	// lavapipe's 32 KiB of shared memory.
	large := tileF32Large
	huge := Tile{BM: 128, BN: 128, BK: 8, TM: 8, TN: 4, WarpN: 8}
	w4 := Tile{BM: 128, BN: 128, BK: 8, TM: 8, TN: 8, WarpN: 4}
	w16 := Tile{BM: 64, BN: 128, BK: 16, TM: 4, TN: 8, WarpN: 16}
	cases := []MatMul{
		{M: 1, N: 1, K: 1},
		{M: 3, N: 5, K: 7},
		{M: 8, N: 300, K: 33, TransB: true},
		{M: 5, N: 64, K: 64, Batch: 3},
		{M: 37, N: 29, K: 41},
		{M: 64, N: 64, K: 64},
		{M: 65, N: 130, K: 17, TransA: true},
		{M: 100, N: 70, K: 90, TransB: true},
		{M: 33, N: 47, K: 19, TransA: true, TransB: true},
		{M: 20, N: 36, K: 12, Batch: 4},
		{M: 20, N: 36, K: 12, Batch: 3, BroadcastB: true},
		{M: 9, N: 16, K: 24, Batch: 2, BroadcastA: true, Beta: 0.5},
		{M: 129, N: 257, K: 77, Tile: &large},
		{M: 256, N: 128, K: 64, TransA: true, Tile: &large},
		{M: 200, N: 131, K: 96, TransB: true, Tile: &large},
		{M: 300, N: 260, K: 40, TransA: true, Tile: &huge},
		{M: 200, N: 260, K: 41, TransB: true, Tile: &w4},
		{M: 130, N: 250, K: 70, Tile: &w16},
		{M: 96, N: 200, K: 36, TransA: true, TransB: true, Tile: &w16},
		// Enough 128x128 output tiles for the big tiles (compiled-in variants) where the
		// device fits them, per operand layout; lavapipe falls back to smaller tiles.
		{M: 2048, N: 2048, K: 24},
		{M: 2048, N: 2056, K: 20, TransA: true},
		{M: 2056, N: 2048, K: 28, TransB: true},
		// Few output tiles and a long K: split-K with a summing pass.
		{M: 32, N: 128, K: 784},
		{M: 20, N: 30, K: 1000, Batch: 2, TransA: true},
		{M: 9, N: 64, K: 333, TransB: true, BroadcastB: true, Batch: 3},
	}
	for _, c := range cases {
		if c.Batch == 0 {
			c.Batch = 1
		}
		name := fmt.Sprintf("M%d_N%d_K%d_b%d_tA%v_tB%v_bcA%v_bcB%v_beta%v_large%v", c.M, c.N, c.K, c.Batch, c.TransA, c.TransB, c.BroadcastA, c.BroadcastB, c.Beta, c.Tile != nil)
		t.Run(name, func(t *testing.T) {
			got, want := runMatMul(t, d, c, r)
			if e := relErr(got, want); e > 1e-5 {
				t.Errorf("relative error %.3g > 1e-5", e)
			}
		})
	}
}

// TestMatMulCoop runs the cooperative-matrix products, f16 and bf16: the subgroup-scope
// shader at every size and each workgroup-scope one (VK_NV_cooperative_matrix2) forced
// where the device has it. A device without them (lavapipe) reports each as SKIP with
// the reason, so a green run does not pass for coverage it lacks.
func TestMatMulCoop(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(3, 4))
	for _, in := range []DType{F16, BF16} {
		t.Run(in.String(), func(t *testing.T) {
			sub, err := coopShader(d.Info, in)
			if err != nil {
				t.Skipf("no %s cooperative-matrix shader on %s: %v", in, d.Info.Name, err)
			}
			// The workgroup-scope shaders are chosen automatically for big products only.
			names := []string{sub}
			for _, c := range shaders.Generated {
				if _, err := coopMat2Shader(d.Info, MatMul{M: 1, N: 1, Batch: 1, Input: in, Shader: c.Name()}, mmPush{}); err == nil {
					names = append(names, c.Name())
				}
			}
			if len(names) == 1 {
				t.Run("workgroup_scope", func(t *testing.T) {
					t.Skipf("no workgroup-scope %s shader on %s (it needs VK_NV_cooperative_matrix2)", in, d.Info.Name)
				})
			}
			for _, shader := range names {
				cases := []MatMul{{M: 128, N: 128, K: 64}, {M: 77, N: 136, K: 40}, {M: 300, N: 264, K: 520, Batch: 2}, {M: 64, N: 64, K: 32, Beta: 1}, {M: 256, N: 512, K: 256}}
				if shader != sub {
					// Only tensor-addressed loads take sizes that are not multiples of 8.
					cases = append(cases, MatMul{M: 50, N: 70, K: 33}, MatMul{M: 136, N: 264, K: 75, Batch: 3, Beta: 0.5})
				}
				for _, c := range cases {
					c.Input, c.Shader = in, shader
					if c.Batch == 0 {
						c.Batch = 1
					}
					t.Run(fmt.Sprintf("M%d_N%d_K%d_b%d_%s", c.M, c.N, c.K, c.Batch, shader), func(t *testing.T) {
						got, want := runMatMul(t, d, c, r)
						if e := relErr(got, want); e > 1e-3 {
							t.Errorf("relative error %.3g > 1e-3", e)
						}
					})
				}
			}
		})
	}
}

func TestMatMulBadInput(t *testing.T) {
	d := openTest(t)
	small, err := d.Alloc(16)
	if err != nil {
		t.Fatal(err)
	}
	defer small.Free()
	rec, err := d.NewRecorder()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Discard()
	cases := []struct {
		p    MatMul
		want string
	}{
		{MatMul{M: 0, N: 1, K: 1, A: small, B: small, C: small}, "positive sizes"},
		{MatMul{M: 4, N: 4, K: 4, A: small, B: small, C: small}, "needs 64 bytes"},
		{MatMul{M: 2, N: 2, K: 2, A: small, B: nil, C: small}, "needs buffers"},
		{MatMul{M: 2, N: 2, K: 2, A: small, B: small, C: small, LDA: 1}, "leading dimensions"},
	}
	for _, c := range cases {
		if err := rec.MatMul(c.p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("MatMul(%+v): error %v, want one containing %q", c.p, err, c.want)
		}
	}
}

// TestMatMulLayout checks the default leading dimensions and batch strides that the
// shaders and the engine both take from layout: dense rows of each operand as stored,
// and no stride for a broadcast operand.
func TestMatMulLayout(t *testing.T) {
	const m, n, k = 3, 5, 7
	for _, c := range []struct {
		p                MatMul
		lda, ldb, ldc    int
		sA, sB, sC, nBat int
	}{
		{MatMul{M: m, N: n, K: k}, k, n, n, m * k, k * n, m * n, 1},
		{MatMul{M: m, N: n, K: k, TransA: true}, m, n, n, k * m, k * n, m * n, 1},
		{MatMul{M: m, N: n, K: k, TransB: true}, k, k, n, m * k, n * k, m * n, 1},
		{MatMul{M: m, N: n, K: k, TransA: true, TransB: true, Batch: 2}, m, k, n, k * m, n * k, m * n, 2},
		{MatMul{M: m, N: n, K: k, Batch: 4, BroadcastA: true}, k, n, n, 0, k * n, m * n, 4},
		{MatMul{M: m, N: n, K: k, Batch: 4, BroadcastB: true}, k, n, n, m * k, 0, m * n, 4},
		{MatMul{M: m, N: n, K: k, LDA: 9, LDB: 6, LDC: 8}, 9, 6, 8, m * 9, k * 6, m * 8, 1},
	} {
		q := c.p
		sA, sB, sC, err := q.layout()
		if err != nil {
			t.Fatalf("layout(%+v): %v", c.p, err)
		}
		if got, want := [7]int{q.LDA, q.LDB, q.LDC, sA, sB, sC, q.Batch}, [7]int{c.lda, c.ldb, c.ldc, c.sA, c.sB, c.sC, c.nBat}; got != want {
			t.Errorf("layout(%+v): lda, ldb, ldc, sA, sB, sC, batch = %v, want %v", c.p, got, want)
		}
	}
}

// TestCoopMat2Choice checks when the workgroup-scope shader is chosen, on a described
// device rather than a real one (lavapipe has no cooperative matrices).
func TestCoopMat2Choice(t *testing.T) {
	h200 := Info{Name: "cm2 device", CoopMat2MaxWorkgroup: 256, CoopMat2MaxDimension: 1024, apiVersion: vk.MakeVersion(1, 3, 0), BF16: true}
	plain := Info{Name: "plain device", apiVersion: vk.MakeVersion(1, 3, 0)}
	big := MatMul{M: 4096, N: 4096, K: 64, Batch: 1, Input: F16}
	with := func(p MatMul, f func(*MatMul)) MatMul { f(&p); return p }
	cases := []struct {
		name string
		in   Info
		p    MatMul
		push mmPush
		want string // shader name, "" for the subgroup-scope path
		err  string
	}{
		{"big product", h200, big, mmPush{}, "matmul_cm2_f16_128x128x32_t128", ""},
		{"big bf16", h200, with(big, func(p *MatMul) { p.Input = BF16 }), mmPush{}, "matmul_cm2_bf16_128x128x32_t128", ""},
		{"small product", h200, with(big, func(p *MatMul) { p.M, p.N = 1024, 1024 }), mmPush{}, "", ""},
		{"tile asked", h200, with(big, func(p *MatMul) { p.Tile = &tileCoop }), mmPush{}, "", ""},
		{"subgroup shader asked", h200, with(big, func(p *MatMul) { p.Shader = "matmul_coop_f16_16x8x16" }), mmPush{}, "", ""},
		{"no cm2 on the device", plain, big, mmPush{}, "", ""},
		{"unaligned A", h200, big, mmPush{offA: 4}, "", ""},
		{"forced at small size", h200, with(big, func(p *MatMul) { p.M, p.Shader = 64, "matmul_cm2_f16_128x128x32_t128" }), mmPush{}, "matmul_cm2_f16_128x128x32_t128", ""},
		{"forced without cm2", plain, with(big, func(p *MatMul) { p.Shader = "matmul_cm2_f16_128x128x32_t128" }), mmPush{}, "", "lacks VK_NV_cooperative_matrix2"},
		{"forced other type", h200, with(big, func(p *MatMul) { p.Shader = "matmul_cm2_bf16_128x128x32_t128" }), mmPush{}, "", "not for f16"},
		{"forced unknown", h200, with(big, func(p *MatMul) { p.Shader = "matmul_cm2_f16_64x64x16" }), mmPush{}, "", "no such shader"},
		{"forced unaligned C", h200, with(big, func(p *MatMul) { p.Shader = "matmul_cm2_f16_128x128x32_t128" }), mmPush{offC: 2}, "", "16-byte boundaries"},
	}
	for _, c := range cases {
		conf, err := coopMat2Shader(c.in, c.p, c.push)
		name := ""
		if conf.Elem != "" {
			name = conf.Name()
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: error %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
		case name != c.want:
			t.Errorf("%s: shader %q, want %q", c.name, name, c.want)
		}
	}
}

// TestMixedPrecisionChoice checks which f32 products that allow half precision are
// rounded, on described devices: only big ones, and only where cooperative matrices
// multiply the type.
func TestMixedPrecisionChoice(t *testing.T) {
	f16 := CoopMatShape{M: 16, N: 8, K: 16, A: "f16", B: "f16", C: "f32", Result: "f32", SubgroupScope: true}
	coop := &Device{Info: Info{Name: "coop device", SubgroupSize: 32, CoopMatNV: []CoopMatShape{f16}}}
	plain := &Device{Info: Info{Name: "plain device", SubgroupSize: 32}}
	product := func(precision tensor.DType, batch, m, n, k int) *tensor.Node {
		g := tensor.NewGraph()
		a, b := g.Input("a", tensor.F32, batch, m, k), g.Input("b", tensor.F32, k, n)
		return tensor.MatMulWith(a, b, tensor.MatMulAttr{Precision: precision})
	}
	cases := []struct {
		name string
		d    *Device
		n    *tensor.Node
		want tensor.DType
	}{
		{"big bf16", coop, product(tensor.BF16, 1, 1024, 4096, 4096), tensor.BF16},
		{"big f16", coop, product(tensor.F16, 1, 1024, 4096, 4096), tensor.F16},
		{"f32 asked", coop, product(tensor.F32, 1, 1024, 4096, 4096), tensor.F32},
		{"small", coop, product(tensor.BF16, 1, 2048, 512, 128), tensor.F32},
		{"big through its batch", coop, product(tensor.BF16, 8, 1024, 512, 128), tensor.BF16},
		{"no cooperative matrices", plain, product(tensor.BF16, 1, 1024, 4096, 4096), tensor.F32},
	}
	for _, c := range cases {
		p, ok := matMulPlan(c.n)
		if !ok {
			t.Fatalf("%s: no plan", c.name)
		}
		if got := mixedPrecision(c.d, c.n, p); got != c.want {
			t.Errorf("%s: rounded to %s, want %s", c.name, got, c.want)
		}
	}
}

// TestPipelineReports reads the driver's statistics where the device can give them,
// and otherwise expects an error that says why not.
func TestPipelineReports(t *testing.T) {
	d := openTest(t)
	if _, err := d.Kernel("elementwise", 3, 64); err != nil {
		t.Fatal(err)
	}
	reports, err := d.PipelineReports()
	switch {
	case !d.Info.extensions[pipelineStatsExt]:
		if err == nil || !strings.Contains(err.Error(), pipelineStatsExt) {
			t.Errorf("%s has no %s: error %v, want one naming it", d.Info.Name, pipelineStatsExt, err)
		}
	case !pipelineStatsWanted():
		if err == nil || !strings.Contains(err.Error(), "GML_VK_PIPELINE_STATS=1") {
			t.Errorf("statistics not asked for: error %v, want one naming GML_VK_PIPELINE_STATS=1", err)
		}
	case err != nil:
		t.Fatal(err)
	case len(reports) == 0 || len(reports[0].Stats) == 0:
		t.Errorf("no statistics for the kernel built: %v", reports)
	default:
		t.Logf("%s", reports[0])
	}
}

func TestPipelineReportString(t *testing.T) {
	r := PipelineReport{Kernel: "matmul_f32[256 128]", Executable: "CS", Stats: []PipelineStat{{Name: "Register Count", Value: "128"}, {Name: "Binary Size", Value: "41344"}}}
	if got, want := r.String(), "matmul_f32[256 128] [CS] Register_Count=128 Binary_Size=41344"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestCapabilities reports, one subtest per device capability the shaders use, which
// ones this machine has: an absent one is a SKIP naming what did not run here, so a CI
// summary built from the SKIP events lists the coverage a green run lacks.
func TestCapabilities(t *testing.T) {
	d := openTest(t)
	info := d.Info
	_, subgroupErr := coopShader(info, F16)
	cm2 := false
	for _, c := range shaders.Generated {
		_, err := coopMat2Shader(info, MatMul{M: 1, N: 1, Batch: 1, Input: F16, Shader: c.Name()}, mmPush{})
		cm2 = cm2 || err == nil
	}
	caps := []struct {
		name, runs string
		ok         bool
	}{
		{"fp16_arithmetic", "f16 arithmetic in shaders", info.FP16},
		{"cooperative_matrix_nv", "the f16/bf16 subgroup-scope matmul shaders (matmul_coop)", subgroupErr == nil},
		{"cooperative_matrix2", "the workgroup-scope matmul shaders (shaders/cm2)", cm2},
		{"bf16_cooperative_matrix", "native bf16 in the workgroup-scope shaders", cm2 && info.BF16},
		{"timestamps", "per-op GPU timings in profiles", info.TimestampPeriod > 0},
	}
	for _, c := range caps {
		t.Run(c.name, func(t *testing.T) {
			if !c.ok {
				t.Skipf("%s lacks it: %s did not run on this machine", info.Name, c.runs)
			}
			t.Logf("%s has it: %s ran", info.Name, c.runs)
		})
	}
}
