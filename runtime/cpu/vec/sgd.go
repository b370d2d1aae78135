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
	var k call
	k.op, k.s[0], k.s[1], k.s[2], k.in, k.out, k.sgd, k.nesterov = opSGD, p, g[:len(p)], vel[:len(p)], 0x7, 1<<0|1<<2, c, nesterov
	k.run()
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
