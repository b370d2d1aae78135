package cpu

import (
	"fmt"
	"slices"

	"github.com/gml-dev/gml/tensor"
)

// kernelFactory prepares the computation of node n. out is n's output memory and in[i]
// the memory of input i, each sliced to exactly the tensor's size and valid for the
// life of the program. The factory resolves everything that does not change between
// runs (attributes, strides, loop bounds, scratch memory) and returns the closure that
// computes the node; the closure must not allocate or look anything up by map.
// Errors the closure returns are data errors found at run time (an index out of range).
type kernelFactory func(n *tensor.Node, out []byte, in [][]byte) (func() error, error)

// kernel is one registration: the dtypes of input 0 it accepts and its factory.
type kernel struct {
	dtypes  []tensor.DType
	factory kernelFactory
}

var kernels [tensor.NumOps][]kernel

// register records the kernel of op for nodes whose input 0 has one of dtypes. Files
// kernels_*.go call it from init. F16 and BF16 nodes of an op registered for F32 but not
// for the half type are computed by widening (see widen.go).
func register(op tensor.Op, dtypes []tensor.DType, f kernelFactory) {
	for _, k := range kernels[op] {
		for _, d := range dtypes {
			if slices.Contains(k.dtypes, d) {
				panic(fmt.Sprintf("cpu: kernel for %v on %v registered twice", op, d))
			}
		}
	}
	kernels[op] = append(kernels[op], kernel{dtypes: dtypes, factory: f})
}

// Dtype sets used by registrations.
var (
	floatTypes   = []tensor.DType{tensor.F32}
	numericTypes = []tensor.DType{tensor.F32, tensor.I32, tensor.I64}
	intTypes     = []tensor.DType{tensor.I32, tensor.I64}
	allTypes     = []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.I32, tensor.I64, tensor.Bool}
)

// keyDType is the dtype a kernel is selected by: that of input 0.
func keyDType(n *tensor.Node) tensor.DType {
	if len(n.Inputs()) == 0 {
		return n.DType()
	}
	return n.Input(0).DType()
}

// lookup finds the factory for n's op and key dtype.
func lookup(op tensor.Op, dt tensor.DType) kernelFactory {
	for _, k := range kernels[op] {
		if slices.Contains(k.dtypes, dt) {
			return k.factory
		}
	}
	return nil
}

// Supports reports whether the backend can compute n: a source, a reshape, or an op
// with a kernel for its input dtype (directly or by widening half types to F32).
func (c *Backend) Supports(n *tensor.Node) bool {
	if n.Op().Kind() == tensor.KindSource || n.Op() == tensor.OpReshape {
		return true
	}
	if lookup(n.Op(), keyDType(n)) != nil {
		return true
	}
	return needsWidening(n) && lookup(n.Op(), tensor.F32) != nil
}
