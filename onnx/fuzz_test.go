package onnx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// FuzzDecode feeds mutated model files to the loader, and runs those that load on
// zero inputs: neither may panic, and neither may fail with an internal error (a
// lowering or kernel bug turned into an error). CI runs it briefly:
// go test ./onnx -run '^$' -fuzz '^FuzzDecode$' -fuzztime 20s.
func FuzzDecode(f *testing.F) {
	f.Add(newModel(17).input("x", Float, 2, 3).output("y", Float).node("Relu", []string{"x"}, []string{"y"}).bytes(f))
	f.Add(newModel(17).input("x", Float, 2, 3).output("y", Int64).node("NonZero", []string{"x"}, []string{"y"}).bytes(f))
	f.Add(newModel(13).input("x", Float, 1, 2, 5, 5).output("y", Float).
		node("Shape", []string{"x"}, []string{"s"}).
		node("ConstantOfShape", []string{"s"}, []string{"z"}).
		node("Add", []string{"x", "z"}, []string{"a"}).
		node("MaxPool", []string{"a"}, []string{"y"}, attrInts("kernel_shape", 2, 2), attrInt("ceil_mode", 1)).bytes(f))
	for _, name := range []string{"cnn_mnist", "text_lstm_gru"} {
		if data, err := os.ReadFile(filepath.Join(sharedModels, name, "model.onnx")); err == nil {
			f.Add(data)
		}
	}
	for _, name := range []string{"test_gather_0", "test_resize_upsample_scales_linear", "test_einsum_batch_diagonal", "test_slice_neg_steps"} {
		if data, err := os.ReadFile(filepath.Join(sharedNode, name, "model.onnx")); err == nil {
			f.Add(data)
		}
	}
	rt := cpuRuntime(f)
	saved := maxElements
	maxElements = 1 << 20 // mutated dimensions must not ask for gigabytes
	defer func() { maxElements = saved }()
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, Runtime(rt))
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatal(err)
			}
			return
		}
		defer m.Close()
		feeds := map[string]any{}
		for _, in := range m.graph.inputs {
			s, ok := in.staticShape()
			if !ok {
				return
			}
			n, err := checkedSize(s)
			if err != nil || n > 1<<16 {
				return
			}
			feeds[in.name] = &Array{dtype: in.dtype, t: tensor.New(in.dtype.Carrier(), s...)}
		}
		if _, err := m.Run(feeds); err != nil && (strings.Contains(err.Error(), "internal error") || strings.Contains(err.Error(), "panicked")) {
			t.Fatal(err)
		}
	})
}
