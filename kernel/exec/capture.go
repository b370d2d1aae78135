package exec

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/gml-dev/gml/kernel/internal/pipeio"
)

// flushInterval is how often captured output is sent while a cell runs, so that partial
// lines (progress text, prompts) show promptly.
const flushInterval = 50 * time.Millisecond

// captureMu serialises redirections of fd 1 and 2, which are process-wide.
var captureMu sync.Mutex

var (
	origStderrOnce sync.Once
	origStderr     *os.File
)

// OriginalStderr returns a file on the process's standard error as it was before any
// cell redirected fd 2. The kernel logs through it, since fd 2 is captured while a cell
// runs. It is taken once, on first use, and Execute calls it before redirecting.
func OriginalStderr() *os.File {
	origStderrOnce.Do(func() {
		fd, err := dupCloexec(2)
		if err != nil {
			origStderr = os.Stderr
			return
		}
		origStderr = os.NewFile(uintptr(fd), "/dev/stderr (original)")
	})
	return origStderr
}

func dupCloexec(fd int) (int, error) {
	nfd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(nfd), nil
}

// stream is one captured file descriptor: a pipe whose read end a goroutine drains into
// buf until the write end (the fd) is restored.
type stream struct {
	name  string // "stdout" or "stderr"
	fd    int    // 1 or 2
	saved int    // dup of the fd before redirection
	r     *os.File
	rfd   int
	mu    sync.Mutex
	buf   []byte
	eof   chan struct{}
}

// capture redirects fd 1 and 2 to pipes for the duration of a cell and sends what
// arrives to the publisher every flushInterval, on flush, and at stop.
type capture struct {
	send    func(name, text string)
	streams []*stream
	flushMu sync.Mutex
	tick    *time.Ticker
	quit    chan struct{}
	ticking sync.WaitGroup
}

func startCapture(send func(name, text string)) (*capture, error) {
	OriginalStderr()
	captureMu.Lock()
	c := &capture{send: send, quit: make(chan struct{})}
	for _, t := range []struct {
		name string
		fd   int
	}{{"stdout", 1}, {"stderr", 2}} {
		s, err := redirect(t.name, t.fd)
		if err != nil {
			c.restore()
			captureMu.Unlock()
			return nil, err
		}
		c.streams = append(c.streams, s)
	}
	// A fatal error while fd 2 is a pipe would vanish with the process: send crash
	// reports to the original stderr as well, while the cell runs.
	if err := debug.SetCrashOutput(OriginalStderr(), debug.CrashOptions{}); err != nil {
		fmt.Fprintf(OriginalStderr(), "gml: cannot route crash reports: %v\n", err)
	}
	c.tick = time.NewTicker(flushInterval)
	c.ticking.Add(1)
	go func() {
		defer c.ticking.Done()
		for {
			select {
			case <-c.tick.C:
				c.flush(false)
			case <-c.quit:
				return
			}
		}
	}()
	return c, nil
}

func redirect(name string, fd int) (*stream, error) {
	var p [2]int
	// The read end is non-blocking so that the runtime poller serves it and Close can
	// interrupt a pending read; the write end, which becomes fd 1 or 2, blocks, as
	// writers of standard output expect.
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return nil, fmt.Errorf("capturing %s: pipe: %w", name, err)
	}
	if err := syscall.SetNonblock(p[1], false); err != nil {
		syscall.Close(p[0])
		syscall.Close(p[1])
		return nil, fmt.Errorf("capturing %s: %w", name, err)
	}
	saved, err := dupCloexec(fd)
	if err != nil {
		syscall.Close(p[0])
		syscall.Close(p[1])
		return nil, fmt.Errorf("capturing %s: dup: %w", name, err)
	}
	if err := syscall.Dup3(p[1], fd, 0); err != nil {
		syscall.Close(p[0])
		syscall.Close(p[1])
		syscall.Close(saved)
		return nil, fmt.Errorf("capturing %s: dup3: %w", name, err)
	}
	syscall.Close(p[1])
	s := &stream{name: name, fd: fd, saved: saved, rfd: p[0], r: os.NewFile(uintptr(p[0]), name+" pipe"), eof: make(chan struct{})}
	go s.drain()
	return s, nil
}

func (s *stream) drain() {
	defer close(s.eof)
	b := make([]byte, 32<<10)
	for {
		n, err := s.r.Read(b)
		if n > 0 {
			s.mu.Lock()
			s.buf = append(s.buf, b[:n]...)
			s.mu.Unlock()
		}
		if err != nil {
			if err != io.EOF && !isClosed(err) {
				fmt.Fprintf(OriginalStderr(), "gml: reading captured %s: %v\n", s.name, err)
			}
			return
		}
	}
}

func isClosed(err error) bool {
	pe, ok := err.(*os.PathError)
	return ok && pe.Err == os.ErrClosed
}

// take removes and returns the buffered text, up to the last complete UTF-8 character
// unless all is set.
func (s *stream) take(all bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.buf)
	if !all {
		n = pipeio.CompleteUTF8(s.buf)
	}
	out := string(s.buf[:n])
	s.buf = append(s.buf[:0], s.buf[n:]...)
	return out
}

// flush sends buffered output. With wait it first lets the drain goroutines empty the
// pipes (briefly), so that output written before a display call or an input prompt is
// sent before it.
func (c *capture) flush(wait bool) {
	if c == nil {
		return // fd 1 and 2 are not captured: see WithoutCapture
	}
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	if wait {
		deadline := time.Now().Add(20 * time.Millisecond)
		for _, s := range c.streams {
			for pipeio.Pending(s.rfd) > 0 && time.Now().Before(deadline) {
				time.Sleep(200 * time.Microsecond)
			}
		}
		time.Sleep(100 * time.Microsecond) // let a drain that just read append its bytes
	}
	for _, s := range c.streams {
		if text := s.take(false); text != "" {
			c.send(s.name, text)
		}
	}
}

// stop restores fd 1 and 2, waits for the pipes to drain and sends the rest.
func (c *capture) stop() {
	c.restore()
	for _, s := range c.streams {
		select {
		case <-s.eof:
		case <-time.After(time.Second):
			// A child process still holds the pipe: stop reading it.
			s.r.Close()
			<-s.eof
		}
	}
	close(c.quit)
	c.tick.Stop()
	c.ticking.Wait()
	c.flushMu.Lock()
	for _, s := range c.streams {
		if text := s.take(true); text != "" {
			c.send(s.name, text)
		}
		s.r.Close()
	}
	c.flushMu.Unlock()
	captureMu.Unlock()
}

func (c *capture) restore() {
	debug.SetCrashOutput(nil, debug.CrashOptions{})
	for _, s := range c.streams {
		if err := syscall.Dup3(s.saved, s.fd, 0); err != nil {
			fmt.Fprintf(OriginalStderr(), "gml: restoring fd %d: %v\n", s.fd, err)
		}
		syscall.Close(s.saved)
	}
}
