package exec

import (
	"errors"
	"strings"
	"testing"
)

// TestSharpEdges covers issue 15 item 7: interpreter failures caught and explained
// with the cell's line (the redefined struct type is TestRedefinition's).
func TestSharpEdges(t *testing.T) {
	runSteps(t, newInterp(t), []step{
		{code: "x := tensor.New(tensor.F32, 2, 2)\nx.Float32s()[0] + 1.5", result: "1.5"},
		{code: "y := w.Float32s()[0] + 1.5", errName: nameCompile, errHas: "cell[2]:1:6: undefined: w\n    y := w.Float32s()[0] + 1.5\n         ^"},
		{code: "func first() float32 {\n\treturn zz.Float32s()[0] + 1.5\n}", errName: nameCompile, errHas: "cell[3]:2:9: undefined: zz"},
		{code: "type Bad struct{}\nfunc (Bad) Build(b *nn.Builder, in []nn.Spec) error { return nil }\nfunc (Bad) Call(f *nn.Forward, in *tensor.Node) *tensor.Node { return in }", result: ""},
		{code: "import \"github.com/some/module\"", errName: nameCompile, errHas: `cell[5]:1:8: cannot import "github.com/some/module": fetch its module first with %go get MODULE@VERSION`},
		{code: "l := nn.Custom(\"bad\", Bad{})", errName: namePanic,
			errHas: "method Call of Bad does not have the signature nn.CustomLayer needs: want Call(*nn.Forward, []*tensor.Node) *tensor.Node, have Call(*nn.Forward, *tensor.Node) *tensor.Node"},
	})
}

func TestExplainInference(t *testing.T) {
	code := "ys := Map(xs, func(int) string { return \"\" })"
	err := explain(errors.New("cell[4]/_.go:1:7: undefined type for U"), 4, code)
	if !strings.Contains(err.Error(), "give them, as in Map[int, string](...)") || !strings.HasPrefix(err.Error(), "cell[4]:1:7: undefined type for U") {
		t.Errorf("explained as %q", err)
	}
}

func TestCalleeAt(t *testing.T) {
	cases := []struct {
		code      string
		line, col int
		arg       bool
		want      string
	}{
		{"ys := Map(xs, f)", 1, 7, false, "Map"},
		{"ys := slices.Map(xs, func(int) string { return \"\" })", 1, 22, true, "slices.Map"},
		{"a := g(h(1), func() {})", 1, 14, true, "g"},
		{"firstN(slices.Values(xs), 2)", 1, 8, true, "firstN"},
		{"x", 1, 1, false, "F"},
	}
	for _, c := range cases {
		if got := calleeAt(c.code, c.line, c.col, c.arg); got != c.want {
			t.Errorf("calleeAt(%q, %d, %d) = %q, want %q", c.code, c.line, c.col, got, c.want)
		}
	}
}
