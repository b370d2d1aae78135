package onnx

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gml-dev/gml/onnx/internal/onnxpb"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
	"google.golang.org/protobuf/proto"
)

// TestLoadErrors checks that bad models fail with an error naming the problem (and
// the node, op and opset when a node is at fault), never a panic.
func TestLoadErrors(t *testing.T) {
	good := newModel(17).input("x", Float, 2).output("y", Float).node("Relu", []string{"x"}, []string{"y"}).bytes(t)
	cases := []struct {
		name        string
		data        []byte
		want        []string
		unsupported bool
	}{
		{"empty graph file", []byte{}, []string{"no graph"}, false},
		{"truncated", good[:len(good)/2], []string{"not an ONNX model"}, false},
		{"garbage", []byte("\xff\xff\xff\xff garbage"), []string{"not an ONNX model"}, false},
		{"unknown op", newModel(17).input("x", Float, 2).output("y", Float).node("Frobnicate", []string{"x"}, []string{"y"}).bytes(t),
			[]string{`node "Frobnicate_y"`, "Frobnicate", "opset 17", "not supported"}, true},
		{"other domain", func() []byte {
			b := newModel(17).input("x", Float, 2).output("y", Float).node("Relu", []string{"x"}, []string{"y"})
			b.m.Graph.Node[0].Domain = proto.String("com.example")
			b.m.OpsetImport = append(b.m.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String("com.example"), Version: proto.Int64(1)})
			return b.bytes(t)
		}(), []string{"com.example.Relu", "not supported"}, true},
		{"unimported domain", func() []byte {
			b := newModel(17).input("x", Float, 2).output("y", Float).node("Relu", []string{"x"}, []string{"y"})
			b.m.Graph.Node[0].Domain = proto.String("com.example")
			return b.bytes(t)
		}(), []string{"not imported"}, false},
		{"unsupported attribute", newModel(17).input("x", Float, 2).output("y", Float).node("Relu", []string{"x"}, []string{"y"}, attrInt("frob", 1)).bytes(t),
			[]string{`attribute "frob"`, "Relu", "opset 17"}, true},
		{"string input", newModel(17).input("x", String, 2).output("y", String).node("Identity", []string{"x"}, []string{"y"}).bytes(t),
			[]string{"string", "not supported"}, true},
		{"bad attribute value", newModel(17).input("x", Float, 1, 2, 4, 4).output("y", Float).
			node("MaxPool", []string{"x"}, []string{"y"}, attrInts("kernel_shape", 9, 9)).bytes(t),
			[]string{"MaxPool", "opset 17"}, false},
		{"shape mismatch", newModel(17).input("a", Float, 2, 3).input("b", Float, 4, 5).output("y", Float).
			node("MatMul", []string{"a", "b"}, []string{"y"}).bytes(t), []string{"MatMul", "opset 17", "matmul"}, false},
		{"undefined value", newModel(17).input("x", Float, 2).output("y", Float).node("Add", []string{"x", "nope"}, []string{"y"}).bytes(t),
			[]string{`"nope" is not defined`}, false},
		{"op newer than the opset", newModel(9).input("x", Float, 2).output("y", Float).node("Mod", []string{"x", "x"}, []string{"y"}, attrInt("fmod", 1)).bytes(t),
			[]string{"Mod", "opset 9", "before opset 10"}, true},
		{"raw data too short", func() []byte {
			b := newModel(17).input("x", Float, 2).output("y", Float).node("Add", []string{"x", "w"}, []string{"y"})
			b.m.Graph.Initializer = []*onnxpb.TensorProto{{Name: proto.String("w"), DataType: proto.Int32(1), Dims: []int64{2}, RawData: []byte{1, 2, 3}}}
			return b.bytes(t)
		}(), []string{`tensor "w"`, "needs 8 bytes"}, false},
		{"huge dimension", func() []byte {
			b := newModel(17).input("x", Float, 2).output("y", Float).node("Add", []string{"x", "w"}, []string{"y"})
			b.m.Graph.Initializer = []*onnxpb.TensorProto{{Name: proto.String("w"), DataType: proto.Int32(1), Dims: []int64{1 << 40, 1 << 40}}}
			return b.bytes(t)
		}(), []string{`tensor "w"`}, false},
		{"external data without a directory", func() []byte {
			b := newModel(17).input("x", Float, 2).output("y", Float).node("Add", []string{"x", "w"}, []string{"y"})
			b.m.Graph.Initializer = []*onnxpb.TensorProto{{Name: proto.String("w"), DataType: proto.Int32(1), Dims: []int64{2},
				DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(), ExternalData: []*onnxpb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("w.bin")}}}}
			return b.bytes(t)
		}(), []string{"external data is not allowed"}, false},
		{"recursive function", func() []byte {
			b := newModel(17).input("x", Float, 2).output("y", Float).node("F", []string{"x"}, []string{"y"})
			b.m.Graph.Node[0].Domain = proto.String("local")
			b.m.OpsetImport = append(b.m.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String("local"), Version: proto.Int64(1)})
			b.m.Functions = []*onnxpb.FunctionProto{{Name: proto.String("F"), Domain: proto.String("local"), Input: []string{"a"}, Output: []string{"b"},
				Node: []*onnxpb.NodeProto{{OpType: proto.String("F"), Domain: proto.String("local"), Input: []string{"a"}, Output: []string{"b"}}}}}
			return b.bytes(t)
		}(), []string{"levels deep"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode(c.data, Runtime(cpuRuntime(t)))
			if err == nil {
				m.Close()
				t.Fatal("loaded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if got := errors.Is(err, ErrUnsupported); got != c.unsupported {
				t.Errorf("errors.Is(err, ErrUnsupported) = %v for %q", got, err)
			}
		})
	}
}

// TestExternalData loads initializers from a file beside the model and refuses
// locations outside its directory.
func TestExternalData(t *testing.T) {
	dir := t.TempDir()
	w := arr(t, Float, []int{3}, []float32{1, 2, 3})
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), append(make([]byte, 8), w.t.Bytes()...), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(loc string) string {
		b := newModel(17).input("x", Float, 3).output("y", Float).node("Add", []string{"x", "w"}, []string{"y"})
		b.m.Graph.Initializer = []*onnxpb.TensorProto{{Name: proto.String("w"), DataType: proto.Int32(1), Dims: []int64{3},
			DataLocation: onnxpb.TensorProto_EXTERNAL.Enum(), ExternalData: []*onnxpb.StringStringEntryProto{
				{Key: proto.String("location"), Value: proto.String(loc)},
				{Key: proto.String("offset"), Value: proto.String("8")},
				{Key: proto.String("length"), Value: proto.String("12")}}}}
		p := filepath.Join(dir, "model.onnx")
		if err := os.WriteFile(p, b.bytes(t), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	m, err := Load(write("w.bin"), Runtime(cpuRuntime(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	out, err := m.Run(map[string]any{"x": arr(t, Float, []int{3}, []float32{10, 20, 30})})
	if err != nil {
		t.Fatal(err)
	}
	if got := out["y"].Float64s(); !slices.Equal(got, []float64{11, 22, 33}) {
		t.Errorf("y = %v", got)
	}
	for _, loc := range []string{"../w.bin", "/etc/passwd", "missing.bin"} {
		if _, err := Load(write(loc), Runtime(cpuRuntime(t))); err == nil {
			t.Errorf("location %q loaded", loc)
		}
	}
}

// TestRunErrors checks the errors of Run's inputs.
func TestRunErrors(t *testing.T) {
	m := newModel(17).input("x", Float, "batch", 3).input("z", Float, "batch", 3).output("y", Float).
		node("Add", []string{"x", "z"}, []string{"y"}).load(t)
	x := arr(t, Float, []int{2, 3}, make([]float32, 6))
	cases := []struct {
		name  string
		feeds map[string]any
		want  string
	}{
		{"missing", map[string]any{"x": x}, `input "z" (float32[batch 3]) was not fed`},
		{"unknown", map[string]any{"x": x, "z": x, "w": x}, "fed w, which the model does not take"},
		{"type", map[string]any{"x": x, "z": arr(t, Int64, []int{2, 3}, make([]int64, 6))}, `input "z" wants float32, was fed int64`},
		{"rank", map[string]any{"x": x, "z": arr(t, Float, []int{6}, make([]float32, 6))}, `input "z" has shape [6], declared [batch 3]`},
		{"static dim", map[string]any{"x": x, "z": arr(t, Float, []int{2, 4}, make([]float32, 8))}, "declared [batch 3]"},
		{"symbolic binding", map[string]any{"x": x, "z": arr(t, Float, []int{3, 3}, make([]float32, 9))}, `binds dimension "batch" to 3, another input bound it to 2`},
		{"feed type", map[string]any{"x": x, "z": []float32{1}}, "want a *tensor.Tensor or an *onnx.Array"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := m.Run(c.feeds)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
	m.Close()
	if _, err := m.Run(map[string]any{"x": x, "z": x}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Run after Close: %v", err)
	}
}

// TestSymbolicDims builds the graph at the first Run for each new shape, keeps at most
// maxBuilds of them, and builds at load when InputShapes binds the dimensions.
func TestSymbolicDims(t *testing.T) {
	b := newModel(17).input("x", Float, "n", 2).output("y", Float).node("Relu", []string{"x"}, []string{"y"})
	m := b.load(t)
	if m.Summary().Built {
		t.Error("built before the first Run")
	}
	for n := 1; n <= maxBuilds+3; n++ {
		data := make([]float32, 2*n)
		for i := range data {
			data[i] = float32(i) - float32(n)
		}
		out, err := m.Run(map[string]any{"x": arr(t, Float, []int{n, 2}, data)})
		if err != nil {
			t.Fatal(err)
		}
		if got := out["y"].Shape(); !got.Equal(tensor.Shape{n, 2}) {
			t.Fatalf("n=%d: shape %v", n, got)
		}
		if got := out["y"].At(0); got != 0 {
			t.Fatalf("n=%d: relu(%d) = %v", n, -n, got)
		}
	}
	if got := len(m.stages[0]); got != maxBuilds {
		t.Errorf("%d builds kept, want %d", got, maxBuilds)
	}
	m2 := b.load(t, InputShapes(map[string][]int{"x": {5, 2}}))
	if !m2.Summary().Built {
		t.Error("InputShapes did not build at load")
	}
	if _, err := Decode(b.bytes(t), Runtime(cpuRuntime(t)), InputShapes(map[string][]int{"nope": {1}})); err == nil {
		t.Error("InputShapes of an unknown input accepted")
	}
}

// TestDataDependentShapes runs NonZero (whose size depends on the data) with different
// data: each count builds its own stage after the first, and memory stays bounded.
func TestDataDependentShapes(t *testing.T) {
	m := newModel(17).input("x", Float, 2, 3).output("y", Int64).output("s", Float).
		node("NonZero", []string{"x"}, []string{"nz"}).
		node("Transpose", []string{"nz"}, []string{"y"}).
		node("ReduceSum", []string{"x"}, []string{"s"}, attrInt("keepdims", 0)).load(t)
	cases := []struct {
		x    []float32
		want []float64
	}{
		{[]float32{0, 1, 0, 2, 0, 3}, []float64{0, 1, 1, 0, 1, 2}},
		{[]float32{5, 0, 0, 0, 0, 0}, []float64{0, 0}},
		{[]float32{0, 0, 0, 0, 0, 0}, nil},
		{[]float32{0, 1, 0, 2, 0, 3}, []float64{0, 1, 1, 0, 1, 2}},
	}
	for round := range 3 {
		for i, c := range cases {
			out, err := m.Run(map[string]any{"x": arr(t, Float, []int{2, 3}, c.x)})
			if err != nil {
				t.Fatal(err)
			}
			if got := out["y"].Float64s(); !slices.Equal(got, c.want) && len(got)+len(c.want) > 0 {
				t.Errorf("round %d case %d: nonzero = %v, want %v", round, i, got, c.want)
			}
			if n := out["y"].Shape()[0]; n != len(c.want)/2 {
				t.Errorf("round %d case %d: %d rows", round, i, n)
			}
		}
	}
	total := 0
	for _, builds := range m.stages {
		total += len(builds)
	}
	if total > 2*maxBuilds {
		t.Errorf("%d builds kept", total)
	}
}

// TestNarrowIntegers checks that types carried in a wider engine type keep their
// arithmetic: uint8 and int8 wrap, uint16 casts, float64 round trips.
func TestNarrowIntegers(t *testing.T) {
	cases := []struct {
		name string
		dt   DataType
		op   string
		a, b []float64
		want []float64
	}{
		{"uint8 add wraps", Uint8, "Add", []float64{250, 3}, []float64{10, 4}, []float64{4, 7}},
		{"uint8 sub wraps", Uint8, "Sub", []float64{3, 200}, []float64{5, 100}, []float64{254, 100}},
		{"int8 mul wraps", Int8, "Mul", []float64{100, -3}, []float64{2, 5}, []float64{-56, -15}},
		{"int16 add", Int16, "Add", []float64{32767, -5}, []float64{1, 2}, []float64{-32768, -3}},
		{"uint32 mul", Uint32, "Mul", []float64{1 << 31, 7}, []float64{2, 3}, []float64{0, 21}},
		{"int8 div truncates", Int8, "Div", []float64{-7, 7}, []float64{2, 2}, []float64{-3, 3}},
		{"float64 add", Double, "Add", []float64{0.5, 1e10}, []float64{0.25, 1}, []float64{0.75, 1e10}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(17).input("a", c.dt, 2).input("b", c.dt, 2).output("y", c.dt).
				node(c.op, []string{"a", "b"}, []string{"y"}).load(t)
			out, err := m.Run(map[string]any{"a": arr(t, c.dt, []int{2}, c.a), "b": arr(t, c.dt, []int{2}, c.b)})
			if err != nil {
				t.Fatal(err)
			}
			if got := out["y"]; got.DataType() != c.dt || !slices.Equal(got.Float64s(), c.want) {
				t.Errorf("%v %s = %v", c.dt, c.op, got)
			}
		})
	}
}

// TestCasts checks conversions that need more than the engine's Cast.
func TestCasts(t *testing.T) {
	cases := []struct {
		from, to DataType
		in, want []float64
	}{
		{Float, Uint8, []float64{3.9, 300, -1}, []float64{3, 44, 255}},
		{Float, Int8, []float64{-3.9, 130}, []float64{-3, -126}},
		{Float, Float8E4M3FN, []float64{0.3, 1e6, -500}, []float64{0.3125, 448, -448}},
		{Float, Float8E5M2, []float64{0.3, 3e5}, []float64{0.3125, 57344}},
		{Float, Int4, []float64{-9, 7, 8}, []float64{7, 7, -8}},
		{Float, Float8E8M0, []float64{0.124, 1.1, 2, 0}, []float64{0.125, 2, 2, math.Ldexp(1, -127)}},
		{Uint8, Float, []float64{255, 0}, []float64{255, 0}},
		{Int64, Bool, []float64{0, -2}, []float64{0, 1}},
		{Float, Float16, []float64{1.0 / 3}, []float64{0.333251953125}},
	}
	for _, c := range cases {
		t.Run(c.from.String()+"_to_"+c.to.String(), func(t *testing.T) {
			m := newModel(21).input("x", c.from, len(c.in)).output("y", c.to).
				node("Cast", []string{"x"}, []string{"y"}, attrInt("to", int(c.to))).load(t)
			out, err := m.Run(map[string]any{"x": arr(t, c.from, []int{len(c.in)}, c.in)})
			if err != nil {
				t.Fatal(err)
			}
			if got := out["y"].Float64s(); !slices.Equal(got, c.want) {
				t.Errorf("cast %v -> %v of %v = %v, want %v", c.from, c.to, c.in, got, c.want)
			}
		})
	}
}

// TestReadArray decodes every TensorProto encoding: raw data, typed fields, packed
// 4-bit values in int32_data.
func TestReadArray(t *testing.T) {
	cases := []struct {
		name string
		tp   *onnxpb.TensorProto
		dt   DataType
		want []float64
	}{
		{"float_data", &onnxpb.TensorProto{DataType: proto.Int32(1), Dims: []int64{2}, FloatData: []float32{1.5, -2}}, Float, []float64{1.5, -2}},
		{"int64_data", &onnxpb.TensorProto{DataType: proto.Int32(7), Dims: []int64{2}, Int64Data: []int64{-5, 1 << 40}}, Int64, []float64{-5, 1 << 40}},
		{"uint8 raw", &onnxpb.TensorProto{DataType: proto.Int32(2), Dims: []int64{3}, RawData: []byte{0, 128, 255}}, Uint8, []float64{0, 128, 255}},
		{"int8 int32_data", &onnxpb.TensorProto{DataType: proto.Int32(3), Dims: []int64{2}, Int32Data: []int32{-128, 127}}, Int8, []float64{-128, 127}},
		{"int4 raw", &onnxpb.TensorProto{DataType: proto.Int32(22), Dims: []int64{3}, RawData: []byte{0x8f, 0x07}}, Int4, []float64{-1, -8, 7}},
		{"uint4 int32_data", &onnxpb.TensorProto{DataType: proto.Int32(21), Dims: []int64{3}, Int32Data: []int32{0x21, 0x0f}}, Uint4, []float64{1, 2, 15}},
		{"double_data", &onnxpb.TensorProto{DataType: proto.Int32(11), Dims: []int64{1}, DoubleData: []float64{0.25}}, Double, []float64{0.25}},
		{"uint64_data", &onnxpb.TensorProto{DataType: proto.Int32(13), Dims: []int64{1}, Uint64Data: []uint64{1 << 63}}, Uint64, []float64{1 << 63}},
		{"bool int32_data", &onnxpb.TensorProto{DataType: proto.Int32(9), Dims: []int64{2}, Int32Data: []int32{0, 3}}, Bool, []float64{0, 1}},
		{"float8e4m3fn raw", &onnxpb.TensorProto{DataType: proto.Int32(17), Dims: []int64{3}, RawData: []byte{0x38, 0x7e, 0xc0}}, Float8E4M3FN, []float64{1, 448, -2}},
		{"scalar", &onnxpb.TensorProto{DataType: proto.Int32(1), FloatData: []float32{7}}, Float, []float64{7}},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, _ := proto.Marshal(c.tp)
			p := filepath.Join(dir, c.name+".pb")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := ReadArray(p)
			if err != nil {
				t.Fatal(err)
			}
			if a.DataType() != c.dt || !slices.Equal(a.Float64s(), c.want) {
				t.Errorf("read %v %v, want %v %v", a.DataType(), a.Float64s(), c.dt, c.want)
			}
		})
	}
	bad := &onnxpb.TensorProto{DataType: proto.Int32(1), Dims: []int64{3}, FloatData: []float32{1}}
	data, _ := proto.Marshal(bad)
	p := filepath.Join(dir, "bad.pb")
	os.WriteFile(p, data, 0o644)
	if _, err := ReadArray(p); err == nil || !strings.Contains(err.Error(), "needs 3 values") {
		t.Errorf("short float_data: %v", err)
	}
}

// TestCollectedModelFreesMemory drops models without Close: their weights and compiled
// stages leave the runtime once they are collected, as a notebook re-running a Load
// cell needs.
func TestCollectedModelFreesMemory(t *testing.T) {
	rt := cpuRuntime(t)
	w := arr(t, Float, []int{64, 64}, make([]float32, 64*64))
	data := newModel(17).input("x", Float, 2, 64).output("y", Float).init("w", w).
		node("MatMul", []string{"x", "w"}, []string{"y"}).bytes(t)
	for range 3 {
		m, err := Decode(data, Runtime(rt))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Run(map[string]any{"x": arr(t, Float, []int{2, 64}, make([]float32, 128))}); err != nil {
			t.Fatal(err)
		}
	}
	if rt.Memory().Total() == 0 {
		t.Fatal("no memory in use after the runs")
	}
	deadline := time.Now().Add(10 * time.Second)
	for rt.Memory().Total() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still held:\n%v", rt.Memory().Total(), rt.Memory())
		}
		goruntime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFoldingAfterShutdown loads a model whose shapes are folded after
// runtime.Shutdown (a kernel restart), which closes the backends folding runs on.
func TestFoldingAfterShutdown(t *testing.T) {
	b := newModel(17).input("x", Float, 2, 3).output("y", Float).
		node("Shape", []string{"x"}, []string{"s"}).
		node("ReduceProd", []string{"s"}, []string{"n"}).
		node("Reshape", []string{"x", "n"}, []string{"y"})
	b.load(t)
	if err := runtime.Shutdown(); err != nil {
		t.Fatal(err)
	}
	m := b.load(t)
	out, err := m.Run(map[string]any{"x": arr(t, Float, []int{2, 3}, make([]float32, 6))})
	if err != nil {
		t.Fatal(err)
	}
	if !out["y"].Shape().Equal(tensor.Shape{6}) {
		t.Errorf("shape %v", out["y"].Shape())
	}
}
