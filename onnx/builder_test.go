package onnx

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gml-dev/gml/onnx/internal/onnxpb"
	"github.com/gml-dev/gml/runtime"
	"google.golang.org/protobuf/proto"
)

// modelBuilder writes small ONNX models for tests.
type modelBuilder struct{ m *onnxpb.ModelProto }

func newModel(opset int) *modelBuilder {
	return &modelBuilder{m: &onnxpb.ModelProto{
		IrVersion: proto.Int64(8), ProducerName: proto.String("gml-test"),
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(int64(opset))}},
		Graph:       &onnxpb.GraphProto{Name: proto.String("g")},
	}}
}

// valueInfo declares a tensor; dims are ints (sizes) or strings (symbolic names); no
// dims at all (nil) declares no shape.
func valueInfoProto(name string, dt DataType, dims []any) *onnxpb.ValueInfoProto {
	tt := &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(dt))}
	if dims != nil {
		sh := &onnxpb.TensorShapeProto{}
		for _, d := range dims {
			switch v := d.(type) {
			case int:
				sh.Dim = append(sh.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(v)}})
			case string:
				sh.Dim = append(sh.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: v}})
			}
		}
		tt.Shape = sh
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: tt}}}
}

func (b *modelBuilder) input(name string, dt DataType, dims ...any) *modelBuilder {
	if dims == nil {
		dims = []any{}
	}
	b.m.Graph.Input = append(b.m.Graph.Input, valueInfoProto(name, dt, dims))
	return b
}

func (b *modelBuilder) output(name string, dt DataType, dims ...any) *modelBuilder {
	b.m.Graph.Output = append(b.m.Graph.Output, valueInfoProto(name, dt, nil))
	return b
}

// init adds an initializer holding a (raw little-endian data).
func (b *modelBuilder) init(name string, a *Array) *modelBuilder {
	b.m.Graph.Initializer = append(b.m.Graph.Initializer, tensorProto(name, a))
	return b
}

// tensorProto encodes an array of a native or 8/16-bit integer type as raw data.
func tensorProto(name string, a *Array) *onnxpb.TensorProto {
	tp := &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(a.dtype))}
	for _, d := range a.Shape() {
		tp.Dims = append(tp.Dims, int64(d))
	}
	if a.dtype.Native() {
		tp.RawData = append([]byte{}, a.t.Bytes()...)
		return tp
	}
	for i := range a.Len() {
		v := a.At(i)
		switch a.dtype {
		case Uint8, Int8:
			tp.RawData = append(tp.RawData, byte(int64(v)))
		case Uint16, Int16:
			tp.RawData = binary.LittleEndian.AppendUint16(tp.RawData, uint16(int64(v)))
		case Uint32:
			tp.RawData = binary.LittleEndian.AppendUint32(tp.RawData, uint32(v))
		case Uint64:
			tp.RawData = binary.LittleEndian.AppendUint64(tp.RawData, uint64(a.t.Int64s()[i]))
		case Double:
			tp.RawData = binary.LittleEndian.AppendUint64(tp.RawData, math.Float64bits(v))
		default:
			panic("tensorProto: no encoding for " + a.dtype.String())
		}
	}
	return tp
}

// node adds a node; attrs are built with the attr* helpers.
func (b *modelBuilder) node(op string, ins, outs []string, attrs ...*onnxpb.AttributeProto) *modelBuilder {
	b.m.Graph.Node = append(b.m.Graph.Node, &onnxpb.NodeProto{OpType: proto.String(op), Input: ins, Output: outs,
		Name: proto.String(op + "_" + outs[0]), Attribute: attrs})
	return b
}

func attrInt(name string, v int) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(int64(v))}
}

func attrFloat(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

func attrString(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func attrInts(name string, v ...int) *onnxpb.AttributeProto {
	a := &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum()}
	for _, x := range v {
		a.Ints = append(a.Ints, int64(x))
	}
	return a
}

func (b *modelBuilder) bytes(t testing.TB) []byte {
	t.Helper()
	data, err := proto.Marshal(b.m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// cpuRuntime is one CPU runtime shared by the package's tests.
func cpuRuntime(t testing.TB) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(runtime.Device("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// load decodes a built model on the CPU.
func (b *modelBuilder) load(t testing.TB, opts ...Option) *Model {
	t.Helper()
	m, err := Decode(b.bytes(t), append([]Option{Runtime(cpuRuntime(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// arr builds an Array or fails the test.
func arr(t testing.TB, dt DataType, shape []int, data any) *Array {
	t.Helper()
	a, err := NewArray(dt, shape, data)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
