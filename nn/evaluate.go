package nn

import (
	"fmt"

	"github.com/gml-dev/gml/data"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// Evaluate returns the loss and metrics of the model on x and y, computed in batches
// (BatchSize, default 32) without dropout and with batch-norm running statistics.
// SampleWeights and ClassWeights weight the loss as in Fit.
func (m *Net) Evaluate(x, y any, opts ...EvaluateOption) (Logs, error) {
	s := evaluateSettings{batchSize: 32}
	if err := applyOptions("Evaluate", &s, nil, opts, EvaluateOption.evaluateSetting); err != nil {
		return nil, err
	}
	d, _, err := m.load(x, y, &s.weighting)
	if err != nil {
		return nil, err
	}
	return m.evaluate(d, s.batchSize)
}

// evaluate runs the evaluation graph over d in order.
func (m *Net) evaluate(d *dataset, batchSize int) (Logs, error) {
	acc := newAccumulator(m.scalarNames())
	for lo := 0; lo < d.n; lo += batchSize {
		hi := min(lo+batchSize, d.n)
		part, err := d.split(lo, hi)
		if err != nil {
			return nil, err
		}
		b := &batch{xs: part.xs, ys: part.ys, ws: part.ws, n: part.n}
		p, err := m.buildProgram("eval", b.n, m.labelSpecsOf(b), weightShapes(b.ws, b.n))
		if err != nil {
			return nil, err
		}
		out, err := p.exe.Run(m.feeds(p, b))
		if err != nil {
			return nil, err
		}
		acc.add(scalars(out), b.n)
		if err := runtime.Interrupted(); err != nil {
			return nil, err
		}
	}
	return acc.logs(), nil
}

// Predict returns the model's output for x, computed in batches (BatchSize, default 32)
// without dropout. A model with several outputs needs PredictOutputs.
func (m *Net) Predict(x any, opts ...PredictOption) (*tensor.Tensor, error) {
	outs, err := m.PredictOutputs(x, opts...)
	if err != nil {
		return nil, err
	}
	if len(outs) != 1 {
		return nil, fmt.Errorf("nn: the model has %d outputs (%v): use PredictOutputs", len(outs), m.OutputNames())
	}
	return outs[0], nil
}

// PredictOutputs returns one tensor per model output for x.
func (m *Net) PredictOutputs(x any, opts ...PredictOption) ([]*tensor.Tensor, error) {
	s := predictSettings{batchSize: 32}
	if err := applyOptions("Predict", &s, nil, opts, PredictOption.predictSetting); err != nil {
		return nil, err
	}
	xs, err := toTensors(x)
	if err != nil {
		return nil, err
	}
	if err := m.ensureBuilt(xs); err != nil {
		return nil, err
	}
	if m.comp == nil {
		// Prediction needs no optimizer; keep a runtime for the weights.
		m.comp = &compiled{progs: map[string]*program{}}
	}
	xs, n, err := m.conformInputs(xs)
	if err != nil {
		return nil, err
	}
	results := make([][]*tensor.Tensor, len(m.outputs))
	for lo := 0; lo < n; lo += s.batchSize {
		hi := min(lo+s.batchSize, n)
		b := &batch{n: hi - lo}
		for _, x := range xs {
			r, err := data.Rows(x, lo, hi)
			if err != nil {
				return nil, err
			}
			b.xs = append(b.xs, r)
		}
		p, err := m.buildProgram("predict", b.n, nil, nil)
		if err != nil {
			return nil, err
		}
		out, err := p.exe.Run(m.feeds(p, b))
		if err != nil {
			return nil, err
		}
		for i := range results {
			results[i] = append(results[i], out[i])
		}
		if err := runtime.Interrupted(); err != nil {
			return nil, err
		}
	}
	outs := make([]*tensor.Tensor, len(results))
	for i, parts := range results {
		outs[i] = concatRows(parts)
	}
	return outs, nil
}

// concatRows joins tensors along axis 0.
func concatRows(parts []*tensor.Tensor) *tensor.Tensor {
	n := 0
	for _, p := range parts {
		n += p.Shape()[0]
	}
	shape := append(tensor.Shape{n}, parts[0].Shape()[1:]...)
	out := tensor.New(parts[0].DType(), shape...)
	off := 0
	for _, p := range parts {
		off += copy(out.Bytes()[off:], p.Bytes())
	}
	return out
}
