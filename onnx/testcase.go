package onnx

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The ONNX backend-test layout: a case is a directory NAME holding model.onnx and one
// or more test_data_set_N directories of input_K.pb and output_K.pb (serialised
// TensorProtos, in the order of the graph's inputs and outputs).

// CaseStatus is the outcome of one case.
type CaseStatus int

// The outcomes.
const (
	CasePass CaseStatus = iota
	CaseFail
	CaseSkip
)

// CaseResult is the outcome of one case and why.
type CaseResult struct {
	Name   string
	Status CaseStatus
	Reason string // the worst element of a failure, or why the case was skipped
}

// String is the line gml onnx-test prints: "PASS NAME", "FAIL NAME: ...", "SKIP NAME: ...".
func (r CaseResult) String() string {
	switch r.Status {
	case CasePass:
		return "PASS " + r.Name
	case CaseFail:
		return "FAIL " + r.Name + ": " + r.Reason
	}
	return "SKIP " + r.Name + ": " + r.Reason
}

// ErrUnsupported is wrapped by the errors of models that use what gml does not
// implement (an operator, an attribute value, an element type); CheckCase skips them.
var ErrUnsupported = errors.New("not supported")

// FindCases returns the case directories under each of dirs (a directory that holds
// model.onnx is itself a case), sorted by path.
func FindCases(dirs ...string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "model.onnx")); err == nil {
			out = append(out, d)
			continue
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return nil, fmt.Errorf("onnx: %w", err)
		}
		found := false
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			p := filepath.Join(d, e.Name())
			if _, err := os.Stat(filepath.Join(p, "model.onnx")); err == nil {
				out = append(out, p)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("onnx: %s holds no case (NAME/model.onnx)", d)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Tolerance is how close an output must be to the reference: |got - want| <= Atol +
// Rtol*|want| for every element.
type Tolerance struct{ Rtol, Atol float64 }

// DefaultTolerance is the tolerance for float32 and float64 outputs.
var DefaultTolerance = Tolerance{Rtol: 1e-3, Atol: 1e-5}

// toleranceFor widens the tolerance for half-precision outputs to a few units in the
// last place of the type: float16 and bfloat16 results that the reference rounds after
// every op and gml after fused ones differ by that much.
func toleranceFor(dt DataType, base Tolerance) Tolerance {
	switch dt {
	case Float16:
		return Tolerance{Rtol: max(base.Rtol, 4e-3), Atol: max(base.Atol, 1e-3)}
	case BFloat16:
		return Tolerance{Rtol: max(base.Rtol, 3e-2), Atol: max(base.Atol, 1e-2)}
	}
	return base
}

// CheckCase loads the model of a case directory, runs every data set and compares the
// outputs with the references at tol (half-precision outputs get toleranceFor).
func CheckCase(dir string, tol Tolerance, opts ...Option) CaseResult {
	res := CaseResult{Name: filepath.Base(dir)}
	fail := func(err error) CaseResult {
		if errors.Is(err, ErrUnsupported) {
			res.Status = CaseSkip
		} else {
			res.Status = CaseFail
		}
		res.Reason = strings.ReplaceAll(err.Error(), "\n", " ")
		return res
	}
	m, err := Load(filepath.Join(dir, "model.onnx"), opts...)
	if err != nil {
		return fail(err)
	}
	defer m.Close()
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	sort.Strings(sets)
	if len(sets) == 0 {
		res.Status, res.Reason = CaseSkip, "no test_data_set_* directory"
		return res
	}
	for _, set := range sets {
		feeds := map[string]any{}
		for k, in := range m.graph.inputs {
			a, err := ReadArray(filepath.Join(set, fmt.Sprintf("input_%d.pb", k)))
			if err != nil {
				return fail(err)
			}
			feeds[in.name] = a
		}
		got, err := m.Run(feeds)
		if err != nil {
			return fail(err)
		}
		for k, o := range m.graph.outputs {
			want, err := ReadArray(filepath.Join(set, fmt.Sprintf("output_%d.pb", k)))
			if err != nil {
				return fail(err)
			}
			if err := Compare(got[o.name], want, toleranceFor(want.dtype, tol)); err != nil {
				res.Status = CaseFail
				res.Reason = fmt.Sprintf("%s: output %q: %v", filepath.Base(set), o.name, err)
				return res
			}
		}
	}
	return res
}

// Compare checks got against the reference want: same type and shape, and every
// element within tol (integers and booleans exactly; NaN matches NaN, infinities must
// match). The error describes the worst element.
func Compare(got, want *Array, tol Tolerance) error {
	if got == nil {
		return errors.New("missing")
	}
	if got.dtype != want.dtype {
		return fmt.Errorf("type %v, want %v", got.dtype, want.dtype)
	}
	if !got.Shape().Equal(want.Shape()) {
		return fmt.Errorf("shape %v, want %v", got.Shape(), want.Shape())
	}
	worst, worstExcess := -1, 0.0
	for i := 0; i < want.Len(); i++ {
		g, w := got.At(i), want.At(i)
		if math.IsNaN(g) || math.IsNaN(w) {
			if math.IsNaN(g) != math.IsNaN(w) {
				return fmt.Errorf("element %d: got %g, want %g", i, g, w)
			}
			continue
		}
		if math.IsInf(w, 0) || math.IsInf(g, 0) {
			if g != w {
				return fmt.Errorf("element %d: got %g, want %g", i, g, w)
			}
			continue
		}
		lim := tol.Atol + tol.Rtol*math.Abs(w)
		if !want.dtype.IsFloat() {
			lim = 0
		}
		if d := math.Abs(g - w); d > lim && d-lim > worstExcess {
			worst, worstExcess = i, d-lim
		}
	}
	if worst < 0 {
		return nil
	}
	g, w := got.At(worst), want.At(worst)
	return fmt.Errorf("element %d of %d: got %.7g, want %.7g (|diff| %.3g, allowed %.3g)",
		worst, want.Len(), g, w, math.Abs(g-w), tol.Atol+tol.Rtol*math.Abs(w))
}
