package nn

import (
	"errors"
	"fmt"
	"math"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

func nan() float64 { return math.NaN() }

// rtime returns the runtime holding the model's weights, opening the default one when
// the model has not been compiled.
func (m *Net) rtime() (*runtime.Runtime, error) {
	if m.comp == nil {
		m.comp = &compiled{progs: map[string]*program{}}
	}
	return m.comp.runtime()
}

// optimizer returns the compiled optimizer.
func (m *Net) optimizer() (Optimizer, error) {
	if m.comp == nil || m.comp.opt == nil {
		return nil, errors.New("nn: the model is not compiled with an optimizer")
	}
	return m.comp.opt, nil
}

// Weights returns the current value of every model variable (trainable and state), keyed
// by variable name.
func (m *Net) Weights() (map[string]*tensor.Tensor, error) {
	snap, err := m.snapshot()
	if err != nil {
		return nil, err
	}
	out := make(map[string]*tensor.Tensor, len(snap))
	for v, t := range snap {
		out[v.Name()] = t
	}
	return out, nil
}

// SetWeights overwrites model variables by name; unknown names and wrong shapes are errors.
func (m *Net) SetWeights(w map[string]*tensor.Tensor) error {
	byName := map[string]*tensor.Variable{}
	for _, v := range m.variables() {
		byName[v.Name()] = v
	}
	rt, err := m.rtime()
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(w) {
		v, ok := byName[name]
		if !ok {
			return fmt.Errorf("nn: SetWeights: the model has no variable %q", name)
		}
		if err := rt.Write(v, w[name]); err != nil {
			return fmt.Errorf("nn: SetWeights: %w", err)
		}
	}
	return nil
}

// variables lists trainable then state variables.
func (m *Net) variables() []*tensor.Variable { return append(m.Params(), m.stateVars()...) }

// snapshot copies every model variable to the host.
func (m *Net) snapshot() (map[*tensor.Variable]*tensor.Tensor, error) {
	rt, err := m.rtime()
	if err != nil {
		return nil, err
	}
	out := map[*tensor.Variable]*tensor.Tensor{}
	for _, v := range m.variables() {
		t, err := rt.Read(v)
		if err != nil {
			return nil, err
		}
		out[v] = t
	}
	return out, nil
}

// restore writes a snapshot back.
func (m *Net) restore(snap map[*tensor.Variable]*tensor.Tensor) error {
	rt, err := m.rtime()
	if err != nil {
		return err
	}
	for v, t := range snap {
		if err := rt.Write(v, t); err != nil {
			return err
		}
	}
	return nil
}

// CountParams returns the number of trainable scalars.
func (m *Net) CountParams() int {
	n := 0
	for _, v := range m.Params() {
		n += v.Shape().Size()
	}
	return n
}
