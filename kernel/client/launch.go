package client

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/gml-dev/gml/kernel/wire"
)

// LocalConnection returns a connection for a kernel on this machine: five free tcp
// ports on 127.0.0.1 (or ipc socket files in dir when ipc is set) and a random key.
func LocalConnection(dir string, ipc bool) (wire.ConnectionInfo, error) {
	info := wire.ConnectionInfo{Transport: "tcp", IP: "127.0.0.1", Key: wire.NewID(),
		SignatureScheme: "hmac-sha256", KernelName: "gml"}
	ports := []*int{&info.ShellPort, &info.ControlPort, &info.StdinPort, &info.IOPubPort, &info.HBPort}
	if ipc {
		info.Transport, info.IP = "ipc", filepath.Join(dir, "kernel")
		for i, p := range ports {
			*p = i + 1
		}
		return info, nil
	}
	// Hold all five listeners until every port is chosen, so no port is picked twice.
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for _, p := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return info, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		*p = l.Addr().(*net.TCPAddr).Port
	}
	return info, nil
}

// Process is a kernel running as a child process, with a client connected to it.
type Process struct {
	Cmd    *exec.Cmd
	Client *Client
	Info   wire.ConnectionInfo
	// Started is when the process was started.
	Started time.Time

	stderr   lockedBuffer
	waitOnce sync.Once
	waitErr  error
	exited   chan struct{}
}

// Launch writes info to a connection file in dir, starts bin with args followed by
// "-f FILE", and connects a client (without waiting for the kernel to answer). env, when
// not nil, is the child's environment.
func Launch(bin string, args []string, dir string, info wire.ConnectionInfo, env []string) (*Process, error) {
	path := filepath.Join(dir, fmt.Sprintf("kernel-%s.json", wire.NewID()[:8]))
	if err := info.WriteFile(path); err != nil {
		return nil, err
	}
	p := &Process{Info: info, exited: make(chan struct{})}
	p.Cmd = exec.Command(bin, append(append([]string(nil), args...), "-f", path)...)
	p.Cmd.Env = env
	p.Cmd.Stdout = &p.stderr
	p.Cmd.Stderr = &p.stderr
	p.Started = time.Now()
	if err := p.Cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	go func() {
		p.waitErr = p.Cmd.Wait()
		close(p.exited)
	}()
	c, err := New(info)
	if err != nil {
		p.Kill()
		return nil, fmt.Errorf("connecting to the kernel: %w (kernel output: %s)", err, p.Output())
	}
	p.Client = c
	return p, nil
}

// Output returns what the process wrote to stdout and stderr so far.
func (p *Process) Output() string { return p.stderr.String() }

// Wait waits up to timeout for the process to exit and returns its exit error.
func (p *Process) Wait(timeout time.Duration) error {
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(timeout):
		return fmt.Errorf("kernel process %d still running after %v", p.Cmd.Process.Pid, timeout)
	}
}

// Alive reports whether the process is still running.
func (p *Process) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Shutdown asks the kernel to shut down and waits for it to exit; if it does not within
// timeout, it is killed. The client is closed either way.
func (p *Process) Shutdown(timeout time.Duration) error {
	var err error
	if p.Client != nil && p.Alive() {
		_, err = p.Client.Request(p.Client.Ch.Control, "shutdown_request", wire.ShutdownRequest{}, timeout)
		if err == nil {
			err = p.Wait(timeout)
		}
		p.Client.Close()
	}
	if p.Alive() {
		p.Kill()
		return errors.Join(err, errors.New("kernel had to be killed"))
	}
	return err
}

// Kill stops the process at once.
func (p *Process) Kill() {
	if p.Alive() {
		_ = p.Cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	}
}

// lockedBuffer is a bytes.Buffer safe for the concurrent writes of a child's stdout and
// stderr and reads of Output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
