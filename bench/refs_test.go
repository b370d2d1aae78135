package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReferences(t *testing.T) {
	file := filepath.Join(t.TempDir(), "refs.jsonl")
	lines := []string{
		`{"name": "train_step_cpu", "workload": "mlp784_b32", "threads": 2, "ms": 1.25, "torch": "2.11.0"}`,
		`{"name": "train_step_cpu", "workload": "mlp784_b32", "threads": 16, "ms": 0.95, "torch": "2.11.0"}`,
		`{"name": "train_step", "workload": "mlp784_b32", "ms": 1.2, "ms_with_loss_read": 1.5}`,
		`{"name": "train_step", "workload": "cnn28_b64", "ms": 2.0}`,
		`{"name": "matmul", "dtype": "torch.float16", "tf32": false, "n": 4096, "ms": 0.2, "tflops": 648.7}`,
		`{"name": "matmul", "dtype": "torch.float32", "tf32": true, "n": 4096, "ms": 0.4, "tflops": 343.4}`,
		`{"bench":"matmul","case":"f32_n1024","device":"cpu","impl":"native","threads":2,"value":126,"unit":"GFLOP/s"}`,
		`{"bench":"gpu-matmul","case":"f32_n4096","device":"NVIDIA H200","value":37.8,"unit":"TFLOP/s"}`,
		`{"bench":"onnx","case":"squeezenet1_1","device":"cpu","threads":2,"ref":"onnxruntime-node 1.30.0","ms_per_run":3.8247}`,
		`{"name": "infer", "model": "resnet_small", "mode": "eager", "ms": 0.674, "torch": "2.11.0+cu130"}`,
		`{"name": "infer", "model": "resnet_small", "mode": "cudagraph", "ms": 0.141, "torch": "2.11.0+cu130"}`,
		`UserWarning: a line of the script's other output`,
		`DONE`,
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := readReferences(file)
	if err != nil {
		t.Fatal(err)
	}
	const xeon, h200, lavapipe = "Intel Xeon", "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)"
	for _, c := range []struct {
		name     string
		r        result
		caseName string
		hardware string
		want     string // reference name, "" for none
		value    float64
	}{
		{"cpu step at 2 threads", result{Bench: "nn", Device: "cpu", Threads: 2, Unit: "ms/step"}, "mlp784_b32", xeon, "pytorch_eager_cpu 2.11.0", 1.25},
		{"cpu step at 16 threads", result{Bench: "nn", Device: "cpu", Threads: 16, Unit: "ms/step"}, "mlp784_b32", xeon, "pytorch_eager_cpu 2.11.0", 0.95},
		{"cpu step at another thread count", result{Bench: "nn", Device: "cpu", Threads: 4, Unit: "ms/step"}, "mlp784_b32", xeon, "", 0},
		{"gpu step: with the loss read", result{Bench: "nn", Device: "gpu", Unit: "ms/step"}, "mlp784_b32", h200, "pytorch_eager_h200", 1.5},
		{"gpu step on another GPU", result{Bench: "nn", Device: "gpu", Unit: "ms/step"}, "mlp784_b32", lavapipe, "", 0},
		{"gpu step without a loss-read figure", result{Bench: "nn", Device: "gpu", Unit: "ms/step"}, "cnn28_b64", h200, "", 0},
		{"cpu step never takes a gpu figure", result{Bench: "nn", Device: "cpu", Threads: 2, Unit: "ms/step"}, "cnn28_b64", xeon, "", 0},
		{"gpu matmul", result{Bench: "gpu-matmul", Device: h200, Unit: "TFLOP/s"}, "f16_n4096", h200, "pytorch_h200", 648.7},
		{"tf32 figures are not f32 ones", result{Bench: "gpu-matmul", Device: h200, Unit: "TFLOP/s"}, "f32_n4096_pytorch", h200, "", 0},
		{"earlier gml cpu run", result{Bench: "matmul", Device: "cpu", Threads: 2, Unit: "GFLOP/s"}, "f32_n1024", xeon, "gml native (refs.jsonl)", 126},
		{"earlier gml run, other unit", result{Bench: "matmul", Device: "cpu", Threads: 2, Unit: "ms"}, "f32_n1024", xeon, "", 0},
		{"earlier gml gpu run on the same GPU", result{Bench: "gpu-matmul", Device: h200, Unit: "TFLOP/s"}, "f32_n4096", h200, "gml (refs.jsonl)", 37.8},
		{"onnx runtime on the cpu", result{Bench: "onnx", Device: "cpu", Threads: 2, Unit: "ms/run"}, "squeezenet1_1", xeon, "onnxruntime-node 1.30.0", 3.8247},
		{"onnx runtime at another thread count", result{Bench: "onnx", Device: "cpu", Threads: 1, Unit: "ms/run"}, "squeezenet1_1", xeon, "", 0},
		{"pytorch eager inference on the H200", result{Bench: "onnx", Device: "gpu", Unit: "ms/run"}, "resnet_small", h200, "pytorch_eager_h200", 0.674},
		{"pytorch inference on another GPU", result{Bench: "onnx", Device: "gpu", Unit: "ms/run"}, "resnet_small", lavapipe, "", 0},
		{"earlier gml gpu run on another GPU", result{Bench: "gpu-matmul", Device: lavapipe, Unit: "TFLOP/s"}, "f32_n4096", lavapipe, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ref, err := rs.lookup(c.r, c.caseName, c.hardware)
			if c.want == "" {
				if err == nil {
					t.Fatalf("got reference %+v, want none", ref)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ref.name != c.want || ref.value != c.value {
				t.Fatalf("got %q %g, want %q %g", ref.name, ref.value, c.want, c.value)
			}
			r := c.r
			r.Value = 2 * c.value
			r.compare(ref)
			if r.Ratio != 2 || r.RefValue != c.value || r.Ref != c.want {
				t.Fatalf("compare gave %+v", r)
			}
		})
	}
	var none *references
	if _, err := none.lookup(result{Bench: "nn"}, "x", h200); err == nil {
		t.Error("a missing reference file gave a reference")
	}
}

func TestReferencesBadLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(file, []byte("{\"bench\":\"nn\"}\n{\"bench\": nope}\n"), 0o644)
	if _, err := readReferences(file); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2") {
		t.Fatalf("got %v, want an error naming line 2", err)
	}
}

// The shared anchor files parse and hold what the benchmarks compare with.
func TestAnchorFiles(t *testing.T) {
	for _, c := range []struct {
		file string
		key  refKey
	}{
		{"pytorch_h200.jsonl", refKey{"nn", "mlp784_b32", "gpu", 0}},
		{"pytorch_h200.jsonl", refKey{"gpu-matmul", "f32_n4096", "gpu", 0}},
		{"pytorch_cpu_xeon.jsonl", refKey{"nn", "transformer_d128_h8_L4_seq64_b32", "cpu", 16}},
		{"ort_cpu_2threads.jsonl", refKey{"onnx", "squeezenet1_1", "cpu", 2}},
		{"pytorch_h200_infer.jsonl", refKey{"onnx", "resnet_small", "gpu", 0}},
	} {
		path := filepath.Join("..", "..", "shared", "anchors", c.file)
		if _, err := os.Stat(path); err != nil {
			t.Skipf("no anchors beside the repository: %v", err)
		}
		rs, err := readReferences(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := rs.refs[c.key]; !ok {
			t.Errorf("%s: no figure for %+v", c.file, c.key)
		}
	}
	for _, w := range nnWorkloads {
		rs, err := readReferences(filepath.Join("..", "..", "shared", "anchors", "pytorch_cpu_xeon.jsonl"))
		if err != nil {
			t.Skip(err)
		}
		if _, ok := rs.refs[refKey{"nn", w.name, "cpu", 2}]; !ok {
			t.Errorf("pytorch_cpu_xeon.jsonl has no 2-thread figure for workload %s", w.name)
		}
	}
}
