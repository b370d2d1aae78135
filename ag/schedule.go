package ag

import (
	"fmt"
	"math"

	"github.com/gml-dev/gml/display"
)

// Scheduler sets an optimizer's learning rate step by step, as PyTorch's lr_scheduler
// classes do: call Step once per step (or epoch, as you count them) after the
// optimizer's. The rate lives on the device and is written only when it changes, so a
// schedule never recompiles a step. Plot draws the schedule.
type Scheduler struct {
	opt   *Optimizer
	kind  string
	base  float64
	steps int
	// lrAt is the closed-form rate after n steps (nil for ReduceLROnPlateau).
	lrAt func(n int) float64
	// history holds the rates set so far (ReduceLROnPlateau's plot).
	history []float64
	plateau *plateau
}

// plateau is ReduceLROnPlateau's state.
type plateau struct {
	factor    float64
	patience  int
	minLR     float64
	threshold float64
	best      float64
	bad       int
}

func newScheduler(opt *Optimizer, kind string, lrAt func(n int) float64) *Scheduler {
	if opt == nil {
		fail(kind, "nil optimizer")
	}
	s := &Scheduler{opt: opt, kind: kind, base: opt.LR(), lrAt: lrAt}
	if lrAt != nil {
		opt.SetLR(lrAt(0))
	}
	s.history = append(s.history, opt.LR())
	return s
}

// StepLR multiplies the rate by gamma every stepSize steps.
func StepLR(opt *Optimizer, stepSize int, gamma float64) *Scheduler {
	positive("step_lr", "step size", stepSize)
	base := opt.LR()
	return newScheduler(opt, "step_lr", func(n int) float64 { return base * math.Pow(gamma, float64(n/stepSize)) })
}

// ExponentialLR multiplies the rate by gamma every step.
func ExponentialLR(opt *Optimizer, gamma float64) *Scheduler {
	base := opt.LR()
	return newScheduler(opt, "exponential_lr", func(n int) float64 { return base * math.Pow(gamma, float64(n)) })
}

// CosineAnnealingLR anneals the rate from its initial value to etaMin over tMax steps
// along a half cosine (and back up over the next tMax, as PyTorch's closed form).
func CosineAnnealingLR(opt *Optimizer, tMax int, etaMin float64) *Scheduler {
	positive("cosine_annealing_lr", "tMax", tMax)
	base := opt.LR()
	return newScheduler(opt, "cosine_annealing_lr", func(n int) float64 {
		return etaMin + (base-etaMin)*(1+math.Cos(math.Pi*float64(n)/float64(tMax)))/2
	})
}

// CosineAnnealingWarmRestarts anneals along a half cosine over t0 steps, then restarts
// from the initial rate, each cycle tMult times longer than the last (SGDR).
func CosineAnnealingWarmRestarts(opt *Optimizer, t0, tMult int, etaMin float64) *Scheduler {
	positive("cosine_annealing_warm_restarts", "t0", t0)
	positive("cosine_annealing_warm_restarts", "tMult", tMult)
	base := opt.LR()
	return newScheduler(opt, "cosine_annealing_warm_restarts", func(n int) float64 {
		cur, length := n, t0
		for cur >= length {
			cur -= length
			length *= tMult
		}
		return etaMin + (base-etaMin)*(1+math.Cos(math.Pi*float64(cur)/float64(length)))/2
	})
}

// OneCycleLR warms the rate up from maxLR/25 to maxLR over the first 30% of total steps
// and anneals it (cosine) to maxLR/25e4 over the rest, as PyTorch's defaults.
func OneCycleLR(opt *Optimizer, maxLR float64, total int) *Scheduler {
	positive("one_cycle_lr", "total steps", total)
	initial, final := maxLR/25, maxLR/25/1e4
	up := int(0.3*float64(total)) - 1
	cosine := func(from, to, frac float64) float64 { return to + (from-to)*(1+math.Cos(math.Pi*frac))/2 }
	return newScheduler(opt, "one_cycle_lr", func(n int) float64 {
		switch {
		case n <= up && up > 0:
			return cosine(initial, maxLR, float64(n)/float64(up))
		case n >= total-1:
			return final
		default:
			return cosine(maxLR, final, float64(n-up)/float64(total-1-up))
		}
	})
}

// CyclicLR moves the rate linearly between baseLR and maxLR and back, stepSize steps
// each way (the triangular policy).
func CyclicLR(opt *Optimizer, baseLR, maxLR float64, stepSize int) *Scheduler {
	positive("cyclic_lr", "step size", stepSize)
	return newScheduler(opt, "cyclic_lr", func(n int) float64 {
		cycle := math.Floor(1 + float64(n)/float64(2*stepSize))
		x := math.Abs(float64(n)/float64(stepSize) - 2*cycle + 1)
		return baseLR + (maxLR-baseLR)*math.Max(0, 1-x)
	})
}

// WarmupCosine raises the rate linearly from 0 to its initial value over warmup steps,
// then anneals it along a half cosine to minLR at total steps (the transformer
// schedule).
func WarmupCosine(opt *Optimizer, warmup, total int, minLR float64) *Scheduler {
	positive("warmup_cosine", "total steps", total)
	if warmup < 0 || warmup >= total {
		fail("warmup_cosine", "warmup %d must be in [0, total %d)", warmup, total)
	}
	base := opt.LR()
	return newScheduler(opt, "warmup_cosine", func(n int) float64 {
		switch {
		case n < warmup:
			return base * float64(n+1) / float64(warmup+1)
		case n >= total:
			return minLR
		}
		return minLR + (base-minLR)*(1+math.Cos(math.Pi*float64(n-warmup)/float64(total-warmup)))/2
	})
}

// ReduceLROnPlateau multiplies the rate by factor when the metric given to StepWith
// (a validation loss: lower is better) has not improved by a relative 1e-4 for more
// than patience steps, never below minLR.
func ReduceLROnPlateau(opt *Optimizer, factor float64, patience int, minLR float64) *Scheduler {
	if !(factor > 0 && factor < 1) {
		fail("reduce_lr_on_plateau", "factor %v outside (0, 1)", factor)
	}
	if patience < 0 {
		fail("reduce_lr_on_plateau", "negative patience %d", patience)
	}
	s := newScheduler(opt, "reduce_lr_on_plateau", nil)
	s.plateau = &plateau{factor: factor, patience: patience, minLR: minLR, threshold: 1e-4, best: math.Inf(1)}
	return s
}

// Step advances the schedule by one step and sets the optimizer's rate.
func (s *Scheduler) Step() {
	if s.plateau != nil {
		fail(s.kind, "needs the metric: call StepWith(validationLoss)")
	}
	s.steps++
	s.opt.SetLR(s.lrAt(s.steps))
	s.history = append(s.history, s.opt.LR())
}

// StepWith advances ReduceLROnPlateau with this step's metric.
func (s *Scheduler) StepWith(metric float64) {
	p := s.plateau
	if p == nil {
		fail(s.kind, "takes no metric: call Step")
	}
	s.steps++
	if metric < p.best*(1-p.threshold) {
		p.best, p.bad = metric, 0
	} else if p.bad++; p.bad > p.patience {
		s.opt.SetLR(math.Max(s.opt.LR()*p.factor, p.minLR))
		p.bad = 0
	}
	s.history = append(s.history, s.opt.LR())
}

// LR returns the rate the schedule set last.
func (s *Scheduler) LR() float64 { return s.opt.LR() }

// Plot draws the rate over the first n steps of a closed-form schedule, or the rates
// set so far by ReduceLROnPlateau; it renders as an image in a notebook.
func (s *Scheduler) Plot(n int) *display.Plot {
	var ys []float64
	if s.lrAt == nil {
		ys = append(ys, s.history...)
	} else {
		for i := 0; i < n; i++ {
			ys = append(ys, s.lrAt(i))
		}
	}
	return display.LinePlot(fmt.Sprintf("%s (%s)", s.kind, s.opt), "step", "learning rate", display.Series{Name: s.kind, Y: ys})
}
