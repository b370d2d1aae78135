package display_test

import (
	"fmt"

	"github.com/gml-dev/gml/display"
)

func ExampleHTML() {
	display.Show(display.HTML("<b>bold</b> &amp; plain"))
	// Output: bold & plain
}

func ExampleNewTable() {
	t := display.NewTable("layer", "params").Row("dense", 784*128+128).Row("out", 1290)
	display.Show(t)
	// Output:
	// layer  params
	// -----  ------
	// dense  100480
	// out    1290
}

func ExampleJSON() {
	fmt.Println(display.JSON(map[string]int{"a": 1}))
	// Output:
	// {
	//   "a": 1
	// }
}

func ExampleNewDisplay() {
	h := display.NewDisplay(display.Text("step 1"))
	h.Update(display.Text("step 2"))
	// Output:
	// step 1
	// step 2
}

func ExampleLinePlot() {
	p := display.LinePlot("loss", "epoch", "loss", display.Series{Name: "train", Y: []float64{1, 0.5, 0.3}})
	b := p.MIMEBundle()
	fmt.Println(b["text/plain"], b["image/png"] != nil, b["image/svg+xml"] != nil)
	// Output: LinePlot("loss", 1 series) true true
}
