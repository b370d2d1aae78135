package vec

// ArithOp is an arithmetic operation of Arith.
type ArithOp uint8

// The arithmetic operations (their numbers are binary_amd64.s's).
const (
	Add ArithOp = iota
	Sub
	Mul
	Div
)

// ArithRows sets d[k·n+i] = a[k·n+i] op r[i] for every row k of d and i < n = len(r)
// (r[i] op a[k·n+i] when rFirst): one row repeated down a batch, as a bias is added,
// in one call for all the rows. len(d) is a multiple of n and a is at least as long as
// d. The results are Go's, bit for bit.
func ArithRows(op ArithOp, d, a, r []float32, rFirst bool) {
	n := len(r)
	if n == 0 {
		return
	}
	rows := len(d) / n
	d, a = d[:rows*n], a[:rows*n]
	j := 0
	if active.arithRows != nil && n >= 8 {
		active.arithRows(int(op), d, a, r, rows, rFirst)
		j = n &^ 7
	}
	if j == n {
		return
	}
	for k := range rows {
		dd, aa := d[k*n+j:(k+1)*n], a[k*n+j:(k+1)*n]
		if rFirst {
			Arith(op, dd, r[j:], 1, aa, 1)
		} else {
			Arith(op, dd, aa, 1, r[j:], 1)
		}
	}
}

// CompareOp is a comparison of Compare.
type CompareOp uint8

// The comparisons (their numbers are binary_amd64.s's).
const (
	Equal CompareOp = iota
	NotEqual
	Less
	LessEqual
	Greater
	GreaterEqual
)

// Arith sets d[i] = a[i·sa] op b[i·sb] for every i < len(d); sa and sb are 0 (a
// scalar, read at index 0) or 1. The results are Go's, bit for bit.
func Arith(op ArithOp, d, a []float32, sa int, b []float32, sb int) {
	i := 0
	if active.arith != nil && len(d) >= 8 {
		i = active.arith(int(op), d, a, b, sa, sb)
	}
	d = d[i:]
	a, b = a[i*sa:], b[i*sb:]
	switch op {
	case Add:
		for j := range d {
			d[j] = a[j*sa] + b[j*sb]
		}
	case Sub:
		for j := range d {
			d[j] = a[j*sa] - b[j*sb]
		}
	case Mul:
		for j := range d {
			d[j] = a[j*sa] * b[j*sb]
		}
	default:
		for j := range d {
			d[j] = a[j*sa] / b[j*sb]
		}
	}
}

// Compare sets d[i] to 1 where a[i·sa] op b[i·sb] holds and to 0 elsewhere, for every
// i < len(d); sa and sb are 0 or 1. NaN compares as in Go: only NotEqual holds.
func Compare(op CompareOp, d []byte, a []float32, sa int, b []float32, sb int) {
	i := 0
	if active.compare != nil && len(d) >= 8 {
		i = active.compare(int(op), d, a, b, sa, sb)
	}
	d = d[i:]
	a, b = a[i*sa:], b[i*sb:]
	for j := range d {
		x, y := a[j*sa], b[j*sb]
		var r bool
		switch op {
		case Equal:
			r = x == y
		case NotEqual:
			r = x != y
		case Less:
			r = x < y
		case LessEqual:
			r = x <= y
		case Greater:
			r = x > y
		default:
			r = x >= y
		}
		d[j] = 0
		if r {
			d[j] = 1
		}
	}
}

// Where32 sets d[i] = a[i·sa] where c[i] != 0 and b[i·sb] elsewhere, for every i <
// len(d), on 4-byte elements of any type; sa and sb are 0 or 1.
func Where32(d []uint32, c []byte, a []uint32, sa int, b []uint32, sb int) {
	i := 0
	if active.where32 != nil && len(d) >= 8 {
		i = active.where32(d, c, a, b, sa, sb)
	}
	d, c = d[i:], c[i:len(c)]
	a, b = a[i*sa:], b[i*sb:]
	for j := range d {
		if c[j] != 0 {
			d[j] = a[j*sa]
		} else {
			d[j] = b[j*sb]
		}
	}
}

// Spread sets d[r·row+i] = v[r] for every r < len(v) and i < row: one value per row,
// repeated along it (a row statistic made as wide as the rows). d must hold len(v)·row
// elements.
func Spread(d, v []uint32, row int) {
	d = d[:len(v)*row]
	if active.spread != nil {
		active.spread(d, v, row)
		return
	}
	for r, x := range v {
		dd := d[r*row : (r+1)*row]
		for i := range dd {
			dd[i] = x
		}
	}
}

// Relu sets d[i] = max(x[i], 0) for every i < len(x), with Go's max: NaN stays NaN and
// -0 becomes +0. d must be at least as long as x.
func Relu(d, x []float32) {
	d = d[:len(x)]
	i := 0
	if active.relu != nil {
		i = active.relu(d, x)
	}
	for ; i < len(x); i++ {
		d[i] = max(x[i], 0)
	}
}
