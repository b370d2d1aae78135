package worker

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gml-dev/gml/internal/sysmem"
)

// proc is one worker process and the supervisor's ends of its connection and pipes.
type proc struct {
	cmd      *exec.Cmd
	conn     *conn
	raw      net.Conn
	out, err *outPipe
	crash    *os.File // the worker's crash report (debug.SetCrashOutput), unlinked
	oomKills int      // the cgroup's oom_kill count when the worker started
	started  time.Time

	exited chan struct{} // closed when the process has exited and been reaped
	state  *os.ProcessState

	// Set by route: ready is closed when the worker's interpreter is built (readyErr
	// when it could not be); cellMsgs carries the messages of the running cell, and
	// pending lists those not handled yet (see mark); routed is closed when the
	// connection has ended and every message was routed.
	ready    chan struct{}
	readyErr error
	cellMsgs chan *msg
	pendMu   sync.Mutex
	pending  []*msg
	routed   chan struct{}
	repMu    sync.Mutex
	replies  map[uint64]chan *msg

	// Set by the supervisor: dead is closed once death describes the exit; closing
	// marks a worker ended on purpose.
	dead        chan struct{}
	death       death
	closing     bool
	releaseOnce sync.Once
}

// Descriptor numbers of what the worker inherits besides stdin, stdout and stderr.
const (
	fdConn  = 3 // the message connection
	fdCrash = 4 // the file for the runtime's crash report
	fdLog   = 5 // the supervisor's log (its original stderr)
)

// spawn starts a worker with argv and env. Its stdout and stderr are pipes read by the
// supervisor, its stdin is /dev/null; it gets its own process group, so a Ctrl-C in the
// terminal reaches only the supervisor, and it is killed when the supervisor dies.
func spawn(argv, env []string, logFile *os.File) (*proc, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("worker connection: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "worker connection"), os.NewFile(uintptr(fds[1]), "worker connection (child)")
	defer theirs.Close()
	raw, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		theirs.Close()
		return nil, fmt.Errorf("worker connection: %w", err)
	}
	crash, err := os.CreateTemp("", "gml-worker-crash-*")
	if err != nil {
		raw.Close()
		return nil, fmt.Errorf("worker crash file: %w", err)
	}
	os.Remove(crash.Name()) // both processes hold it open; nothing is left behind
	p := &proc{raw: raw, conn: newConn(raw), crash: crash, oomKills: sysmem.OOMKills(),
		exited: make(chan struct{}), ready: make(chan struct{}),
		cellMsgs: make(chan *msg, 64), routed: make(chan struct{}), replies: map[uint64]chan *msg{},
		dead: make(chan struct{})}
	var outW, errW *os.File
	if p.out, outW, err = newOutPipe("stdout"); err == nil {
		p.err, errW, err = newOutPipe("stderr")
	}
	if err != nil {
		p.release()
		if outW != nil {
			outW.Close()
		}
		return nil, err
	}
	defer outW.Close()
	defer errW.Close()
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = outW, errW
	p.cmd.ExtraFiles = []*os.File{theirs, crash, logFile}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		p.release()
		return nil, fmt.Errorf("starting the worker %s: %w", argv[0], err)
	}
	go p.route()
	go func() {
		p.cmd.Wait()
		p.state = p.cmd.ProcessState
		close(p.exited)
	}()
	return p, nil
}

// route receives the worker's messages and sorts them: ready, replies to complete and
// inspect requests (by id), and everything else, which belongs to the running cell and
// is stamped with how much output had arrived when it did (mark).
func (p *proc) route() {
	defer close(p.routed)
	readied := false
	for {
		m, err := p.conn.Recv()
		if err != nil {
			break
		}
		switch m.T {
		case tReady:
			if m.Error != "" {
				p.readyErr = errors.New(m.Error)
			}
			readied = true
			close(p.ready)
		case tCompleteReply, tInspectReply:
			p.repMu.Lock()
			ch := p.replies[m.ID]
			p.repMu.Unlock()
			if ch != nil {
				ch <- m
			}
		default:
			p.pendMu.Lock()
			m.outMark, m.errMark = p.out.total(), p.err.total()
			p.pending = append(p.pending, m)
			p.pendMu.Unlock()
			p.cellMsgs <- m
		}
	}
	if !readied {
		p.readyErr = errors.New("the worker hung up before its interpreter was ready")
		close(p.ready)
	}
}

// Order of output and messages. The worker sends a message once the supervisor has
// read its pipes empty, so everything it wrote before the message is in the pipes'
// buffers when the message arrives, and what is there beyond that was written after.
// route stamps each message with the pipes' totals at its arrival; the message is
// sent after the output up to its marks, and output beyond the marks of a message not
// handled yet waits for it.

// handled removes m, the oldest pending message, once it has been handled.
func (p *proc) handled(m *msg) {
	p.pendMu.Lock()
	if len(p.pending) > 0 && p.pending[0] == m {
		p.pending = p.pending[1:]
	}
	p.pendMu.Unlock()
}

// outputLimits returns how far output may be sent now: up to the marks of the oldest
// message not handled yet, or everything (-1).
func (p *proc) outputLimits() (out, err int64) {
	p.pendMu.Lock()
	defer p.pendMu.Unlock()
	if len(p.pending) == 0 {
		return -1, -1
	}
	return p.pending[0].outMark, p.pending[0].errMark
}

// expect registers a reply channel for request id.
func (p *proc) expect(id uint64) <-chan *msg {
	ch := make(chan *msg, 1)
	p.repMu.Lock()
	p.replies[id] = ch
	p.repMu.Unlock()
	return ch
}

// forget drops the reply channel of request id.
func (p *proc) forget(id uint64) {
	p.repMu.Lock()
	delete(p.replies, id)
	p.repMu.Unlock()
}

// kill ends the worker at once and waits for it.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// stopWait is how long stop lets the worker clean up before it kills it.
const stopWait = 2 * time.Second

// stop ends the worker by hanging up, so that it removes what it made (the %go get
// workspace), and kills it when it has not exited within stopWait.
func (p *proc) stop() {
	if uc, ok := p.raw.(*net.UnixConn); ok {
		uc.CloseWrite()
		select {
		case <-p.exited:
			return
		case <-time.After(stopWait):
		}
	}
	p.kill()
}

// release closes the supervisor's ends once the worker has exited.
func (p *proc) release() {
	p.releaseOnce.Do(func() {
		if p.raw != nil {
			p.raw.Close()
		}
		for _, o := range []*outPipe{p.out, p.err} {
			if o != nil {
				o.close()
			}
		}
		p.crash.Close()
	})
}

// crashing reports whether the runtime has begun writing a crash report.
func (p *proc) crashing() bool {
	st, err := p.crash.Stat()
	return err == nil && st.Size() > 0
}

// crashReport returns what the runtime wrote to the crash file: the report of a fatal
// error or an unrecovered panic, empty when there was none.
func (p *proc) crashReport() string {
	st, err := p.crash.Stat()
	if err != nil || st.Size() == 0 {
		return ""
	}
	b := make([]byte, min(st.Size(), 1<<20))
	n, _ := p.crash.ReadAt(b, 0)
	return string(b[:n])
}

// death describes how the worker ended: the cause in one line, and the runtime's
// report when there is one.
type death struct {
	cause  string
	report string
}

// describe says why the exited worker died, from its exit status, the cgroup's OOM
// counter, its peak memory and its crash report. It reads what is left in the pipes
// first, and takes the report out of stderr (see takeReport).
func (p *proc) describe() death {
	p.out.drainNow()
	p.err.drainNow()
	d := death{report: p.takeReport()}
	st := p.state
	peak := ""
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok && ru != nil && ru.Maxrss > 0 {
		peak = fmt.Sprintf("; at its peak it used %s of memory", sysmem.FormatBytes(uint64(ru.Maxrss)*1024))
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	switch {
	case sysmem.OOMKills() > p.oomKills:
		d.cause = "it was killed by the system's out-of-memory killer" + peak + memoryNote()
	case ws.Signaled() && ws.Signal() == syscall.SIGKILL:
		d.cause = "it was killed by SIGKILL, most likely by the system's out-of-memory killer" + peak + memoryNote()
	case ws.Signaled():
		d.cause = fmt.Sprintf("it was killed by signal %d (%v)", ws.Signal(), ws.Signal()) + peak
	case d.report != "":
		d.cause = "the Go runtime stopped it: " + headline(d.report) + peak
	default:
		d.cause = fmt.Sprintf("it exited with status %d (compiled code called os.Exit or log.Fatal)", ws.ExitStatus())
	}
	return d
}

// reportStarts are the lines a runtime crash report can begin with.
var reportStarts = []string{"fatal error:", "panic:", "runtime:", "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "unexpected fault", "[signal"}

// takeReport returns the runtime's crash report and removes it from the worker's
// stderr, where the runtime writes it too. The crash file lacks its first lines (the
// runtime copies to it only once it is dying: "runtime: goroutine stack exceeds ..."
// and "fatal error: stack overflow" come before), so the report is taken from stderr,
// from the start of the run of report lines that leads to the file's first line, also
// when those lines were already sent as the cell's output; from the file alone when
// stderr does not have it.
func (p *proc) takeReport() string {
	file := strings.Trim(p.crashReport(), "\n")
	if file == "" {
		return ""
	}
	first, _, _ := strings.Cut(file, "\n")
	p.err.mu.Lock()
	defer p.err.mu.Unlock()
	sent := len(p.err.recent)
	text := string(p.err.recent) + string(p.err.buf)
	at := strings.Index(text, first)
	if at < 0 {
		return file
	}
	// Walk back over the few lines before it that belong to the report (and blank ones).
	start := at
	lines := strings.SplitAfter(text[:at], "\n")
	for k, n := len(lines)-1, 0; k >= 0 && n < 10; k-- {
		line := strings.TrimRight(lines[k], "\n")
		if line != "" && !startsReport(line) {
			break
		}
		start -= len(lines[k])
		n++
	}
	for start < at && text[start] == '\n' {
		start++
	}
	p.err.buf = p.err.buf[:max(0, start-sent)]
	return strings.Trim(text[start:], "\n")
}

// startsReport reports whether s begins like a line of a runtime crash report.
func startsReport(s string) bool {
	for _, p := range reportStarts {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// headline returns the first line of a crash report that says what happened
// ("fatal error: ...", "panic: ...", "runtime: out of memory: ...").
func headline(report string) string {
	for _, line := range strings.Split(report, "\n") {
		line = strings.TrimSpace(line)
		for _, p := range []string{"fatal error:", "panic:", "runtime: out of memory", "SIGSEGV", "SIGBUS", "unexpected fault"} {
			if strings.HasPrefix(line, p) {
				return line
			}
		}
	}
	first, _, _ := strings.Cut(report, "\n")
	return first
}

// memoryNote says how much memory the machine (or the container) has, for the cause
// of an OOM kill.
func memoryNote() string {
	info, ok := sysmem.Read()
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (the machine allows %s, %s is available now)", sysmem.FormatBytes(info.Total), sysmem.FormatBytes(info.Available))
}
