package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gml-dev/gml/kernel"
	"github.com/gml-dev/gml/kernel/exec"
	"github.com/gml-dev/gml/kernel/wire"
)

func init() {
	register("kernel", "run the Jupyter kernel: gml kernel -f CONNECTION_FILE", runKernel)
}

func runKernel(args []string) error {
	fs := flag.NewFlagSet("kernel", flag.ContinueOnError)
	file := fs.String("f", "", "the connection `FILE` written by the Jupyter front end")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" || fs.NArg() > 0 {
		return fmt.Errorf("usage: gml kernel -f CONNECTION_FILE")
	}
	info, err := wire.ReadConnectionFile(*file)
	if err != nil {
		return err
	}
	// Cells capture fds 1 and 2, so the kernel logs to a copy of the original stderr.
	logger := log.New(exec.OriginalStderr(), "gml kernel: ", log.LstdFlags|log.Lmicroseconds)
	k, err := kernel.New(kernel.Config{
		Info: info,
		NewExecutor: func() (kernel.Executor, error) {
			in, err := exec.New()
			if err != nil {
				return nil, err
			}
			return interpreter{in}, nil
		},
		Logger:       logger,
		Version:      versionString(),
		HistoryFile:  historyFile(),
		HandleSIGINT: true,
	})
	if err != nil {
		return err
	}
	restart, err := k.Run(context.Background())
	if restart {
		logger.Printf("shutting down for a restart; the front end starts a new kernel")
	}
	return err
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
