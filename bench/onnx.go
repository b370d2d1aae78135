package bench

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gml-dev/gml/onnx"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
)

func init() {
	register("onnx", "ONNX model inference time (ms) per model of ../shared/onnx/models against ONNX Runtime (CPU) or PyTorch (H200)", benchONNX)
}

// benchONNX loads every model under -dir (the backend-test layout), runs it on the
// inputs of its first data set and prints the time of one inference: inputs kept on
// the device (as ONNX Runtime binds the caller's memory and PyTorch's GPU figures feed
// tensors already on the GPU), outputs downloaded.
func benchONNX(args []string) error {
	fs := flag.NewFlagSet("bench onnx", flag.ContinueOnError)
	device := fs.String("device", "cpu", "cpu or gpu")
	dir := fs.String("dir", sharedPath("onnx", "models"), "directory of models (NAME/model.onnx + NAME/test_data_set_0)")
	minTime := fs.Duration("time", time.Second, "least time measured per model")
	only := fs.String("case", "", "run only this model")
	refFile := fs.String("ref", "", "reference file (JSON lines); default: ../shared/anchors/ort_cpu_2threads.jsonl on the CPU (compared at the same thread count), pytorch_h200_infer.jsonl on the GPU (compared only on an H200)")
	profile := fs.Bool("profile", false, "print a per-op profile of the timed runs to stderr (profiling slows them)")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile (go tool pprof) of the timed runs to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *device != "cpu" && *device != "gpu" {
		return fmt.Errorf("-device %q: want cpu or gpu", *device)
	}
	cases, err := onnx.FindCases(*dir)
	if err != nil {
		return err
	}
	if *only != "" {
		cases = slices.DeleteFunc(cases, func(c string) bool { return filepath.Base(c) != *only })
		if len(cases) == 0 {
			return fmt.Errorf("-case %q: no such model under %s", *only, *dir)
		}
	}
	hardware, err := deviceName(*device)
	if err != nil {
		return err
	}
	threads := 0
	path := *refFile
	if *device == "cpu" {
		threads = parallel.Workers()
		if path == "" {
			path = anchorFile("ort_cpu_2threads.jsonl")
		}
	} else if path == "" {
		path = anchorFile("pytorch_h200_infer.jsonl")
	}
	refs, err := readReferences(path)
	if err != nil {
		if *refFile != "" {
			return fmt.Errorf("-ref: %w", err)
		}
		fmt.Fprintf(os.Stderr, "gml bench onnx: no reference figures (%v); printing times alone\n", err)
	}
	stop, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	defer stop()
	for _, c := range cases {
		name := filepath.Base(c)
		ms, err := timeInference(c, *device, *minTime, *profile)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		r := result{Bench: "onnx", Case: name, Device: *device, Threads: threads, Value: round(ms, 4), Unit: "ms/run"}
		if ref, err := refs.lookup(r, name, hardware); err != nil {
			if refs != nil {
				fmt.Fprintf(os.Stderr, "gml bench onnx: %s: no ratio: %v\n", name, err)
			}
		} else {
			ref.value = round(ref.value, 4)
			r.compare(ref)
		}
		emit(r)
	}
	return nil
}

// timeInference loads a model, warms it up and returns the best, over five batches of
// runs taking at least minTime in all, of the mean time of one inference.
func timeInference(dir, device string, minTime time.Duration, profile bool) (float64, error) {
	m, err := onnx.Load(filepath.Join(dir, "model.onnx"), onnx.Device(device))
	if err != nil {
		return 0, err
	}
	defer m.Close()
	feeds := map[string]any{}
	for k, in := range m.Inputs() {
		a, err := onnx.ReadArray(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", k)))
		if err != nil {
			return 0, err
		}
		m.Runtime().Keep(a.Tensor())
		feeds[in.Name] = a
	}
	for range 3 {
		if _, err := m.Run(feeds); err != nil {
			return 0, err
		}
	}
	if profile {
		m.Runtime().Profile(true)
		defer func() {
			fmt.Fprintf(os.Stderr, "%s on %s:\n%s\n", filepath.Base(dir), device, m.Runtime().ProfileReport())
			m.Runtime().Profile(false)
		}()
	}
	best := 0.0
	for range 5 {
		start := time.Now()
		runs := 0
		for time.Since(start) < minTime/5 || runs < 3 {
			if _, err := m.Run(feeds); err != nil {
				return 0, err
			}
			runs++
		}
		ms := float64(time.Since(start).Microseconds()) / 1000 / float64(runs)
		if best == 0 || ms < best {
			best = ms
		}
	}
	return best, nil
}
