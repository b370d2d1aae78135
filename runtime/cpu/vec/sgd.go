package vec

// SGDConsts are the scalars of one SGD step, by index: the momentum μ, the weight decay
// and the learning rate.
type SGDConsts [3]float32

// SGDStep updates p and its velocity vel in place from the gradient g, element by
// element, in float32 rounded after each operation:
//
//	g' = g + wd·p;  vel = μ·vel + g';  s = vel, or g' + μ·vel with Nesterov;  p = p - lr·s
//
// As in AdamStep, the assembly (which takes the tail too, padded) treats subnormal
// numbers as zero, and the Go code gives the same bits unless a subnormal occurs.
func SGDStep(c *SGDConsts, nesterov bool, p, g, vel []float32) {
	g, vel = g[:len(p)], vel[:len(p)]
	if active.level == Go || !sgdAsmBuilt {
		sgdGo(c, nesterov, p, g, vel)
		return
	}
	i := sgdAsm(active.level, c, nesterov, p, g, vel)
	if i == len(p) {
		return
	}
	padTail(i, [][]float32{p, g, vel}, func(t [][]float32) { sgdAsm(active.level, c, nesterov, t[0], t[1], t[2]) })
}

// padTail runs step on the elements of the slices s from i on (fewer than a vector, the
// same number in each), copied into vectors padded with zeros, so the assembly treats
// them as any other vector and an element's result does not depend on where the slices
// end (a thread's share). It copies the results back into every slice but s[1], the
// gradient, which an optimizer step only reads.
func padTail(i int, s [][]float32, step func(t [][]float32)) {
	var buf [4][16]float32
	t := make([][]float32, len(s))
	n := 0
	for k, x := range s {
		n = copy(buf[k][:], x[i:])
		t[k] = buf[k][:]
	}
	step(t)
	for k, x := range s {
		if k != 1 {
			copy(x[i:], buf[k][:n])
		}
	}
}

func sgdGo(c *SGDConsts, nesterov bool, p, g, vel []float32) {
	mu, wd, lr := c[0], c[1], c[2]
	g, vel = g[:len(p)], vel[:len(p)]
	for i := range p {
		// Each product rounded (float32(...)), so no architecture fuses a multiply-add.
		gi := g[i] + float32(wd*p[i])
		v := float32(mu*vel[i]) + gi
		vel[i] = v
		if nesterov {
			v = gi + float32(mu*v)
		}
		p[i] -= float32(lr * v)
	}
}
