package worker

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gml-dev/gml/kernel"
)

// Config describes the workers a Supervisor runs.
type Config struct {
	// Command is the worker's command line; the program must call Serve.
	Command []string
	// Env is the worker's environment (nil: the supervisor's).
	Env []string
	// Log receives the supervisor's diagnostics, the full crash reports among them.
	Log *log.Logger
	// LogFile is given to each worker for its own diagnostics (nil: the supervisor's
	// standard error).
	LogFile *os.File
	// IsComplete answers is_complete_request in the supervisor, so it needs no worker.
	IsComplete func(code string) (status, indent string)
	// OnRestart is called when a worker that died between cells has been replaced, so
	// the kernel can publish the status messages of a restart; the next cell's output
	// says what happened.
	OnRestart func()
	// Exited, when set, is called with the process id of each worker that has exited
	// (died, or ended by Close), to remove what it left behind.
	Exited func(pid int)
}

// flushInterval is how often the worker's output is sent while a cell runs, so partial
// lines (progress text, prompts) show promptly.
const flushInterval = 50 * time.Millisecond

// replyTimeout bounds how long complete and inspect requests wait for the worker.
const replyTimeout = 10 * time.Second

// Supervisor runs cells in a worker process and replaces the worker when it dies. It
// implements kernel.Executor. The kernel serializes Execute, Complete and Inspect;
// Interrupt may come at any time.
type Supervisor struct {
	cfg Config

	mu     sync.Mutex
	p      *proc  // the current worker
	nextID uint64 // request ids for the worker
	// late holds what is to be told at the start of the next cell: output of a worker
	// that died between cells and the account of its death.
	late []lateText
	cell *cellRun // the running cell, nil between cells
	// started is a cell sent to the worker by Start, for Execute to finish.
	started *startedCell

	outMu     sync.Mutex    // serializes sending output and messages of the running cell
	done      chan struct{} // closed by Close
	closeOnce sync.Once
}

// lateText is text to show at the start of the next cell, on stream name.
type lateText struct{ name, text string }

// startedCell is a cell Start sent to the worker, with the output that had come
// between cells before it.
type startedCell struct {
	p    *proc
	id   uint64
	code string
	late []lateText
}

// cellRun is the state of a running cell shared with Interrupt and the flusher.
type cellRun struct {
	pub         kernel.Publisher
	p           *proc
	stuck       bool // the worker reported that the interrupted work does not stop
	killedByYou bool // a second interrupt ended the worker
}

// Start launches the first worker and returns at once; cells wait for it to be ready.
func Start(cfg Config) (*Supervisor, error) {
	if len(cfg.Command) == 0 {
		return nil, errors.New("worker: no command configured")
	}
	if cfg.Log == nil {
		cfg.Log = log.New(os.Stderr, "gml kernel: ", log.LstdFlags)
	}
	if cfg.LogFile == nil {
		cfg.LogFile = os.Stderr
	}
	s := &Supervisor{cfg: cfg, done: make(chan struct{})}
	p, err := s.launch()
	if err != nil {
		return nil, err
	}
	s.p = p
	go s.flusher()
	return s, nil
}

// launch starts a worker and the goroutine that watches it.
func (s *Supervisor) launch() (*proc, error) {
	p, err := spawn(s.cfg.Command, s.cfg.Env, s.cfg.LogFile)
	if err != nil {
		return nil, err
	}
	go s.watch(p)
	go func() {
		select {
		case <-p.ready:
			if p.readyErr == nil {
				s.cfg.Log.Printf("worker %d ready after %v", p.cmd.Process.Pid, time.Since(p.started).Round(100*time.Microsecond))
			}
		case <-p.dead:
		}
	}()
	return p, nil
}

// watch waits for p to exit. A worker that dies between cells is replaced at once (and
// the next cell says why); one that dies during a cell is handled by Execute.
func (s *Supervisor) watch(p *proc) {
	<-p.exited
	p.death = p.describe()
	if s.cfg.Exited != nil {
		s.cfg.Exited(p.cmd.Process.Pid)
	}
	s.mu.Lock()
	closing := p.closing
	s.mu.Unlock()
	if closing {
		close(p.dead)
		return
	}
	s.cfg.Log.Printf("worker %d ended after %v: %s", p.cmd.Process.Pid, time.Since(p.started).Round(time.Millisecond), p.death.cause)
	if p.death.report != "" {
		s.cfg.Log.Printf("worker %d crash report:\n%s", p.cmd.Process.Pid, p.death.report)
	}
	close(p.dead)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p != p || s.cell != nil || s.started != nil || p.closing {
		return // a cell runs (or was started): Execute reports the death
	}
	// Between cells: keep what it printed and the account of its death for the next cell.
	s.late = append(s.late, p.heldOutput()...)
	s.late = append(s.late, lateText{"stderr", deathText(p.death, "between cells", false)})
	p.release()
	if np, err := s.launch(); err != nil {
		s.cfg.Log.Printf("restarting the worker: %v", err)
		s.late = append(s.late, lateText{"stderr", "A new worker could not be started: " + err.Error() + "\n"})
		s.p = nil
	} else {
		s.p = np
	}
	if s.cfg.OnRestart != nil {
		go s.cfg.OnRestart()
	}
}

// current returns the worker to run the next request on, starting one when there is
// none, and waits until it is ready or ctx ends.
func (s *Supervisor) current(ctx context.Context) (*proc, error) {
	s.mu.Lock()
	p := s.p
	if p == nil {
		np, err := s.launch()
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.p, p = np, np
	}
	s.mu.Unlock()
	select {
	case <-p.ready:
		if p.readyErr != nil {
			return nil, p.readyErr
		}
		return p, nil
	case <-p.dead:
		return nil, fmt.Errorf("the worker died while starting: %s", p.death.cause)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Start sends code to a ready worker at once, so that it runs while the kernel
// publishes its status; the Execute that follows with the same code finishes it.
func (s *Supervisor) Start(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.p
	if p == nil || s.cell != nil || s.started != nil {
		return
	}
	select {
	case <-p.ready:
		if p.readyErr != nil {
			return
		}
	default:
		return
	}
	s.nextID++
	st := &startedCell{p: p, id: s.nextID, code: code, late: s.collectLate(p)}
	if p.conn.Send(&msg{T: tExecute, ID: st.id, Code: code}) == nil {
		s.started = st
	}
}

// Execute runs code in the worker. Output the worker writes to its stdout and stderr
// streams to pub while the cell runs; cancelling ctx interrupts the cell.
func (s *Supervisor) Execute(ctx context.Context, code string, pub kernel.Publisher) kernel.Result {
	s.mu.Lock()
	st := s.started
	s.started = nil
	s.mu.Unlock()
	if st != nil && st.code != code {
		// Not the cell Start began (kernels call Execute right after Start): finish
		// that one unseen first.
		s.finish(ctx, st, discard{})
		st = nil
	}
	if st == nil {
		p, err := s.current(ctx)
		if err != nil {
			s.mu.Lock()
			late := s.collectLate(nil)
			s.mu.Unlock()
			sendLate(pub, late)
			if ctx.Err() != nil {
				return errResult("Interrupted", "the cell was interrupted while the kernel's worker was starting")
			}
			return errResult("KernelError", "the Go interpreter could not start: "+err.Error())
		}
		s.mu.Lock()
		s.nextID++
		st = &startedCell{p: p, id: s.nextID, code: code, late: s.collectLate(p)}
		s.mu.Unlock()
		if err := p.conn.Send(&msg{T: tExecute, ID: st.id, Code: code}); err != nil {
			sendLate(pub, st.late)
			return s.lost(&cellRun{pub: pub, p: p})
		}
	}
	return s.finish(ctx, st, pub)
}

// finish waits for the result of cell st, passing its output and messages to pub.
func (s *Supervisor) finish(ctx context.Context, st *startedCell, pub kernel.Publisher) kernel.Result {
	p := st.p
	c := &cellRun{pub: pub, p: p}
	sendLate(pub, st.late)
	s.mu.Lock()
	s.cell = c
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cell = nil
		s.mu.Unlock()
	}()
	done := ctx.Done()
	for {
		select {
		case m := <-p.cellMsgs:
			if res, finished := s.handle(c, m); finished {
				return res
			}
		case <-done:
			done = nil // forward the interrupt once; the worker reports when it stopped
			p.conn.Send(&msg{T: tInterrupt})
		case <-p.dead:
			// Messages sent before it died come first.
			select {
			case <-p.routed:
			case <-time.After(100 * time.Millisecond): // a child of the worker holds its connection
			}
			for {
				select {
				case m := <-p.cellMsgs:
					if res, finished := s.handle(c, m); finished {
						return res
					}
					continue
				default:
				}
				break
			}
			return s.lost(c)
		}
	}
}

// handle passes one message of the running cell to its publisher, after the output the
// worker wrote before sending it. It reports the result when the cell has finished.
func (s *Supervisor) handle(c *cellRun, m *msg) (kernel.Result, bool) {
	s.outMu.Lock()
	s.sendOutput(c, m.T == tResult, m.outMark, m.errMark)
	c.p.handled(m)
	switch m.T {
	case tStream:
		c.pub.Stream(m.Name, m.Text)
	case tDisplay:
		c.pub.Display(m.Data, m.Metadata, m.DisplayID, m.Update)
	case tClear:
		c.pub.ClearOutput(m.Wait)
	case tStuck:
		s.mu.Lock()
		c.stuck = true
		s.mu.Unlock()
		c.pub.Stream("stderr", m.Text)
	case tInput:
		s.outMu.Unlock() // output keeps flowing while the front end is asked
		value, err := c.pub.Input(m.Prompt, m.Password)
		reply := &msg{T: tInputReply, Text: value}
		if err != nil {
			reply.Error = err.Error()
		}
		c.p.conn.Send(reply)
		return kernel.Result{}, false
	case tResult:
		s.outMu.Unlock()
		return kernel.Result{Data: m.Data, Metadata: m.Metadata, Err: m.Err}, true
	default:
		s.cfg.Log.Printf("worker: unexpected %q during a cell", m.T)
	}
	s.outMu.Unlock()
	c.p.conn.Send(&msg{T: tAck})
	return kernel.Result{}, false
}

// flusher sends the running cell's output every flushInterval. It lives as long as
// the supervisor, so a cell costs no goroutine of its own.
func (s *Supervisor) flusher() {
	t := time.NewTicker(flushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.done:
			return
		}
		s.outMu.Lock()
		s.mu.Lock()
		c := s.cell
		s.mu.Unlock()
		if c != nil {
			out, err := c.p.outputLimits()
			if c.p.crashing() {
				err = 0 // the worker is dying: its report goes into the cell's error, once
			}
			s.sendOutput(c, false, out, err)
		}
		s.outMu.Unlock()
	}
}

// sendOutput sends what the worker wrote to stdout and stderr, up to the given marks
// (-1: all), to the cell's publisher; all also sends a trailing partial character.
// Called with outMu held.
func (s *Supervisor) sendOutput(c *cellRun, all bool, outUpTo, errUpTo int64) {
	for k, o := range []*outPipe{c.p.out, c.p.err} {
		text, dropped := o.take(all, []int64{outUpTo, errUpTo}[k])
		if dropped > 0 {
			c.pub.Stream("stderr", fmt.Sprintf("[%d bytes of output were dropped]\n", dropped))
		}
		if text != "" {
			c.pub.Stream(o.name, text)
		}
	}
}

// collectLate returns what is to be told at the start of a cell: output that p's
// goroutines printed between cells, and a worker that died meanwhile. Called with
// s.mu held.
func (s *Supervisor) collectLate(p *proc) []lateText {
	late := s.late
	s.late = nil
	if p != nil {
		late = append(p.heldOutput(), late...)
	}
	return late
}

// sendLate sends what collectLate returned.
func sendLate(pub kernel.Publisher, late []lateText) {
	for _, l := range late {
		pub.Stream(l.name, l.text)
	}
}

// discard is a publisher that drops everything.
type discard struct{}

func (discard) Stream(string, string)                                {}
func (discard) Display(map[string]any, map[string]any, string, bool) {}
func (discard) ClearOutput(bool)                                     {}
func (discard) Input(string, bool) (string, error) {
	return "", errors.New("no input for a cell nobody waits for")
}

// heldOutput returns what p wrote while no cell ran, marked as such.
func (p *proc) heldOutput() []lateText {
	var out []lateText
	for _, o := range []*outPipe{p.out, p.err} {
		text, dropped := o.take(true, -1)
		if text == "" && dropped == 0 {
			continue
		}
		head := fmt.Sprintf("[%s written between cells, by work an earlier cell left running:]\n", o.name)
		if dropped > 0 {
			head = fmt.Sprintf("[%s written between cells, by work an earlier cell left running; the first %d bytes were dropped:]\n", o.name, dropped)
		}
		out = append(out, lateText{"stderr", head}, lateText{o.name, text})
	}
	return out
}

// lost reports the death of the worker during cell c: what it printed last, why it
// died (with the runtime's report), and that a new worker has replaced it.
func (s *Supervisor) lost(c *cellRun) kernel.Result {
	p := c.p
	<-p.dead // describe has taken the crash report out of stderr: it is shown in the error
	s.outMu.Lock()
	s.sendOutput(c, true, -1, -1)
	s.outMu.Unlock()

	s.mu.Lock()
	killed := c.killedByYou
	p.release()
	var restartErr error
	replaced := s.p == p // not when Close ended it
	if replaced {
		s.p, restartErr = s.launch()
	}
	s.mu.Unlock()
	if killed {
		p.death.cause = "a second interrupt ended it, as the first one could not stop the cell's work"
		p.death.report = ""
	}
	text := deathText(p.death, "while this cell ran", killed)
	if restartErr != nil {
		text += "A new worker could not be started: " + restartErr.Error() + "\n"
	}
	if replaced && restartErr == nil && s.cfg.OnRestart != nil {
		s.cfg.OnRestart()
	}
	tb := strings.Split(strings.TrimRight(text, "\n"), "\n")
	name, value := "KernelDied", "the kernel's worker process died: "+p.death.cause
	if killed {
		name, value = "KernelRestarted", "the kernel's worker was restarted to stop the cell"
	}
	tb[0] = name + ": " + tb[0]
	return kernel.Result{Err: &kernel.CellError{Name: name, Value: value, Traceback: tb}}
}

// reportLines is how much of a crash report goes into a cell's output; the whole
// report is in the kernel's log.
const reportLines = 40

// deathText tells the notebook that the worker died (when), why, and that all state
// is gone.
func deathText(d death, when string, killed bool) string {
	var b strings.Builder
	if killed {
		fmt.Fprintf(&b, "The kernel's worker process was ended %s: %s.\n", when, d.cause)
	} else {
		fmt.Fprintf(&b, "The kernel's worker process died %s: %s.\n", when, d.cause)
	}
	b.WriteString("All state is lost: the variables, functions, types and imports of earlier cells, the packages " +
		"that %go get and %%go cells loaded, and what %cd and %env changed. A new worker has been started; " +
		"run the cells this notebook needs again, those with %go get and %%go too.\n")
	if d.report != "" {
		lines := strings.Split(d.report, "\n")
		b.WriteString("\nThe Go runtime's report:\n")
		for k, l := range lines {
			if k == reportLines {
				fmt.Fprintf(&b, "... %d more lines (the whole report is in the kernel's log)\n", len(lines)-k)
				break
			}
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// Interrupt is called on every interrupt request, besides the cancellation of the
// running cell's context. When the worker has reported that the interrupted work does
// not stop, a second interrupt ends the worker, losing its state, rather than leave
// the kernel busy forever.
func (s *Supervisor) Interrupt() {
	s.mu.Lock()
	c := s.cell
	kill := c != nil && c.stuck && !c.killedByYou
	if kill {
		c.killedByYou = true
	}
	s.mu.Unlock()
	if kill {
		s.cfg.Log.Printf("a second interrupt: ending worker %d, whose cell does not stop", c.p.cmd.Process.Pid)
		c.p.kill()
	}
}

// Complete asks the worker for completions; with no worker ready it has none.
func (s *Supervisor) Complete(code string, cursor int) ([]string, int, int) {
	r := s.ask(&msg{T: tComplete, Code: code, Cursor: cursor})
	if r == nil {
		return nil, cursor, cursor
	}
	return r.Matches, r.Start, r.End
}

// Inspect asks the worker to inspect the name at cursor.
func (s *Supervisor) Inspect(code string, cursor, detail int) (map[string]any, bool) {
	r := s.ask(&msg{T: tInspect, Code: code, Cursor: cursor, Detail: detail})
	if r == nil {
		return nil, false
	}
	return r.Data, r.Found
}

// IsComplete is answered in the supervisor, without the worker.
func (s *Supervisor) IsComplete(code string) (string, string) {
	if s.cfg.IsComplete == nil {
		return "unknown", ""
	}
	return s.cfg.IsComplete(code)
}

// ask sends a request that has a reply and waits for it; nil when the worker is not
// ready, dies, or takes longer than replyTimeout.
func (s *Supervisor) ask(m *msg) *msg {
	ctx, cancel := context.WithTimeout(context.Background(), replyTimeout)
	defer cancel()
	p, err := s.current(ctx)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	s.nextID++
	m.ID = s.nextID
	s.mu.Unlock()
	reply := p.expect(m.ID)
	defer p.forget(m.ID)
	if p.conn.Send(m) != nil {
		return nil
	}
	select {
	case r := <-reply:
		return r
	case <-p.dead:
	case <-ctx.Done():
	}
	return nil
}

// Close ends the worker.
func (s *Supervisor) Close() error {
	s.closeOnce.Do(func() { close(s.done) })
	s.mu.Lock()
	p := s.p
	s.p = nil
	if p != nil {
		p.closing = true
	}
	s.mu.Unlock()
	if p != nil {
		p.stop()
		<-p.dead
		p.release()
	}
	return nil
}

func errResult(name, value string) kernel.Result {
	return kernel.Result{Err: &kernel.CellError{Name: name, Value: value, Traceback: []string{name + ": " + value}}}
}
