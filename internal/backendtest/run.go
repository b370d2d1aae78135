package backendtest

import (
	"fmt"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// Result is what one backend computed for an instance.
type Result struct {
	Outputs []*tensor.Tensor // nil for in-place outputs, which Vars hold
	Vars    []*tensor.Tensor // each variable after the run
	// Fallbacks are the nodes the runtime placed on the CPU although it prefers
	// another backend: they did not run on the backend under test.
	Fallbacks []*tensor.Node
}

// Run compiles and runs the instance on rt.
func (in *Instance) Run(rt *runtime.Runtime) (*Result, error) {
	exe, err := rt.Compile(in.Outputs)
	if err != nil {
		return nil, fmt.Errorf("%s: compiling on %s: %w", in.Name, rt.Backend(), err)
	}
	defer exe.Free()
	// A backward graph may not read every input of its forward graph (the gradient of
	// a linear op does not depend on its operand), and the runtime rejects such feeds.
	feeds := map[*tensor.Node]*tensor.Tensor{}
	for _, n := range exe.Inputs() {
		feeds[n] = in.Feeds[n]
	}
	outs, err := exe.Run(feeds)
	if err != nil {
		return nil, fmt.Errorf("%s: running on %s: %w", in.Name, rt.Backend(), err)
	}
	r := &Result{Outputs: outs, Fallbacks: exe.Fallbacks()}
	for _, v := range in.Vars {
		t, err := rt.Read(v)
		if err != nil {
			return nil, fmt.Errorf("%s: reading %v on %s: %w", in.Name, v, rt.Backend(), err)
		}
		r.Vars = append(r.Vars, t)
		rt.Release(v)
	}
	return r, nil
}

// Check compares a result with the reference (and, when cpu is not nil, with the CPU
// backend's result of the same instance) and returns the first disagreement.
func (in *Instance) Check(r *Result, wantOuts, wantVars []*Array, cpu *Result) error {
	for i, w := range wantOuts {
		if len(in.Outputs[i].Op().Writes()) > 0 {
			continue // its value is the variable it writes, compared below
		}
		tol := in.tolerance(w.DType)
		if err := Compare(r.Outputs[i], w, tol); err != nil {
			return fmt.Errorf("output %d (%v) against the float64 reference: %w", i, in.Outputs[i], err)
		}
		if cpu != nil {
			if err := Compare(r.Outputs[i], FromTensor(cpu.Outputs[i]), 2*tol); err != nil {
				return fmt.Errorf("output %d (%v) against the CPU backend: %w", i, in.Outputs[i], err)
			}
		}
	}
	for i, w := range wantVars {
		tol := in.tolerance(w.DType)
		if err := Compare(r.Vars[i], w, tol); err != nil {
			return fmt.Errorf("%v after the run, against the float64 reference: %w", in.Vars[i], err)
		}
		if cpu != nil {
			if err := Compare(r.Vars[i], FromTensor(cpu.Vars[i]), 2*tol); err != nil {
				return fmt.Errorf("%v after the run, against the CPU backend: %w", in.Vars[i], err)
			}
		}
	}
	return nil
}

// UnexpectedFallback returns the first fallback a backend should not have made: an
// F32 node of an op the op table gives a GPU shader, in a case that does not say why
// it may be declined. Other fallbacks (dtypes or shapes a backend's kernels leave to
// the CPU) are expected, and the caller reports them as not run.
func (in *Instance) UnexpectedFallback(r *Result) *tensor.Node {
	if in.Case.Decline != "" {
		return nil
	}
	for _, n := range r.Fallbacks {
		key := n.DType()
		if len(n.Inputs()) > 0 {
			key = n.Input(0).DType()
		}
		if key == tensor.F32 && n.Op().GPU().Shader != "" {
			return n
		}
	}
	return nil
}

// FellBack reports whether a node of the op under test ran on the CPU.
func (in *Instance) FellBack(r *Result) bool {
	for _, n := range r.Fallbacks {
		if n.Op() == in.Under {
			return true
		}
	}
	return false
}
