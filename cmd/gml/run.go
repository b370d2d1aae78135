package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/gml-dev/gml/kernel/exec"
	"github.com/gml-dev/gml/notebook"
)

func init() {
	register("run", "execute a notebook headless: run NOTEBOOK.ipynb [-o OUT.ipynb] [--timeout D]", runNotebook)
}

// runNotebook executes the code cells of a notebook in order, in this process, and
// writes the executed notebook (-o) or prints its outputs as text. Each failing cell's
// error goes to stderr and the exit status is non-zero when any cell failed.
func runNotebook(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	out := fs.String("o", "", "write the executed notebook to this file (default: print outputs as text)")
	timeout := fs.Duration("timeout", 0, "stop a cell that runs longer than this (e.g. 10m; 0 = no limit)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: gml run NOTEBOOK.ipynb [-o OUT.ipynb] [--timeout D]")
		fs.PrintDefaults()
	}
	// Flags may come before or after the notebook path.
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fs.Usage()
		return errors.New("missing the notebook to run")
	}
	path := rest[0]
	if err := fs.Parse(rest[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	nb, err := notebook.Read(path)
	if err != nil {
		return err
	}
	interp, err := exec.New()
	if err != nil {
		return err
	}
	defer interp.Close()
	// Ctrl-C interrupts the running cell; the run then goes on to report it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	failures := notebook.Run(ctx, nb, interp, notebook.RunOptions{
		Timeout: *timeout,
		OnCell: func(c *notebook.Cell, f *notebook.Failure) {
			if f != nil {
				fmt.Fprintf(os.Stderr, "%s: cell %d (In[%d]) failed:\n%s\n", path, f.Index+1, f.Count, strings.Join(f.Err.Traceback, "\n"))
			}
		},
	})
	if *out != "" {
		if err := nb.Write(*out); err != nil {
			return err
		}
	} else if err := notebook.WriteText(os.Stdout, nb); err != nil {
		return err
	}
	if len(failures) > 0 {
		return fmt.Errorf("%s: %d of its cells failed (run took %.1fs)", path, len(failures), time.Since(start).Seconds())
	}
	return nil
}
