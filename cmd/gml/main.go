// Command gml is the one binary of the gml project: the Jupyter kernel, the kernelspec
// installer, the headless notebook runner, device diagnostics, conformance runners and
// benchmarks (package bench). Each subcommand lives in its own file and registers itself
// in init.
package main

import (
	"fmt"
	"os"
	"sort"
)

// command is one subcommand: its one-line summary and the function that runs it with
// the arguments after its name.
type command struct {
	summary string
	run     func(args []string) error
}

var commands = map[string]command{}

// register adds a subcommand; it is called from init functions of this package.
func register(name, summary string, run func(args []string) error) {
	if _, dup := commands[name]; dup {
		panic("gml: subcommand registered twice: " + name)
	}
	commands[name] = command{summary: summary, run: run}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: gml COMMAND [ARGS]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "gml: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err := cmd.run(os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "gml %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
