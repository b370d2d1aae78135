package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// runShell runs a `!command` line with sh -c. Its output goes to the cell's stdout and
// stderr, which the kernel streams as it comes; its standard input is empty. Interrupting
// the cell sends SIGINT to the command's process group, then SIGKILL after 2 s. A
// command that fails (exit status not 0, or killed) fails the cell.
func (i *Interp) runShell(ctx context.Context, command string) Result {
	if command == "" {
		return Result{Err: magicError("! needs a command: !ls -l")}
	}
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return Result{Err: magicError(fmt.Sprintf("!%s: %v", command, err))}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case err = <-done:
		case <-time.After(2 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			err = <-done
		}
		return Result{Err: interruptError(context.Canceled)}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		msg := fmt.Sprintf("!%s: exit status %d", command, exit.ExitCode())
		if st, ok := exit.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			msg = fmt.Sprintf("!%s: killed by %v", command, st.Signal())
		}
		return Result{Err: &Error{Name: "ShellError", Value: msg, Traceback: []string{"ShellError: " + msg}}}
	}
	if err != nil {
		return Result{Err: magicError(fmt.Sprintf("!%s: %v", command, err))}
	}
	return Result{}
}
