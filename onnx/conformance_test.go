package onnx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gml-dev/gml/gpu"
	"github.com/gml-dev/gml/onnx/internal/onnxpb"
	"github.com/gml-dev/gml/runtime"
)

// The shared data: real PyTorch exports with ONNX Runtime outputs, and the ONNX
// v1.22.0 backend node tests.
const (
	sharedModels = "../../shared/onnx/models"
	sharedNode   = "../../shared/onnx/node"
)

// TestSharedModels runs every shared model on the CPU and on the default GPU (lavapipe
// in CI, the real GPU where there is one) and compares every output with ONNX Runtime's.
func TestSharedModels(t *testing.T) {
	cases, err := FindCases(sharedModels)
	if err != nil {
		t.Skipf("no shared models: %v", err)
	}
	devices := []string{"cpu", "gpu"}
	for _, dev := range devices {
		rt, err := runtime.New(runtime.Device(dev))
		if err != nil {
			if dev == "gpu" && strings.Contains(err.Error(), gpu.ErrNoVulkan.Error()) {
				t.Logf("no Vulkan: %v", err)
				continue
			}
			t.Fatal(err)
		}
		for _, c := range cases {
			t.Run(dev+"/"+filepath.Base(c), func(t *testing.T) {
				if r := CheckCase(c, DefaultTolerance, Runtime(rt)); r.Status != CasePass {
					t.Error(r)
				}
			})
		}
		rt.Close()
	}
}

// listedOps are the operators issue 14 lists: the node tests that use only these must
// pass at 95% or more.
var listedOps = strings.Fields(`Add Sub Mul Div Pow Mod Sqrt Exp Log Abs Neg Sign Floor Ceil Round Clip Erf
Sin Cos Tan Atan Max Min Sum Mean Reciprocal Equal Greater GreaterOrEqual Less LessOrEqual And Or
Not Xor Where IsNaN IsInf MatMul Gemm Einsum Conv ConvTranspose MaxPool AveragePool LpPool
GlobalAveragePool GlobalMaxPool Resize Upsample DepthToSpace SpaceToDepth BatchNormalization
LayerNormalization GroupNormalization InstanceNormalization RMSNormalization LRN Relu Sigmoid Tanh
Gelu Softmax LogSoftmax LeakyRelu Elu Selu Celu PRelu HardSigmoid HardSwish Softplus Softsign Mish
ThresholdedRelu Reshape Transpose Concat Flatten Squeeze Unsqueeze Expand Slice Split Tile Pad Shape
Size Cast CastLike Identity EyeLike Range CumSum Trilu Constant ConstantOfShape Gather
GatherElements GatherND ScatterElements ScatterND TopK NonZero ArgMax ArgMin OneHot ReduceMean
ReduceSum ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceSumSquare ReduceLogSumExp LSTM GRU
RNN Dropout Attention DequantizeLinear QuantizeLinear QLinearConv QLinearMatMul MatMulInteger
ConvInteger`)

// usesListedOps reports whether a node test's model uses only listed operators (and no
// model-local functions).
func usesListedOps(t *testing.T, dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	var m onnxpb.ModelProto
	if err := unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	if len(m.Functions) > 0 {
		return false
	}
	for _, n := range m.GetGraph().Node {
		if !strings.Contains(" "+strings.Join(listedOps, " ")+" ", " "+n.GetOpType()+" ") {
			return false
		}
	}
	return true
}

// TestNodeConformance runs the ONNX backend node tests on the CPU. At least 95% of the
// cases using only listed operators must pass; every case that does not pass names its
// reason.
func TestNodeConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 1765 models")
	}
	cases, err := FindCases(sharedNode)
	if err != nil {
		t.Skipf("no node tests: %v", err)
	}
	rt, err := runtime.New(runtime.Device("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	var listed, passed int
	for _, c := range cases {
		r := CheckCase(c, DefaultTolerance, Runtime(rt))
		if r.Status != CasePass && r.Reason == "" {
			t.Errorf("%s: %v without a reason", r.Name, r.Status)
		}
		if !usesListedOps(t, c) {
			continue
		}
		listed++
		if r.Status == CasePass {
			passed++
		} else {
			t.Log(r)
		}
	}
	rate := float64(passed) / float64(listed)
	t.Logf("%d of %d node tests of listed operators pass (%.1f%%)", passed, listed, 100*rate)
	if rate < 0.95 {
		t.Errorf("pass rate %.1f%% is below 95%%", 100*rate)
	}
}
