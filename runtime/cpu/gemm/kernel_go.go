package gemm

// kernelGo is the portable micro-kernel with the same contract as the assembly one: it
// adds the product of a packed mr×k A panel and a packed k×nr B panel to the mr×nr tile
// of c whose rows are ldc floats apart. It sums one row by four columns at a time in
// four scalar accumulators, which the compiler keeps in registers.
func kernelGo(k int, a, b, c []float32, ldc int) {
	a, b = a[:k*mr], b[:k*nr]
	for i := 0; i < mr; i++ {
		cr := c[i*ldc : i*ldc+nr]
		for j := 0; j < nr; j += 4 {
			var s0, s1, s2, s3 float32
			for p := 0; p < k; p++ {
				av := a[p*mr+i]
				bp := (*[4]float32)(b[p*nr+j:])
				s0 += av * bp[0]
				s1 += av * bp[1]
				s2 += av * bp[2]
				s3 += av * bp[3]
			}
			cr[j] += s0
			cr[j+1] += s1
			cr[j+2] += s2
			cr[j+3] += s3
		}
	}
}
