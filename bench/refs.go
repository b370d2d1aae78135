package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// reference is one figure ours is compared with.
type reference struct {
	name     string  // what it is: "openblas", "pytorch_eager_cpu", "gml native (base.jsonl)"
	threads  int     // CPU threads it used; 0 for a GPU figure
	value    float64 // in the unit of our figure
	unit     string  // "" when the file does not say
	hardware string  // the device it was measured on, when only that device is comparable ("H200")
}

// refKey identifies the figure a reference stands beside: a CPU figure needs the same
// thread count, a GPU figure has threads 0.
type refKey struct {
	bench, caseName, device string // device: "cpu" or "gpu"
	threads                 int
}

// references are the figures of one reference file.
type references struct {
	file string
	refs map[refKey]reference
}

// deviceKind maps a result's device field to "cpu" or "gpu".
func deviceKind(device string) string {
	if device == "cpu" {
		return "cpu"
	}
	return "gpu"
}

// readReferences reads a file of JSON lines holding any of:
//   - gml bench's own output (an earlier run: a baseline), keyed by bench, case,
//     device kind and threads;
//   - PyTorch's CPU training steps (name train_step_cpu: bench_torch_cpu.py, and
//     ../shared/anchors/pytorch_cpu_xeon.jsonl), keyed by workload and threads, whose
//     ms is the step with the loss read back (the script calls loss.item());
//   - ONNX Runtime's CPU inference times (../shared/anchors/ort_cpu_2threads.jsonl) and
//     PyTorch's eager inference times on the H200 (pytorch_h200_infer.jsonl), keyed by
//     model (bench onnx);
//   - PyTorch's H200 figures (../shared/anchors/pytorch_h200.jsonl): training steps,
//     compared by ms_with_loss_read since our step reads the loss (lines without it are
//     left out), and untransposed non-TF32 matmul TFLOP/s. These are comparable only
//     on an H200.
//
// Other objects (accuracies, inference times) and lines that are not objects are
// skipped; an object that does not parse is an error naming its line.
func readReferences(path string) (*references, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rs := &references{file: path, refs: map[refKey]reference{}}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(text, "{") {
			continue // the anchor files keep the measuring script's other output (warnings, "DONE")
		}
		if err := rs.add([]byte(text)); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rs, nil
}

// refLine is the union of the fields of the formats readReferences accepts.
type refLine struct {
	// gml bench output.
	Bench   string  `json:"bench"`
	Case    string  `json:"case"`
	Device  string  `json:"device"`
	Impl    string  `json:"impl"`
	Threads int     `json:"threads"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	// PyTorch anchors.
	Name           string   `json:"name"`
	Workload       string   `json:"workload"`
	MS             float64  `json:"ms"`
	MSWithLossRead *float64 `json:"ms_with_loss_read"`
	DType          string   `json:"dtype"`
	TF32           bool     `json:"tf32"`
	N              int      `json:"n"`
	TFLOPs         float64  `json:"tflops"`
	Torch          string   `json:"torch"`
	// ONNX Runtime's inference times (ort_cpu_2threads.jsonl) and PyTorch's
	// (pytorch_h200_infer.jsonl).
	Ref      string  `json:"ref"`
	MSPerRun float64 `json:"ms_per_run"`
	Model    string  `json:"model"`
	Mode     string  `json:"mode"`
}

func (rs *references) add(line []byte) error {
	var l refLine
	if err := json.Unmarshal(line, &l); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	put := func(k refKey, r reference) {
		if r.value > 0 && !math.IsInf(r.value, 0) {
			rs.refs[k] = r
		}
	}
	switch {
	case l.Bench == "onnx" && l.MSPerRun > 0:
		put(refKey{"onnx", l.Case, deviceKind(l.Device), l.Threads}, reference{name: l.Ref, threads: l.Threads, value: l.MSPerRun, unit: "ms/run"})
	case l.Name == "infer" && l.Mode == "eager":
		// PyTorch eager on the H200 is the bar (its CUDA-graph replay, the aim, is
		// not a reference line).
		put(refKey{"onnx", l.Model, "gpu", 0}, reference{name: "pytorch_eager_h200", value: l.MS, unit: "ms/run", hardware: "H200"})
	case l.Bench != "":
		name := "gml"
		if l.Impl != "" {
			name += " " + l.Impl
		}
		ref := reference{name: fmt.Sprintf("%s (%s)", name, filepath.Base(rs.file)), threads: l.Threads, value: l.Value, unit: l.Unit}
		if kind := deviceKind(l.Device); kind == "gpu" && l.Device != "gpu" {
			ref.hardware = l.Device // a GPU figure compares only with the same GPU
		}
		put(refKey{l.Bench, l.Case, deviceKind(l.Device), l.Threads}, ref)
	case l.Name == "train_step_cpu":
		name := "pytorch_eager_cpu"
		if l.Torch != "" {
			name += " " + l.Torch
		}
		put(refKey{"nn", l.Workload, "cpu", l.Threads}, reference{name: name, threads: l.Threads, value: l.MS, unit: "ms/step"})
	case l.Name == "train_step" && l.MSWithLossRead != nil:
		put(refKey{"nn", l.Workload, "gpu", 0}, reference{name: "pytorch_eager_h200", value: *l.MSWithLossRead, unit: "ms/step", hardware: "H200"})
	case l.Name == "matmul":
		t := map[string]string{"torch.float32": "f32", "torch.float16": "f16", "torch.bfloat16": "bf16"}[l.DType]
		if l.TF32 && t == "f32" {
			t = "tf32"
		}
		if t != "" {
			put(refKey{"gpu-matmul", fmt.Sprintf("%s_n%d", t, l.N), "gpu", 0},
				reference{name: "pytorch_h200", value: l.TFLOPs, unit: "TFLOP/s", hardware: "H200"})
		}
	}
	return nil
}

// lookup returns the reference for r (by its bench, case, device and threads), or
// why there is none. hardware is the name of the device r ran on.
func (rs *references) lookup(r result, caseName, hardware string) (reference, error) {
	if rs == nil {
		return reference{}, fmt.Errorf("no reference file")
	}
	k := refKey{r.Bench, caseName, deviceKind(r.Device), r.Threads}
	ref, ok := rs.refs[k]
	if !ok {
		if k.device == "cpu" {
			return reference{}, fmt.Errorf("%s has no %s %s figure at %d threads", rs.file, k.bench, caseName, k.threads)
		}
		return reference{}, fmt.Errorf("%s has no %s %s figure", rs.file, k.bench, caseName)
	}
	if ref.unit != "" && ref.unit != r.Unit {
		return reference{}, fmt.Errorf("%s gives %s %s in %s, not %s", rs.file, k.bench, caseName, ref.unit, r.Unit)
	}
	if ref.hardware != "" && !strings.Contains(hardware, ref.hardware) {
		return reference{}, fmt.Errorf("%s was measured on an %s, not on %s", ref.name, ref.hardware, hardware)
	}
	return ref, nil
}

// anchorFile is ../shared/anchors/NAME beside the repository that holds the working
// directory: where the measured PyTorch figures are kept.
func anchorFile(name string) string { return sharedPath("anchors", name) }

// sharedPath is ../shared/PATH... beside the repository that holds the working
// directory.
func sharedPath(parts ...string) string {
	dir, _ := os.Getwd()
	for dir != "/" && dir != "." {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(append([]string{dir, "..", "shared"}, parts...)...)
		}
		dir = filepath.Dir(dir)
	}
	return filepath.Join(append([]string{"..", "shared"}, parts...)...)
}

// round rounds v to digits decimals.
func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
