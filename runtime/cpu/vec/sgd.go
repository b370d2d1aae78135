package vec

// SGDConsts are the scalars of one SGD step, by index: the momentum μ, the weight decay
// and the learning rate.
type SGDConsts [3]float32

// SGDStep updates p and its velocity vel in place from the gradient g, element by
// element, in float32 rounded after each operation (the assembly does the same
// operations in the same order, so every level gives the same result):
//
//	g' = g + wd·p;  vel = μ·vel + g';  s = vel, or g' + μ·vel with Nesterov;  p = p - lr·s
//
// Subnormal numbers count as zero, as operands and as results (ftz.go says why).
func SGDStep(c *SGDConsts, nesterov bool, p, g, vel []float32) {
	g, vel = g[:len(p)], vel[:len(p)]
	i := sgdAsm(active.level, c, nesterov, p, g, vel)
	sgdGo(c, nesterov, p[i:], g[i:], vel[i:])
}

func sgdGo(c *SGDConsts, nesterov bool, p, g, vel []float32) {
	mu, wd, lr := daz(c[0]), daz(c[1]), daz(c[2])
	g, vel = g[:len(p)], vel[:len(p)]
	for i := range p {
		pi := daz(p[i])
		gi := addFTZ(daz(g[i]), mulFTZ(wd, pi))
		v := addFTZ(mulFTZ(mu, daz(vel[i])), gi)
		vel[i] = v
		if nesterov {
			v = addFTZ(gi, mulFTZ(mu, v))
		}
		p[i] = subFTZ(pi, mulFTZ(lr, v))
	}
}
