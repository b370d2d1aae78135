package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/gml-dev/gml/kernel"
	"github.com/gml-dev/gml/kernel/exec"
	"github.com/gml-dev/gml/kernel/wire"
	"github.com/gml-dev/gml/kernel/worker"
)

func init() {
	register("kernel", "run the Jupyter kernel: gml kernel -f CONNECTION_FILE", runKernel)
}

func runKernel(args []string) error {
	fs := flag.NewFlagSet("kernel", flag.ContinueOnError)
	file := fs.String("f", "", "the connection `FILE` written by the Jupyter front end")
	asWorker := fs.Bool("worker", false, "run as the kernel's worker process (started by the kernel itself)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *asWorker {
		return runWorker()
	}
	if *file == "" || fs.NArg() > 0 {
		return fmt.Errorf("usage: gml kernel -f CONNECTION_FILE")
	}
	info, err := wire.ReadConnectionFile(*file)
	if err != nil {
		return err
	}
	logger := log.New(os.Stderr, "gml kernel: ", log.LstdFlags|log.Lmicroseconds)
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the gml binary for the kernel's worker: %w", err)
	}
	// Cells run in a worker process that this one supervises and replaces when it dies
	// (package kernel/worker). It is started first, so that its start overlaps with
	// binding the sockets.
	var k atomic.Pointer[kernel.Kernel]
	type started struct {
		s   *worker.Supervisor
		err error
	}
	sup := make(chan started, 1)
	go func() {
		s, err := worker.Start(worker.Config{
			Command:    []string{self, "kernel", "-worker"},
			Log:        logger,
			IsComplete: exec.IsComplete,
			OnRestart: func() {
				if k := k.Load(); k != nil {
					k.Restarted()
				}
			},
			Exited: exec.RemoveWorkspaces, // the %go get workspace a worker that died left
		})
		sup <- started{s, err}
	}()
	kn, err := kernel.New(kernel.Config{
		Info: info,
		NewExecutor: func() (kernel.Executor, error) {
			st := <-sup
			return st.s, st.err
		},
		Logger:       logger,
		Version:      versionString(),
		HistoryFile:  historyFile(),
		HandleSIGINT: true,
	})
	if err != nil {
		if st := <-sup; st.s != nil {
			st.s.Close()
		}
		return err
	}
	k.Store(kn)
	restart, err := kn.Run(context.Background())
	if restart {
		logger.Printf("shutting down for a restart; the front end starts a new kernel")
	}
	return err
}

// runWorker is the kernel's worker process: it runs cells for the supervisor that
// started it. Its stdout and stderr are the cells' output, read by the supervisor.
func runWorker() error {
	return worker.Serve(func(h worker.Hooks) (kernel.Executor, error) {
		// The supervisor shows what an interrupted cell that does not stop is doing,
		// and ends the worker on a second interrupt: wait for the cell as long as it takes.
		in, err := exec.New(exec.WithoutCapture(), exec.WithStop(0, h.Stuck))
		if err != nil {
			return nil, err
		}
		return interpreter{in}, nil
	})
}

// historyFile is where the kernel appends executed cells: $GML_HISTORY_FILE when set
// (empty disables the file), else $XDG_DATA_HOME/gml/history.jsonl, else
// ~/.local/share/gml/history.jsonl.
func historyFile() string {
	if f, ok := os.LookupEnv("GML_HISTORY_FILE"); ok {
		return f
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "gml", "history.jsonl")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".local", "share", "gml", "history.jsonl")
}

// interpreter adapts exec.Interp to kernel.Executor.
type interpreter struct{ *exec.Interp }

func (in interpreter) Execute(ctx context.Context, code string, pub kernel.Publisher) kernel.Result {
	r := in.Interp.Execute(ctx, code, pub)
	res := kernel.Result{Data: r.Data, Metadata: r.Metadata}
	if r.Err != nil {
		res.Err = &kernel.CellError{Name: r.Err.Name, Value: r.Err.Value, Traceback: r.Err.Traceback}
	}
	return res
}

func (interpreter) IsComplete(code string) (string, string) { return exec.IsComplete(code) }
