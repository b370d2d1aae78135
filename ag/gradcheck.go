package ag

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gml-dev/gml/display"
	"github.com/gml-dev/gml/tensor"
)

// GradCheckReport compares Backward's gradients with central finite differences, one
// row per checked tensor.
type GradCheckReport struct {
	Rows []GradCheckRow
	Tol  float64
}

// GradCheckRow is one checked tensor: the largest absolute difference between the
// analytic and the numeric gradient, the largest error (the difference relative to the
// numeric value where that exceeds 1, absolute below), and the element where that is.
type GradCheckRow struct {
	Name           string
	MaxAbs, MaxErr float64
	Worst          int
	Analytic       float64
	Numeric        float64
}

// OK reports whether every gradient matched within the tolerance.
func (r *GradCheckReport) OK() bool {
	for _, row := range r.Rows {
		if !row.ok(r.Tol) {
			return false
		}
	}
	return true
}

func (row GradCheckRow) ok(tol float64) bool { return row.MaxErr <= tol }

func (r *GradCheckReport) table() *display.Table {
	t := display.NewTable("tensor", "max abs diff", "max error", "worst element", "analytic", "numeric", "ok")
	for _, row := range r.Rows {
		t.Row(row.Name, fmt.Sprintf("%.2e", row.MaxAbs), fmt.Sprintf("%.2e", row.MaxErr), row.Worst,
			fmt.Sprintf("%.6g", row.Analytic), fmt.Sprintf("%.6g", row.Numeric), row.ok(r.Tol))
	}
	return t.Caption(fmt.Sprintf("gradient check (tolerance %.0e): ok = %v", r.Tol, r.OK()))
}

// MIMEBundle renders the report as an HTML table.
func (r *GradCheckReport) MIMEBundle() map[string]any { return r.table().MIMEBundle() }

// String renders the report as a text table.
func (r *GradCheckReport) String() string { return r.table().String() }

// GradCheck checks Backward against finite differences for fn at xs: every
// floating-point constant among xs and every parameter among them (and, through
// params, parameters fn reads) is perturbed element by element by ±step (1e-2 when 0)
// and the central difference of fn's value compared with the gradient Backward gives.
// A non-scalar result is reduced with fixed random weights first. The tolerance is 3e-3
// when 0; f32 arithmetic limits how small it can be (an error is the difference relative to the numeric gradient where
// that exceeds 1 in magnitude, absolute below). Parameters' accumulated gradients are cleared.
func GradCheck(fn func(in ...*Tensor) *Tensor, xs []*Tensor, params []*Tensor, step, tol float64) *GradCheckReport {
	if step == 0 {
		step = 1e-2
	}
	if tol == 0 {
		tol = 3e-3
	}
	// Leaves that require a gradient, in place of the constants.
	in := make([]*Tensor, len(xs))
	var checked []*Tensor
	var names []string
	for i, x := range xs {
		in[i] = x
		switch {
		case x.p != nil && !x.p.buffer:
			checked = append(checked, x)
			names = append(names, fmt.Sprintf("input %d (%s)", i, x.Name()))
		case x.emit == nil && x.dtype.IsFloat():
			in[i] = Const(x.value("grad_check").Clone()).SetRequiresGrad(true)
			checked = append(checked, in[i])
			names = append(names, fmt.Sprintf("input %d", i))
		}
	}
	for _, p := range params {
		if p.p == nil || p.p.buffer {
			fail("grad_check", "%s is not a trainable parameter", p.describe())
		}
		checked = append(checked, p)
		names = append(names, "parameter "+p.Name())
	}
	if len(checked) == 0 {
		fail("grad_check", "nothing to check: no floating-point input or parameter")
	}
	// The scalar: fn's value, weighted when it is not one element.
	var weights *Tensor
	scalar := func(args ...*Tensor) *Tensor {
		out := fn(args...)
		if out.Size() == 1 {
			return Reshape(out)
		}
		if weights == nil {
			r := rand.New(rand.NewPCG(7, 11))
			w := tensor.New(out.dtype, out.shape...)
			for i := 0; i < w.Shape().Size(); i++ {
				w.SetFloat(i, r.Float64()+0.5)
			}
			weights = Const(w)
		}
		return Sum(Mul(out, weights), false)
	}
	ZeroGrad(params...)
	for _, x := range checked {
		if x.p != nil {
			ZeroGrad(x)
		}
	}
	loss := scalar(in...)
	loss.Backward()
	analytic := make([][]float64, len(checked))
	for i, x := range checked {
		analytic[i] = x.Grad().Float64s()
	}
	// Numeric gradients: perturb one element at a time. Constants are fed perturbed;
	// parameters are written, then restored.
	eval := func() float64 {
		var v float64
		NoGrad(func() { v = scalar(in...).Item() })
		return v
	}
	rep := &GradCheckReport{Tol: tol}
	for i, x := range checked {
		row := GradCheckRow{Name: names[i]}
		var base *tensor.Tensor
		set := func(t *tensor.Tensor) {
			if x.p != nil {
				x.Assign(Const(t))
				return
			}
			nx := Const(t).SetRequiresGrad(true)
			for j := range in {
				if in[j] == x {
					in[j] = nx
				}
			}
			x = nx
		}
		base = x.value("grad_check").Clone()
		for j := 0; j < base.Shape().Size(); j++ {
			p := base.Clone()
			p.SetFloat(j, base.Float(j)+step)
			set(p)
			up := eval()
			p.SetFloat(j, base.Float(j)-step)
			set(p)
			down := eval()
			num := (up - down) / (2 * step)
			a := analytic[i][j]
			abs := math.Abs(a - num)
			e := abs / math.Max(math.Abs(num), 1)
			row.MaxAbs = math.Max(row.MaxAbs, abs)
			if e > row.MaxErr || j == 0 {
				row.MaxErr, row.Worst, row.Analytic, row.Numeric = e, j, a, num
			}
		}
		set(base)
		rep.Rows = append(rep.Rows, row)
	}
	ZeroGrad(params...)
	return rep
}
