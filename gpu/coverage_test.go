package gpu

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// expectedGaps reads testdata/ops_without_shader.txt.
func expectedGaps(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("testdata/ops_without_shader.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, ok := tensor.OpByName(line); !ok {
			t.Errorf("testdata/ops_without_shader.txt names %q, which is not an engine op", line)
		}
		names = append(names, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// TestOpsWithoutShader lists the engine ops that have no shader (they run on the CPU)
// and checks the list against testdata/ops_without_shader.txt, so that a new gap, or a
// gap closed without updating the list, is noticed. It needs no device.
func TestOpsWithoutShader(t *testing.T) {
	var missing []string
	computing := 0
	for o := tensor.Op(1); int(o) < tensor.NumOps; o++ {
		if o.Kind() == tensor.KindSource {
			continue
		}
		computing++
		if _, ok := ops[o]; !ok {
			missing = append(missing, o.String())
		}
	}
	slices.Sort(missing)
	t.Logf("%d of %d computing engine ops lack a Vulkan shader: %v", len(missing), computing, missing)
	want := expectedGaps(t)
	for _, m := range missing {
		if !slices.Contains(want, m) {
			t.Errorf("op %s has no shader but is not in testdata/ops_without_shader.txt", m)
		}
	}
	for _, w := range want {
		if !slices.Contains(missing, w) {
			t.Errorf("op %s has a shader now: remove it from testdata/ops_without_shader.txt", w)
		}
	}
}

// TestFallbackRunsOnCPU compiles a graph through the runtime on the Vulkan backend after
// taking CumSum's shader away (so the test does not depend on which ops still lack
// one): the scheduler must run that node on the CPU, count the fallback, and give the
// CPU backend's result.
func TestFallbackRunsOnCPU(t *testing.T) {
	openBackend(t).Close()
	saved, ok := ops[tensor.OpCumSum]
	if !ok {
		t.Fatal("cumsum has no shader to take away")
	}
	delete(ops, tensor.OpCumSum)
	defer func() { ops[tensor.OpCumSum] = saved }()

	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 5, 7)
	c := tensor.CumSum(tensor.Exp(x), 1, false, false)
	y := tensor.Sum(tensor.Mul(c, x), []int{1}, false)
	data := make([]float32, 35)
	for i := range data {
		data[i] = float32(i%9)/9 - 0.4
	}
	xt, err := tensor.FromFloat32s(tensor.Shape{5, 7}, data)
	if err != nil {
		t.Fatal(err)
	}
	feeds := map[*tensor.Node]*tensor.Tensor{x: xt}
	want, err := cputest.Run([]*tensor.Node{y}, feeds)
	if err != nil {
		t.Fatal(err)
	}

	rt, err := runtime.New(runtime.Device("gpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.Backend() != "vulkan" {
		t.Fatalf("runtime picked %q, want the Vulkan backend", rt.Backend())
	}
	exe, err := rt.Compile([]*tensor.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Free()
	if fb := exe.Fallbacks(); len(fb) != 1 || fb[0] != c {
		t.Errorf("fallbacks %v, want just %v", fb, c)
	}
	if n := rt.Stats().Fallbacks; n != 1 {
		t.Errorf("runtime counted %d fallbacks, want 1", n)
	}
	got, err := exe.Run(feeds)
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(got[0].Float32s(), want[0].Float32s()); e > 1e-6 {
		t.Errorf("GPU graph with a CPU fallback: relative error %.3g against the CPU", e)
	}
}
