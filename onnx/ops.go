package onnx

import (
	"slices"
	"sort"
)

// opDef is one supported ONNX operator: the first opset gml implements it for and its
// lowering. A lowering reads the node through ctx and sets every requested output;
// version differences are handled inside it with c.opset().
type opDef struct {
	since int
	lower func(c *ctx)
}

// opTable holds every supported operator of the default domain, filled by the init
// functions of the ops_*.go files.
var opTable = map[string]opDef{}

// register adds operators sharing one lowering.
func register(since int, lower func(c *ctx), names ...string) {
	for _, n := range names {
		if _, dup := opTable[n]; dup {
			panic("onnx: operator registered twice: " + n)
		}
		opTable[n] = opDef{since: since, lower: lower}
	}
}

// SupportedOps lists the ONNX operators (default domain) gml can load, sorted.
func SupportedOps() []string {
	out := make([]string, 0, len(opTable))
	for n := range opTable {
		out = append(out, n)
	}
	sort.Strings(out)
	return slices.Clip(out)
}
