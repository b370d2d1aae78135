package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	_ "github.com/gml-dev/gml/backends" // the CPU and Vulkan backends
	"github.com/gml-dev/gml/onnx"
	"github.com/gml-dev/gml/runtime"
)

func init() {
	register("onnx-test", "run ONNX backend-test cases (NAME/model.onnx + test_data_set_*) and compare outputs", runONNXTest)
}

// errCasesFailed makes the exit status 1 after the summary line has been printed.
var errCasesFailed = errors.New("some cases failed")

// runONNXTest runs every case under the given directories on one device, prints a PASS,
// FAIL or SKIP line per case and the summary line, and fails when a case failed.
func runONNXTest(args []string) error {
	fs := flag.NewFlagSet("onnx-test", flag.ContinueOnError)
	device := fs.String("device", "cpu", "device: cpu, gpu or auto")
	rtol := fs.Float64("rtol", onnx.DefaultTolerance.Rtol, "relative tolerance")
	atol := fs.Float64("atol", onnx.DefaultTolerance.Atol, "absolute tolerance")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: gml onnx-test [--device cpu|gpu|auto] [--rtol R] [--atol A] DIR...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("no directory given")
	}
	cases, err := onnx.FindCases(fs.Args()...)
	if err != nil {
		return err
	}
	rt, err := runtime.New(runtime.Device(*device))
	if err != nil {
		return err
	}
	defer rt.Close()
	var pass, fail, skip int
	for _, dir := range cases {
		r := onnx.CheckCase(dir, onnx.Tolerance{Rtol: *rtol, Atol: *atol}, onnx.Runtime(rt))
		fmt.Println(r)
		switch r.Status {
		case onnx.CasePass:
			pass++
		case onnx.CaseFail:
			fail++
		default:
			skip++
		}
	}
	fmt.Printf("%d passed, %d failed, %d skipped\n", pass, fail, skip)
	if fail > 0 {
		return errCasesFailed
	}
	return nil
}
