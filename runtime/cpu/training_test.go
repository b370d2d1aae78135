package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/internal/childtest"

	"github.com/gml-dev/gml/tensor"
)

// TestDropoutKernels checks dropout and its mask against tensor.DropoutKeep bit for bit,
// on ragged sizes and one the threads split (at points that are not whole vectors).
func TestDropoutKernels(t *testing.T) {
	const rate = 0.3
	for _, n := range []int{1, 7, 33, 257, 1000, 40003} {
		e := newEnv(t)
		x, xv := e.f32(n)
		seed := e.feed(tensor.I32, []float64{42}, 1)
		res := e.run(tensor.Dropout(x, seed, rate), tensor.DropoutMask(x, seed, rate))
		want, mask := make([]float64, len(xv)), make([]float64, len(xv))
		kept := 0
		for i, v := range xv {
			if tensor.DropoutKeep(42, uint32(i), rate) {
				mask[i] = float64(float32(1 / (1 - rate)))
				want[i] = float64(float32(v) * float32(mask[i]))
				kept++
			}
		}
		check(t, fmt.Sprintf("dropout n=%d", n), res[0], tensor.Shape{n}, want, 0)
		check(t, fmt.Sprintf("dropout mask n=%d", n), res[1], tensor.Shape{n}, mask, 0)
		if n >= 1000 && math.Abs(float64(kept)/float64(n)-(1-rate)) > 0.05 {
			t.Errorf("n=%d: kept %d at rate %v", n, kept, rate)
		}
	}
}

// TestTrainingKernelsOnEveryPath reruns the training and softmax kernel tests in child
// processes with the vector code capped at each level below the machine's (GML_SIMD),
// so the Go code and the AVX2 assembly run on an AVX-512 machine too.
func TestTrainingKernelsOnEveryPath(t *testing.T) {
	childtest.Rerun(t, "^(TestDropoutKernels|TestOptimizerKernels|TestSoftmaxKernels)$", "GML_SIMD=go", "GML_SIMD=avx2")
}

// variable adds a variable initialised with random values and returns its node and values.
func (e *env) variable(name string, shape ...int) (*tensor.Node, []float64) {
	init := tensor.New(tensor.F32, shape...)
	vals := make([]float64, init.Len())
	for i := range vals {
		init.SetFloat(i, e.rng.Float64()-0.5)
		vals[i] = init.Float(i)
	}
	return e.g.Var(tensor.NewVariable(name, init)), vals
}

// TestOptimizerKernels checks SGD and Adam against float64 on ragged sizes, and one the
// threads split.
func TestOptimizerKernels(t *testing.T) {
	for _, n := range []int{1, 7, 33, 257, 40003} {
		testOptimizers(t, n)
	}
}

func testOptimizers(t *testing.T, n int) {
	for _, nesterov := range []bool{false, true} {
		e := newEnv(t)
		p, pv := e.variable("p", n)
		vel, vv := e.variable("vel", n)
		g, gv := e.f32(n)
		lr := e.feed(tensor.F32, []float64{0.1}, 1)
		at := tensor.SGDAttr{Momentum: 0.9, WeightDecay: 0.01, Nesterov: nesterov}
		res := e.run(tensor.SGDUpdate(p, g, vel, lr, at), vel)
		wantP, wantV := make([]float64, len(pv)), make([]float64, len(pv))
		for i := range pv {
			gi := gv[i] + 0.01*pv[i]
			wantV[i] = 0.9*vv[i] + gi
			step := wantV[i]
			if nesterov {
				step = gi + 0.9*wantV[i]
			}
			wantP[i] = pv[i] - 0.1*step
		}
		check(t, fmt.Sprint("sgd param n=", n), res[0], tensor.Shape{n}, wantP, 1e-6)
		check(t, fmt.Sprint("sgd velocity n=", n), res[1], tensor.Shape{n}, wantV, 1e-6)
	}
	for _, decoupled := range []bool{false, true} {
		e := newEnv(t)
		p, pv := e.variable("p", n)
		m, mv := e.variable("m", n)
		v, vv := e.variable("v", n)
		for i := range vv {
			vv[i] = math.Abs(vv[i])
		}
		vAbs := tensor.Assign(v, tensor.Abs(v))
		g, gv := e.f32(n)
		lr := e.feed(tensor.F32, []float64{0.01}, 1)
		step := e.feed(tensor.I64, []float64{3}, 1)
		at := tensor.AdamAttr{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.1, Decoupled: decoupled}
		// Assign runs first (graph order), so the update reads |v|.
		res := e.run(vAbs, tensor.AdamUpdate(p, g, m, v, lr, step, at), m, v)
		wantP, wantM, wantV := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range pv {
			gi := gv[i]
			decay := 1.0
			if decoupled {
				decay = 1 - 0.01*0.1
			} else {
				gi += 0.1 * pv[i]
			}
			wantM[i] = 0.9*mv[i] + 0.1*gi
			wantV[i] = 0.999*vv[i] + 0.001*gi*gi
			mh, vh := wantM[i]/(1-math.Pow(0.9, 3)), wantV[i]/(1-math.Pow(0.999, 3))
			wantP[i] = pv[i]*decay - 0.01*mh/(math.Sqrt(vh)+1e-8)
		}
		// Assign's output aliases the variable, so after the run it holds the updated moment.
		check(t, fmt.Sprint("assign n=", n), res[0], tensor.Shape{n}, wantV, 1e-6)
		check(t, fmt.Sprint("adam param n=", n), res[1], tensor.Shape{n}, wantP, 1e-5)
		check(t, fmt.Sprint("adam m n=", n), res[2], tensor.Shape{n}, wantM, 1e-6)
		check(t, fmt.Sprint("adam v n=", n), res[3], tensor.Shape{n}, wantV, 1e-6)
	}
}
