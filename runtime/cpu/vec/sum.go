package vec

// Sums of float32 data: Sum in float32 lanes folded into float64 every chunk, SumEach
// for many rows, SumInto in float64, and AddRows (column sums) in float32.

// sumChunk is the elements of x Sum adds in float32 lanes before it folds the lanes into
// its float64 ones: sixteen values a lane, each lane's float32 sum then within 15 units
// in the last place of the sum of its values' magnitudes.
const sumChunk = 256

// Sum returns the sum of x: over whole groups of sixteen, sixteen float32 running sums
// (lane k takes the elements k, k+16, ...) restarted every sumChunk elements, each
// chunk's lanes added to sixteen float64 running sums, which merge in a fixed order;
// then the tail in float64, in order. Every level gives the same result. Float32 lanes
// let the assembly add sixteen values per instruction where conversions to float64
// held it to four; the float64 chunks keep a long sum's error that of one chunk. A
// lane can overflow where the float64 sum would not: a chunk of values near the float32
// range whose sum cancels.
func Sum(x []float32) float64 {
	var n int
	var s float64
	if active.sum != nil {
		n, s = active.sum(x)
	} else {
		n, s = sumGo(x)
	}
	for _, v := range x[n:] {
		s += float64(v)
	}
	return s
}

// sumGo is the Go code of Sum's whole groups.
func sumGo(x []float32) (int, float64) {
	var q [16]float64
	n := len(x) &^ 15
	for c := 0; c < n; c += sumChunk {
		var p [16]float32
		for i := c; i < min(c+sumChunk, n); i += 16 {
			g := x[i : i+16]
			for k := range p {
				p[k] += g[k]
			}
		}
		for k, v := range p {
			q[k] += float64(v)
		}
	}
	var a [4]float64
	for l := range a {
		a[l] = (q[l] + q[4+l]) + (q[8+l] + q[12+l])
	}
	return n, (a[0] + a[2]) + (a[1] + a[3])
}

// SumInto adds x to a element by element in float64 (a[i] += x[i] for i < len(x)); a
// must be at least as long as x. The additions are exact conversions and one rounding
// each, so every level gives the same result.
func SumInto(a []float64, x []float32) {
	a = a[:len(x)]
	i := 0
	if active.sumInto != nil {
		i = active.sumInto(a, x)
	}
	for ; i < len(x); i++ {
		a[i] += float64(x[i])
	}
}

// SumEach sets d[r] = Sum(x[r·row:(r+1)·row]) for every r < len(d), the bits of Sum
// row by row; with rows of whole groups of sixteen the assembly does all of them in
// one call. x must hold len(d)·row elements.
func SumEach(d []float64, x []float32, row int) {
	x = x[:len(d)*row]
	if active.sumEach != nil && row%16 == 0 && row > 0 {
		active.sumEach(d, x, row)
		return
	}
	for r := range d {
		d[r] = Sum(x[r*row : (r+1)*row])
	}
}

// AddRows adds rows of x to p element by element in float32, row after row: p[j] +=
// x[r·stride+j] for r < rows and j < len(p), each addition rounded once, so every level
// gives the same result; the assembly keeps the running sums of a strip of columns in
// registers across the rows. stride must not be negative.
func AddRows(p, x []float32, rows, stride int) {
	if rows <= 0 || len(p) == 0 {
		return
	}
	if stride < 0 {
		// The bounds check below covers the last row only: the assembly would read
		// before x.
		panic("vec.AddRows: negative stride")
	}
	_ = x[(rows-1)*stride+len(p)-1] // the assembly reads no further
	j := 0
	if active.addRows != nil {
		j = active.addRows(p, x, rows, stride)
	}
	if j == len(p) {
		return
	}
	for r := range rows {
		row := x[r*stride+j : r*stride+len(p)]
		for c, v := range row {
			p[j+c] += v
		}
	}
}
