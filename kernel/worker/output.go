package worker

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/gml-dev/gml/kernel/internal/pipeio"
)

// outPipe is the supervisor's end of one of the worker's output pipes (its fd 1 or 2).
// A goroutine reads it for the worker's whole life; every read and the append of what
// it read happen under mu, so once the worker has seen its pipe empty, every byte it
// wrote before is in buf for the next take.
type outPipe struct {
	name string // "stdout" or "stderr"
	f    *os.File
	rc   syscall.RawConn
	done chan struct{} // closed when the pipe reached end of file or was closed

	mu      sync.Mutex
	buf     []byte
	base    int64 // how many bytes came before buf[0]: taken, or dropped
	dropped int   // bytes dropped from the front of buf to keep it under maxHeld
	// recent keeps the last bytes taken, so a crash report whose first lines were
	// already sent can be put together again (process.go's takeReport).
	recent []byte
}

// recentKept is how much of the text already taken a pipe keeps: a report of a
// goroutine's stack (the runtime elides frames beyond 100) fits.
const recentKept = 64 << 10

// maxHeld bounds what a pipe keeps while no cell takes it (a goroutine that prints
// between cells): older text is dropped, and the drop is reported with the rest.
const maxHeld = 1 << 20

// newOutPipe returns the pipe and the write end to give the worker as fd 1 or 2. The
// read end is non-blocking (served by the runtime's poller); the write end blocks, as
// writers of standard output expect.
func newOutPipe(name string) (*outPipe, *os.File, error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return nil, nil, fmt.Errorf("worker %s pipe: %w", name, err)
	}
	if err := syscall.SetNonblock(p[1], false); err != nil {
		syscall.Close(p[0])
		syscall.Close(p[1])
		return nil, nil, fmt.Errorf("worker %s pipe: %w", name, err)
	}
	f := os.NewFile(uintptr(p[0]), "worker "+name)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		syscall.Close(p[1])
		return nil, nil, fmt.Errorf("worker %s pipe: %w", name, err)
	}
	o := &outPipe{name: name, f: f, rc: rc, done: make(chan struct{})}
	go o.read()
	return o, os.NewFile(uintptr(p[1]), "worker "+name+" (write end)"), nil
}

func (o *outPipe) read() {
	defer close(o.done)
	chunk := make([]byte, 64<<10)
	for {
		var n int
		var err error
		rerr := o.rc.Read(func(fd uintptr) bool {
			o.mu.Lock()
			defer o.mu.Unlock()
			n, err = syscall.Read(int(fd), chunk)
			if n > 0 {
				o.hold(chunk[:n])
			}
			return !errors.Is(err, syscall.EAGAIN)
		})
		if rerr != nil || n <= 0 && !errors.Is(err, syscall.EINTR) {
			return // end of file (every writer is gone), or closed
		}
	}
}

// hold appends p to buf, dropping the oldest text beyond maxHeld. Called with mu held.
func (o *outPipe) hold(p []byte) {
	o.buf = append(o.buf, p...)
	if over := len(o.buf) - maxHeld; over > 0 {
		o.dropped += over
		o.base += int64(over)
		o.buf = append(o.buf[:0], o.buf[over:]...)
	}
}

// total returns how many bytes have arrived in all.
func (o *outPipe) total() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.base + int64(len(o.buf))
}

// take removes and returns the text read so far, up to byte upTo of the stream (-1:
// all of it) and, unless all is set, to the last complete UTF-8 character; and how
// many bytes were dropped before it.
func (o *outPipe) take(all bool, upTo int64) (text string, dropped int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(o.buf)
	if upTo >= 0 {
		n = int(max(0, min(int64(n), upTo-o.base)))
	}
	if !all {
		n = pipeio.CompleteUTF8(o.buf[:n])
	}
	text, dropped = string(o.buf[:n]), o.dropped
	o.recent = append(o.recent, o.buf[:n]...)
	if over := len(o.recent) - recentKept; over > 0 {
		o.recent = append(o.recent[:0], o.recent[over:]...)
	}
	o.buf = append(o.buf[:0], o.buf[n:]...)
	o.base += int64(n)
	o.dropped = 0
	return text, dropped
}

// drainNow reads what the pipe holds without waiting, for the end of a worker: its
// children may keep the write end open, so end of file may never come.
func (o *outPipe) drainNow() {
	chunk := make([]byte, 64<<10)
	o.rc.Control(func(fd uintptr) {
		o.mu.Lock()
		defer o.mu.Unlock()
		for {
			n, err := syscall.Read(int(fd), chunk)
			if n <= 0 || err != nil {
				return
			}
			o.hold(chunk[:n])
		}
	})
}

// close stops reading.
func (o *outPipe) close() {
	o.f.Close()
	<-o.done
}
