package ag

import (
	"fmt"
	"math"
)

// CheckAnomaly turns anomaly detection on or off for the current tape: every run then
// checks the values it computed, in record order, and the first NaN or infinity fails
// the run with an error naming the op, its tape position and the line that recorded it.
// It downloads every value, so it is for debugging.
func CheckAnomaly(on bool) {
	t := CurrentTape()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.anomaly = on
}

// checkAnomaly scans the values a run of tr computed for the first NaN or infinity.
func (tr *trace) checkAnomaly(prog *program) error {
	for i, x := range tr.vis {
		if !x.dtype.IsFloat() {
			continue
		}
		v, err := prog.exe.Output(i)
		if err != nil {
			return err
		}
		for j := 0; j < v.Shape().Size(); j++ {
			if f := v.Float(j); math.IsNaN(f) || math.IsInf(f, 0) {
				where := ""
				if s := siteOf(x.pcs); s != "" {
					where = ", recorded at " + s
				}
				return fmt.Errorf("anomaly: %s (tape position %d%s) produced %v at element %d", x.describe(), x.seq, where, f, j)
			}
		}
	}
	return nil
}
