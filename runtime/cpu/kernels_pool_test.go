package cpu_test

import (
	"math"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// refPool is max or average pooling in float64, with the max's first index per window.
func refPool(x []float64, xs, ys tensor.Shape, at tensor.PoolAttr, isMax bool) (y []float64, arg []int) {
	k, s, p, in, out := [2]int{1, 1}, [2]int{1, 1}, [2]int{}, [2]int{1, 1}, [2]int{1, 1}
	off := 4 - xs.Rank()
	for i := range xs.Rank() - 2 {
		k[off+i], s[off+i], p[off+i], in[off+i], out[off+i] = at.Kernel[i], at.Stride[i], at.PadBegin[i], xs[2+i], ys[2+i]
	}
	planes := xs[0] * xs[1]
	y, arg = make([]float64, planes*out[0]*out[1]), make([]int, planes*out[0]*out[1])
	for pl := 0; pl < planes; pl++ {
		for oy := 0; oy < out[0]; oy++ {
			for ox := 0; ox < out[1]; ox++ {
				o := (pl*out[0]+oy)*out[1] + ox
				best, sum, count := math.Inf(-1), 0.0, 0
				for i := 0; i < k[0]; i++ {
					for j := 0; j < k[1]; j++ {
						iy, ix := oy*s[0]-p[0]+i, ox*s[1]-p[1]+j
						if iy < 0 || iy >= in[0] || ix < 0 || ix >= in[1] {
							continue
						}
						xi := (pl*in[0]+iy)*in[1] + ix
						if x[xi] > best {
							best, arg[o] = x[xi], xi
						}
						sum += x[xi]
						count++
					}
				}
				if at.CountIncludePad {
					count = k[0] * k[1]
				}
				y[o] = sum / float64(count)
				if isMax {
					y[o] = best
				}
			}
		}
	}
	return y, arg
}

func TestPoolKernels(t *testing.T) {
	for _, c := range []struct {
		name string
		x    tensor.Shape
		at   tensor.PoolAttr
	}{
		{"2x2", tensor.Shape{2, 3, 6, 8}, tensor.PoolAttr{Kernel: []int{2, 2}}},
		{"2x2 odd", tensor.Shape{1, 2, 7, 9}, tensor.PoolAttr{Kernel: []int{2, 2}}},
		{"2x2 pad", tensor.Shape{1, 2, 5, 6}, tensor.PoolAttr{Kernel: []int{2, 2}, PadBegin: []int{1}, PadEnd: []int{1}}},
		{"3x3 s2 pad", tensor.Shape{1, 2, 7, 9}, tensor.PoolAttr{Kernel: []int{3, 3}, Stride: []int{2}, PadBegin: []int{1}, PadEnd: []int{1}}},
		{"include pad", tensor.Shape{1, 2, 5, 5}, tensor.PoolAttr{Kernel: []int{3, 2}, Stride: []int{2, 1}, PadBegin: []int{1, 1}, PadEnd: []int{2, 0}, CountIncludePad: true}},
		{"overlapping odd", tensor.Shape{2, 1, 5, 7}, tensor.PoolAttr{Kernel: []int{3, 3}, Stride: []int{1}}},
		{"1-D", tensor.Shape{2, 3, 10}, tensor.PoolAttr{Kernel: []int{3}, Stride: []int{2}, PadEnd: []int{1}}},
	} {
		e := newEnv(t)
		x, X := e.f32(c.x...)
		mp, ap := tensor.MaxPool(x, c.at), tensor.AvgPool(x, c.at)
		gy, GY := e.f32(mp.Shape()...)
		at := mp.Attr().(tensor.PoolAttr)
		mg, ag := tensor.MaxPoolGrad(x, gy, at), tensor.AvgPoolGrad(gy, c.x, at)
		got := e.run(mp, ap, mg, ag)

		wantMax, arg := refPool(X, c.x, mp.Shape(), at, true)
		wantAvg, _ := refPool(X, c.x, mp.Shape(), at, false)
		wantMG := make([]float64, len(X))
		for o, xi := range arg {
			wantMG[xi] += GY[o]
		}
		// The average pool's gradient is its adjoint: <AvgPool(e_i), gy> for each unit e_i.
		wantAG := make([]float64, len(X))
		unit := make([]float64, len(X))
		for i := range unit {
			unit[i] = 1
			yi, _ := refPool(unit, c.x, mp.Shape(), at, false)
			for o, v := range yi {
				wantAG[i] += v * GY[o]
			}
			unit[i] = 0
		}
		check(t, c.name+" max", got[0], mp.Shape(), wantMax, 0)
		check(t, c.name+" avg", got[1], mp.Shape(), wantAvg, 1e-6)
		check(t, c.name+" max grad", got[2], c.x, wantMG, 1e-6)
		check(t, c.name+" avg grad", got[3], c.x, wantAG, 1e-6)
	}
}
