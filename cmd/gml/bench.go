package main

import (
	"fmt"
	"os"

	"github.com/gml-dev/gml/bench"
)

func init() {
	register("bench", "run a benchmark, printing JSON lines: gml bench NAME [ARGS]", runBench)
}

// runBench lists the benchmarks of package bench or runs one of them.
func runBench(args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(os.Stderr, "usage: gml bench NAME [ARGS]\n\nbenchmarks:")
		for _, n := range bench.Names() {
			fmt.Fprintf(os.Stderr, "  %-12s %s\n", n, bench.Summary(n))
		}
		if len(args) == 0 {
			return fmt.Errorf("no benchmark named")
		}
		return nil
	}
	return bench.Run(args[0], args[1:])
}
