package gemm

// kernelGo is the portable micro-kernel with the same contract as the assembly one: it
// adds the product of a packed mr×k A panel and a packed k×nr B panel to the mr×nr tile
// of c whose rows are ldc floats apart.
func kernelGo(k int, a, b, c []float32, ldc int) {
	var acc [mr * nr]float32
	for p := 0; p < k; p++ {
		ap := a[p*mr : p*mr+mr]
		bp := b[p*nr : p*nr+nr]
		for i, av := range ap {
			row := acc[i*nr : i*nr+nr]
			for j, bv := range bp {
				row[j] += av * bv
			}
		}
	}
	for i := 0; i < mr; i++ {
		cr := c[i*ldc : i*ldc+nr]
		for j := range cr {
			cr[j] += acc[i*nr+j]
		}
	}
}
