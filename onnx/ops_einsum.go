package onnx

import (
	"slices"
	"strings"

	"github.com/gml-dev/gml/tensor"
)

// Einsum as engine ops: each operand first takes its diagonals (a label repeated in one
// term) and sums the labels no other operand nor the output uses; operands are then
// contracted pairwise, left to right, as one batched product each (shared labels kept
// by the output or later operands are the batch, the others are summed); the result is
// summed and permuted to the output's labels. Ellipses stand for the same run of
// leading labels in every term.

func init() {
	register(12, lowerEinsum, "Einsum")
}

// term is an operand (or partial result) with one label per axis.
type term struct {
	x      *tensor.Node
	labels []rune
}

func lowerEinsum(c *ctx) {
	eq := strings.ReplaceAll(c.attrString("equation", ""), " ", "")
	lhs, out, explicit := strings.Cut(eq, "->")
	specs := strings.Split(lhs, ",")
	if len(specs) != c.nin() {
		c.failf("equation %q has %d operands, the node %d", eq, len(specs), c.nin())
	}
	dt := c.dtype(0)
	// Ellipses become labels that cannot clash with letters.
	ell := 0
	terms := make([]term, len(specs))
	for i, sp := range specs {
		x := c.x(i)
		r := x.Shape().Rank()
		labels := expandEllipsis(c, sp, r, &ell)
		terms[i] = term{x: x, labels: labels}
	}
	var outLabels []rune
	if explicit {
		outLabels = expandEllipsis(c, out, -1, &ell)
	} else {
		// Implicit output: the ellipsis labels, then the labels used once, sorted.
		count := map[rune]int{}
		for _, t := range terms {
			for _, l := range t.labels {
				count[l]++
			}
		}
		for l := range ellipsisLabels(ell) {
			outLabels = append(outLabels, l)
		}
		var once []rune
		for l, n := range count {
			if n == 1 && !isEllipsisLabel(l) {
				once = append(once, l)
			}
		}
		slices.Sort(once)
		outLabels = append(outLabels, once...)
	}
	for i := range terms {
		terms[i] = diagonals(terms[i])
	}
	// needed reports whether a label is used outside terms[skip...] by the output or
	// by another remaining term.
	needed := func(l rune, ts []term, self int) bool {
		if slices.Contains(outLabels, l) {
			return true
		}
		for j, t := range ts {
			if j != self && slices.Contains(t.labels, l) {
				return true
			}
		}
		return false
	}
	for i := range terms {
		terms[i] = sumUnused(terms[i], func(l rune) bool { return needed(l, terms, i) })
	}
	acc := terms[0]
	for i := 1; i < len(terms); i++ {
		rest := append([]term{acc}, terms[i+1:]...)
		keep := func(l rune) bool {
			if slices.Contains(outLabels, l) {
				return true
			}
			for _, t := range rest[1:] {
				if slices.Contains(t.labels, l) {
					return true
				}
			}
			return false
		}
		acc = contract(c, acc, terms[i], keep)
	}
	acc = sumUnused(acc, func(l rune) bool { return slices.Contains(outLabels, l) })
	perm := make([]int, len(outLabels))
	for i, l := range outLabels {
		k := slices.Index(acc.labels, l)
		if k < 0 {
			c.failf("output label %q is not in any operand", l)
		}
		perm[i] = k
	}
	y := acc.x
	if !slices.Equal(perm, identityPerm(len(perm))) {
		y = tensor.Permute(y, perm...)
	}
	c.set(0, y, dt)
}

// ellipsisBase is where the labels ellipses expand to start (private-use runes).
const ellipsisBase = 0xE000

func isEllipsisLabel(l rune) bool { return l >= ellipsisBase && l < ellipsisBase+64 }

// ellipsisLabels iterates the n ellipsis labels.
func ellipsisLabels(n int) func(func(rune) bool) {
	return func(yield func(rune) bool) {
		for i := range n {
			if !yield(rune(ellipsisBase + i)) {
				return
			}
		}
	}
}

// expandEllipsis returns the labels of a term of rank r (-1: the output, whose
// ellipsis covers every ellipsis label seen), its "..." replaced by the trailing
// ellipsis labels; ell tracks the widest ellipsis.
func expandEllipsis(c *ctx, sp string, r int, ell *int) []rune {
	before, after, has := strings.Cut(sp, "...")
	if !has {
		labels := []rune(sp)
		if r >= 0 && len(labels) != r {
			c.failf("term %q for an operand of rank %d", sp, r)
		}
		return labels
	}
	n := *ell
	if r >= 0 {
		n = r - len([]rune(before)) - len([]rune(after))
		if n < 0 {
			c.failf("term %q for an operand of rank %d", sp, r)
		}
		*ell = max(*ell, n)
	}
	labels := []rune(before)
	// Ellipses align at the right: a shorter one takes the last labels.
	for i := *ell - n; i < *ell; i++ {
		labels = append(labels, rune(ellipsisBase+i))
	}
	return append(labels, []rune(after)...)
}

func identityPerm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// diagonals replaces each label repeated within a term by its diagonal.
func diagonals(t term) term {
	for {
		i, j := -1, -1
		for a := range t.labels {
			if b := slices.Index(t.labels[a+1:], t.labels[a]); b >= 0 {
				i, j = a, a+1+b
				break
			}
		}
		if i < 0 {
			return t
		}
		// Move the two axes last, flatten them and take every (n+1)-th element.
		r := len(t.labels)
		perm := make([]int, 0, r)
		for a := range r {
			if a != i && a != j {
				perm = append(perm, a)
			}
		}
		perm = append(perm, i, j)
		x := tensor.Permute(t.x, perm...)
		s := x.Shape()
		n := s[r-1]
		x = tensor.Reshape(x, append(s[:r-2].Clone(), n*n)...)
		st, en, sp := make([]int, r-1), []int(x.Shape().Clone()), onesOf(r-1)
		sp[r-2] = n + 1
		x = tensor.Slice(x, st, en, sp)
		labels := make([]rune, 0, r-1)
		for _, a := range perm[:r-2] {
			labels = append(labels, t.labels[a])
		}
		t = term{x: x, labels: append(labels, t.labels[i])}
	}
}

// sumUnused sums the axes whose labels keep rejects.
func sumUnused(t term, keep func(rune) bool) term {
	var axes []int
	var labels []rune
	for a, l := range t.labels {
		if keep(l) {
			labels = append(labels, l)
		} else {
			axes = append(axes, a)
		}
	}
	if len(axes) == 0 {
		return t
	}
	return term{x: tensor.Sum(t.x, axes, false), labels: labels}
}

// contract multiplies two terms: labels in both that keep accepts are batch axes,
// labels in both that it rejects are summed, the others are free.
func contract(c *ctx, a, b term, keep func(rune) bool) term {
	var batch, sum, freeA, freeB []rune
	for _, l := range a.labels {
		switch {
		case !slices.Contains(b.labels, l):
			freeA = append(freeA, l)
		case keep(l):
			batch = append(batch, l)
		default:
			sum = append(sum, l)
		}
	}
	for _, l := range b.labels {
		if !slices.Contains(a.labels, l) {
			freeB = append(freeB, l)
		}
	}
	size := func(t term, ls []rune) (dims []int, n int) {
		n = 1
		for _, l := range ls {
			d := t.x.Shape()[slices.Index(t.labels, l)]
			dims = append(dims, d)
			n *= d
		}
		return dims, n
	}
	arrange := func(t term, order ...[]rune) *tensor.Node {
		var perm []int
		for _, ls := range order {
			for _, l := range ls {
				perm = append(perm, slices.Index(t.labels, l))
			}
		}
		if slices.Equal(perm, identityPerm(len(perm))) {
			return t.x
		}
		return tensor.Permute(t.x, perm...)
	}
	// Batch sizes may broadcast (size 1 in one operand): expand both to the larger.
	bdA, nb := size(a, batch)
	bdB, _ := size(b, batch)
	for i := range bdA {
		if bdA[i] != bdB[i] && bdA[i] != 1 && bdB[i] != 1 {
			c.failf("label %q has sizes %d and %d", batch[i], bdA[i], bdB[i])
		}
		bdA[i] = max(bdA[i], bdB[i])
	}
	nb = 1
	for _, d := range bdA {
		nb *= d
	}
	fa, nfa := size(a, freeA)
	fb, nfb := size(b, freeB)
	_, ns := size(a, sum)
	xa := arrange(a, batch, freeA, sum)
	xb := arrange(b, batch, sum, freeB)
	expand := func(x *tensor.Node) *tensor.Node {
		want := append(slices.Clone(bdA), x.Shape()[len(batch):]...)
		if x.Shape().Equal(want) {
			return x
		}
		return tensor.Expand(x, want...)
	}
	xa, xb = expand(xa), expand(xb)
	xa = tensor.Reshape(xa, nb, nfa, ns)
	xb = tensor.Reshape(xb, nb, ns, nfb)
	y := matmul(c, xa, xb)
	shape := append(append(slices.Clone(bdA), fa...), fb...)
	return term{x: tensor.Reshape(y, shape...), labels: append(append(slices.Clone(batch), freeA...), freeB...)}
}
