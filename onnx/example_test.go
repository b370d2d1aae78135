package onnx_test

import (
	"fmt"
	"path/filepath"

	"github.com/gml-dev/gml/onnx"
)

// Load a model exported from PyTorch, run it on its reference input and check the
// result against ONNX Runtime's. It prints
//
//	x: float32[4 784] -> 8: float32[4 10]
//	float32 [4 10] <nil>
//
// The model lies in ../shared, which a user's clone may lack, so go test compiles this
// example without running it; TestSharedModels runs the same check and skips without ../shared.
func Example() {
	dir := "../../shared/onnx/models/mlp"
	m, err := onnx.Load(filepath.Join(dir, "model.onnx"), onnx.Device("cpu"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	fmt.Println(m.Inputs()[0], "->", m.Outputs()[0])

	x, _ := onnx.ReadArray(filepath.Join(dir, "test_data_set_0", "input_0.pb"))
	out, err := m.Run(map[string]any{m.Inputs()[0].Name: x})
	if err != nil {
		fmt.Println(err)
		return
	}
	want, _ := onnx.ReadArray(filepath.Join(dir, "test_data_set_0", "output_0.pb"))
	y := out[m.Outputs()[0].Name]
	fmt.Println(y.DataType(), y.Shape(), onnx.Compare(y, want, onnx.DefaultTolerance))
}
