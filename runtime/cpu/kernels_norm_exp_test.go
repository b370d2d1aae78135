package cpu

import (
	"math"
	"testing"
)

func TestExp32(t *testing.T) {
	worst := 0.0
	for x := -90.0; x <= 88.7; x += 0.001373 {
		got, want := float64(exp32(float32(x))), math.Exp(float64(float32(x)))
		if want < 0x1p-126 {
			if got != 0 {
				t.Fatalf("exp32(%v) = %v, want 0 below the normal range", x, got)
			}
			continue
		}
		worst = max(worst, math.Abs(got-want)/want)
	}
	if worst > 3e-7 {
		t.Errorf("exp32: worst relative error %.3g, want below 3e-7", worst)
	}
	for _, c := range []struct{ x, want float32 }{
		{float32(math.Inf(-1)), 0}, {float32(math.Inf(1)), float32(math.Inf(1))}, {0, 1},
	} {
		if got := exp32(c.x); got != c.want {
			t.Errorf("exp32(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if got := exp32(float32(math.NaN())); got == got {
		t.Errorf("exp32(NaN) = %v, want NaN", got)
	}
}
