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
	"golang.org/x/sys/unix"
)

func init() {
	register("run", "execute a notebook headless: run NOTEBOOK.ipynb [-o OUT.ipynb] [--timeout D]", runNotebook)
}

// runNotebook executes the code cells of a notebook in order, in this process. Each
// cell's output is printed as it comes (stdout), with a progress line before and after
// each cell (stderr); -o writes the executed notebook after every cell, so an
// interrupted or killed run keeps what finished. Each failing cell's error goes to
// stderr and the exit status is non-zero when any cell failed.
func runNotebook(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	out := fs.String("o", "", "write the executed notebook to this file, after every cell")
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
	total := 0
	for _, c := range nb.Cells {
		if c.Type == "code" {
			total++
		}
	}
	// While a cell runs the interpreter captures file descriptors 1 and 2 (and reports
	// what arrives through Live): live output and progress lines go to duplicates of
	// them taken now.
	stdout, err := dupFile(1, "stdout")
	if err != nil {
		return err
	}
	defer stdout.Close()
	stderr := exec.OriginalStderr()
	done, cellStart := 0, time.Now()
	var writeErr error
	failures := notebook.Run(ctx, nb, interp, notebook.RunOptions{
		Timeout: *timeout,
		Live:    stdout,
		OnStart: func(c *notebook.Cell) {
			cellStart = time.Now()
			fmt.Fprintf(stderr, "gml run: [%d/%d] In[%d] running\n", done+1, total, *c.ExecutionCount)
		},
		OnCell: func(c *notebook.Cell, f *notebook.Failure) {
			done++
			status := "done"
			if f != nil {
				status = "FAILED"
			}
			fmt.Fprintf(stderr, "gml run: [%d/%d] In[%d] %s in %.1fs\n", done, total, *c.ExecutionCount, status, time.Since(cellStart).Seconds())
			if f != nil {
				fmt.Fprintf(stderr, "%s: cell %d (In[%d]) failed:\n%s\n", path, f.Index+1, f.Count, strings.Join(f.Err.Traceback, "\n"))
			}
			if *out != "" && writeErr == nil {
				writeErr = nb.Write(*out)
			}
		},
	})
	if writeErr != nil {
		return writeErr
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: interrupted after %d of %d cells", path, done, total)
	}
	if len(failures) > 0 {
		return fmt.Errorf("%s: %d of its cells failed (run took %.1fs)", path, len(failures), time.Since(start).Seconds())
	}
	return nil
}

// dupFile returns a duplicate of file descriptor fd (closed on exec).
func dupFile(fd int, name string) (*os.File, error) {
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("duplicating %s: %w", name, err)
	}
	return os.NewFile(uintptr(d), name), nil
}
