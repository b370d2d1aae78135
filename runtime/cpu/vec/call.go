package vec

import (
	"math"
	"unsafe"
)

// The driver of the slice functions whose assembly runs whole vectors (Exp, ExpShiftSum,
// Erf, Gelu, GeluGrad, AdamStep, SGDStep). The assembly takes whole vectors from where
// a call starts and stops before one holding a lane it leaves to the Go code (a NaN, an
// exponent argument out of its range). The Go code rounds differently (the assembly
// fuses multiply-adds), so the rest is not left to it: the tail and each vector the
// assembly stopped before go through the assembly again, in a vector of their own padded
// on the stack, and where it still refuses, one element a vector (where nothing written
// is read, the tail of a slice of a vector or more goes as the slice's last whole
// vector instead, without copies). Every element so gets the assembly's bits unless the
// assembly refuses that element itself, whatever the slice's length and wherever the
// element falls in it: a result depends on where a caller cuts a row (a thread's share,
// a block of a fused loop) no more than on its neighbours. Only the elements refused
// alone get the Go code's bits, always.

// kernel names a slice function of call.
type kernel uint8

const (
	opExp kernel = iota
	opExpShiftSum
	opErf
	opGelu
	opGeluGrad
	opAdam
	opSGD
)

// maxWidth is the widest vector, in lanes.
const maxWidth = 16

// call is one call of a slice function. The functions set its fields one by one: a
// composite literal is built aside and copied in 16-byte moves, whose loads span the
// 8-byte stores of the slices and stall on store forwarding (30 ns a call on Zen 4, more
// than a vector of the exponential costs).
type call struct {
	op kernel
	// s holds the slices in the assembly's order, len(s[0]) elements each (nil where the
	// function has fewer); in has bit k set where s[k] is read, out where it is written.
	s       [4][]float32
	in, out uint8
	// pad fills a padded vector's lanes past the elements, in every slice read (zeros
	// where nil): a value the assembly takes (it refuses the vector otherwise), whose
	// results are dropped.
	pad   *[maxWidth]float32
	shift float32 // ExpShiftSum's
	sum   float64 // ExpShiftSum's sum, added up as the elements are done
	// redo allows the tail to run as the last whole vector, over elements done already:
	// where no slice written is read (nor summed), the assembly, taking that vector,
	// gives them the bits they have.
	redo     bool
	gelu     *GeluGradConsts
	adam     *AdamConsts
	sgd      *SGDConsts
	nesterov bool
}

// run computes the elements of c's slices: at Go's level the Go code; else the assembly
// from the start, and the vectors it stops before and the tail through padded, or the
// tail as the last whole vector of the slices where c.redo allows it, which costs less
// than padded's copies (Exp on 1000 elements, 8 in the tail: 182 against 210 ns on the
// dev machine's Zen 4; 200 with the Go code's tail).
func (c *call) run() {
	n := len(c.s[0])
	if active.level == Go {
		c.goCode(0, n)
		return
	}
	w := active.width
	for i := c.asm(&c.s); i < n; {
		end := min(i+w, n)
		if end-i < w && c.redo && n >= w && c.asmFrom(n-w) == w {
			return
		}
		c.padded(i, end)
		if i = end; i < n {
			i += c.asmFrom(i)
		}
	}
}

// asmFrom runs the assembly on c's slices from element i on.
func (c *call) asmFrom(i int) int {
	var t [4][]float32
	for k, x := range &c.s {
		if x != nil {
			t[k] = x[i:]
		}
	}
	return c.asm(&t)
}

// padded computes the elements [i, end), at most a vector's, through the assembly in one
// vector padded with c.pad; where the assembly refuses that vector, each element in a
// vector of its own, and the Go code those it refuses alone.
func (c *call) padded(i, end int) {
	var buf [4][maxWidth]float32
	var t [4][]float32 // buf's vectors, for the slices of c
	for k, x := range &c.s {
		if x != nil {
			t[k] = buf[k][:active.width]
		}
	}
	if c.load(&buf, i, end); c.asm(&t) == active.width {
		c.store(&buf, i, end)
		return
	}
	for j := i; j < end; j++ {
		buf = [4][maxWidth]float32{}
		if c.load(&buf, j, j+1); c.asm(&t) == active.width {
			c.store(&buf, j, j+1)
		} else {
			c.goCode(j, j+1)
		}
	}
}

// load copies the elements [i, end) of each of c's slices read into the start of a
// vector of buf, whose vectors are zeros, padded with c.pad.
func (c *call) load(buf *[4][maxWidth]float32, i, end int) {
	for k, x := range &c.s {
		if c.in&(1<<k) == 0 {
			continue
		}
		if c.pad != nil {
			buf[k] = *c.pad
		}
		copy(buf[k][:], x[i:end])
	}
}

// negInfs pads ExpShiftSum's vectors: e^-Inf adds 0 to the sum.
var negInfs = func() (v [maxWidth]float32) {
	for i := range v {
		v[i] = float32(math.Inf(-1))
	}
	return v
}()

// store copies the results of the elements [i, end) from buf into c's written slices.
func (c *call) store(buf *[4][maxWidth]float32, i, end int) {
	for k, x := range &c.s {
		if c.out&(1<<k) != 0 {
			copy(x[i:end], buf[k][:])
		}
	}
}

// goCode computes the elements [i, end) of c's slices with the Go code.
func (c *call) goCode(i, end int) {
	s := c.s
	switch c.op {
	case opExp:
		expGo(s[0][i:end], s[1][i:end])
	case opExpShiftSum:
		c.sum += expShiftSumGo(s[0][i:end], s[1][i:end], c.shift)
	case opErf:
		erfGo(s[0][i:end], s[1][i:end])
	case opGelu:
		geluGo(s[0][i:end], s[1][i:end])
	case opGeluGrad:
		geluGradGo(c.gelu, s[0][i:end], s[1][i:end], s[2][i:end])
	case opAdam:
		adamGo(c.adam, s[0][i:end], s[1][i:end], s[2][i:end], s[3][i:end])
	case opSGD:
		sgdGo(c.sgd, c.nesterov, s[0][i:end], s[1][i:end], s[2][i:end])
	}
}

// overlap reports whether a and b share memory.
func overlap(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b))*4 && pb < pa+uintptr(len(a))*4
}
