package gpu

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime"
	_ "github.com/gml-dev/gml/runtime/cpu"
	"github.com/gml-dev/gml/tensor"
)

// TestTrainingStepMatchesCPU runs three Adam steps of a two-layer MLP (matmul, bias,
// gelu, relu, dropout, softmax cross-entropy, backward, update) through the runtime on the Vulkan
// device and on the CPU, and compares the losses and the trained weights: in f32, and
// with products of bf16 precision as nn's MixedPrecision builds them (which the CPU
// computes in f32, and a GPU with cooperative matrices on rounded operands).
func TestTrainingStepMatchesCPU(t *testing.T) {
	if _, err := Devices(); errors.Is(err, ErrNoVulkan) {
		t.Skipf("no Vulkan loader or device: %v", err)
	}
	// bf16 products round their operands to 8 significant bits.
	for _, c := range []struct {
		dt  tensor.DType
		tol float64
	}{{tensor.F32, 1e-5}, {tensor.BF16, 1e-2}} {
		t.Run(c.dt.String(), func(t *testing.T) {
			roundEveryProduct(t)
			trainingStepMatchesCPU(t, c.dt, c.tol)
		})
	}
}

func trainingStepMatchesCPU(t *testing.T, dt tensor.DType, tol float64) {
	matmul := func(a, b *tensor.Node) *tensor.Node {
		return tensor.MatMulWith(a, b, tensor.MatMulAttr{Precision: dt})
	}
	r := rand.New(rand.NewPCG(21, 22))
	randT := func(shape ...int) *tensor.Tensor {
		d := make([]float32, tensor.Shape(shape).Size())
		for i := range d {
			d[i] = float32(r.NormFloat64() * 0.3)
		}
		x, _ := tensor.FromFloat32s(tensor.Shape(shape), d)
		return x
	}
	const batch, in, hidden, classes = 16, 20, 32, 5
	x, labels := randT(batch, in), tensor.New(tensor.F32, batch, classes)
	lab := labels.Float32s()
	for i := 0; i < batch; i++ {
		lab[i*classes+r.IntN(classes)] = 1
	}
	inits := []*tensor.Tensor{randT(in, hidden), randT(hidden), randT(hidden, classes), randT(classes)}

	train := func(device string) (losses []float32, weights []*tensor.Tensor) {
		rt, err := runtime.New(runtime.Device(device))
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		g := tensor.NewGraph()
		xin := g.Input("x", tensor.F32, batch, in)
		yin := g.Input("y", tensor.F32, batch, classes)
		var params, moments []*tensor.Node
		vars := make([]*tensor.Variable, len(inits))
		for i, init := range inits {
			vars[i] = tensor.NewVariable("w", init)
			params = append(params, g.Var(vars[i]))
			moments = append(moments,
				g.Var(tensor.NewVariable("m", tensor.New(tensor.F32, init.Shape()...))),
				g.Var(tensor.NewVariable("v", tensor.New(tensor.F32, init.Shape()...))))
		}
		h := tensor.Gelu(tensor.Add(matmul(xin, params[0]), params[1]), tensor.GeluTanh)
		h = tensor.Dropout(tensor.Relu(h), g.Scalar(tensor.I32, 3), 0.2)
		logits := tensor.Add(matmul(h, params[2]), params[3])
		loss := tensor.SoftmaxCrossEntropy(logits, yin, 1)
		grads := tensor.Grad(loss, params)
		step := g.Input("step", tensor.F32)
		outs := []*tensor.Node{loss}
		for i, p := range params {
			outs = append(outs, tensor.AdamUpdate(p, grads[i], moments[2*i], moments[2*i+1], g.Scalar(tensor.F32, 0.01), step,
				tensor.AdamAttr{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}))
		}
		exe, err := rt.Compile(outs)
		if err != nil {
			t.Fatal(err)
		}
		defer exe.Free()
		if device == "gpu" && len(exe.Fallbacks()) > 0 {
			t.Errorf("ops ran on the CPU: %v", exe.Fallbacks())
		}
		for s := 1; s <= 3; s++ {
			res, err := exe.Run(map[*tensor.Node]*tensor.Tensor{xin: x, yin: labels, step: tensor.Scalar(tensor.F32, float64(s))})
			if err != nil {
				t.Fatal(err)
			}
			losses = append(losses, res[0].Float32s()[0])
		}
		for _, v := range vars {
			w, err := rt.Read(v)
			if err != nil {
				t.Fatal(err)
			}
			weights = append(weights, w)
		}
		return losses, weights
	}
	gl, gw := train("gpu")
	cl, cw := train("cpu")
	if e := relErr(gl, cl); e > tol {
		t.Errorf("losses differ: gpu %v, cpu %v", gl, cl)
	}
	if cl[2] >= cl[0] {
		t.Errorf("the loss did not fall over three steps: %v", cl)
	}
	for i := range gw {
		if e := relErr(gw[i].Float32s(), cw[i].Float32s()); e > tol {
			t.Errorf("weight %d after three steps: relative error %.3g", i, e)
		}
	}
}
