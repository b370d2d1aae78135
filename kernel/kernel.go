package kernel

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/gml-dev/gml/kernel/wire"
)

// Config describes a kernel to start.
type Config struct {
	// Info is the parsed connection file.
	Info wire.ConnectionInfo
	// NewExecutor builds the executor. The kernel calls it in the background right after
	// binding its sockets and waits for it only when a request needs it.
	NewExecutor func() (Executor, error)
	// Logger receives the kernel's diagnostics (dropped messages, socket errors). It must
	// not write to fd 1 or 2 directly, because cells capture those.
	Logger *log.Logger
	// Version is reported as implementation_version.
	Version string
	// HistoryFile is where executed cells are appended across sessions; empty keeps
	// history in memory only.
	HistoryFile string
	// HandleSIGINT makes SIGINT interrupt the running cell instead of killing the
	// process, as `gml kernel` wants; tests that run a kernel in-process leave it off.
	HandleSIGINT bool
}

// Kernel serves one Jupyter connection.
type Kernel struct {
	cfg     Config
	ch      *wire.Channels
	exec    *lazyExecutor
	log     *log.Logger
	history *History
	session string // for messages that have no parent

	// shellQueue carries verified shell messages from the reader to the worker.
	shellQueue chan *wire.Message
	// inputReplies carries input_reply messages from the stdin reader to Input.
	inputReplies chan *wire.Message

	mu         sync.Mutex
	cancelCell context.CancelFunc // cancels the running cell; nil between cells
	count      int                // execution_count of the last stored cell

	done     chan struct{} // closed when a shutdown_request has been answered
	doneOnce sync.Once
	restart  bool
}

// New binds the kernel's sockets as cfg.Info says. Call Run to serve.
func New(cfg Config) (*Kernel, error) {
	if cfg.Logger == nil {
		cfg.Logger = log.New(os.Stderr, "gml kernel: ", log.LstdFlags)
	}
	if cfg.NewExecutor == nil {
		return nil, errors.New("kernel: no executor configured")
	}
	ch, err := wire.Bind(context.Background(), cfg.Info, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("binding kernel sockets: %w", err)
	}
	if !ch.Signer.Enabled() {
		cfg.Logger.Printf("warning: the connection file has no key; messages are not signed")
	}
	return &Kernel{
		cfg:          cfg,
		ch:           ch,
		log:          cfg.Logger,
		history:      NewHistory(cfg.HistoryFile),
		session:      wire.NewID(),
		shellQueue:   make(chan *wire.Message, 1024),
		inputReplies: make(chan *wire.Message, 16),
		done:         make(chan struct{}),
	}, nil
}

// Run serves requests until a shutdown_request is answered or ctx is cancelled. It
// reports whether the front end asked for a restart; the kernel process should then
// exit, and the front end starts a fresh one (this is what jupyter_client's
// restart_kernel expects).
func (k *Kernel) Run(ctx context.Context) (restart bool, err error) {
	k.exec = startLazy(k.cfg.NewExecutor)
	defer k.ch.Close()

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if k.cfg.HandleSIGINT {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt)
		defer signal.Stop(sig)
		go func() {
			for {
				select {
				case <-sig:
					k.log.Printf("SIGINT: interrupting the running cell")
					k.interrupt()
				case <-ctx.Done():
					return
				}
			}
		}()
	}

	go k.heartbeat(ctx)
	go k.readLoop(ctx, k.ch.Shell, func(m *wire.Message) {
		select {
		case k.shellQueue <- m:
		case <-ctx.Done():
		}
	})
	go k.readLoop(ctx, k.ch.Control, k.handleControl)
	go k.readLoop(ctx, k.ch.Stdin, func(m *wire.Message) {
		if m.Header.MsgType != "input_reply" {
			k.log.Printf("stdin: ignoring %s", m.Header.MsgType)
			return
		}
		select {
		case k.inputReplies <- m:
		default:
			k.log.Printf("stdin: dropping an input_reply nobody waits for")
		}
	})
	go k.shellWorker(ctx)

	select {
	case <-ctx.Done():
	case <-k.done:
	}
	k.interrupt()
	k.history.Close()
	if err := k.exec.Close(); err != nil {
		k.log.Printf("closing the executor: %v", err)
	}
	// zmq4 sends IOPub messages from a queue; give the last ones (shutdown_reply, idle)
	// a moment to leave before the sockets close, as ZMQ_LINGER would.
	time.Sleep(lingerTime)
	return k.restart, nil
}

// lingerTime is how long Run waits for queued IOPub messages before closing the sockets.
const lingerTime = 50 * time.Millisecond

// readLoop receives messages on s and hands each verified one to handle. Messages with a
// bad signature or malformed frames are logged and dropped.
func (k *Kernel) readLoop(ctx context.Context, s *wire.Socket, handle func(*wire.Message)) {
	for {
		m, err := s.Recv()
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, wire.ErrClosed) {
			k.log.Printf("%v", err)
			return
		}
		if err != nil {
			k.log.Printf("%v", err)
			continue
		}
		handle(m)
	}
}

// heartbeat echoes every ping on the heartbeat socket.
func (k *Kernel) heartbeat(ctx context.Context) {
	for {
		m, err := k.ch.Heartbeat.Recv()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			k.log.Printf("heartbeat: %v", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err := k.ch.Heartbeat.Send(m); err != nil {
			k.log.Printf("heartbeat: %v", err)
		}
	}
}

// shellWorker handles shell requests one at a time, in arrival order.
func (k *Kernel) shellWorker(ctx context.Context) {
	for {
		select {
		case m := <-k.shellQueue:
			k.handleShell(ctx, m)
		case <-ctx.Done():
			return
		}
	}
}

// interrupt cancels the running cell, if any, and tells the executor.
func (k *Kernel) interrupt() {
	k.mu.Lock()
	if k.cancelCell != nil {
		k.cancelCell()
	}
	k.mu.Unlock()
	if k.exec != nil {
		k.exec.Interrupt()
	}
}

// Restarted publishes the status messages of a restart, for an executor that replaced
// the process running cells (its state is gone): status starting, and idle when no
// cell runs. They have no parent, as the ones a kernel sends when it starts.
func (k *Kernel) Restarted() {
	k.publishOrphan("status", wire.Status{ExecutionState: "starting"})
	k.mu.Lock()
	running := k.cancelCell != nil
	k.mu.Unlock()
	if !running {
		k.publishOrphan("status", wire.Status{ExecutionState: "idle"})
	}
}

// publishOrphan sends a message without a parent on IOPub, in the kernel's session.
func (k *Kernel) publishOrphan(msgType string, content any) {
	m, err := wire.NewMessage(msgType, k.session, "kernel", content)
	if err != nil {
		k.log.Printf("%v", err)
		return
	}
	m.Identities = [][]byte{[]byte(msgType)}
	k.send(k.ch.IOPub, m)
}

// finish ends Run after a shutdown_request.
func (k *Kernel) finish(restart bool) {
	k.doneOnce.Do(func() {
		k.restart = restart
		close(k.done)
	})
}

// send sends m on s and logs a failure; a reply that cannot be sent is not fatal.
func (k *Kernel) send(s *wire.Socket, m *wire.Message) {
	if err := s.Send(m); err != nil {
		k.log.Printf("%v", err)
	}
}

// reply sends a child of req with content on s.
func (k *Kernel) reply(s *wire.Socket, req *wire.Message, msgType string, content any) {
	m, err := req.Child(msgType, content)
	if err != nil {
		k.log.Printf("%v", err)
		return
	}
	k.send(s, m)
}

// publish sends a child of parent with content on IOPub.
func (k *Kernel) publish(parent *wire.Message, msgType string, content any) {
	m, err := parent.Child(msgType, content)
	if err != nil {
		k.log.Printf("%v", err)
		return
	}
	m.Identities = [][]byte{[]byte(msgType)} // the PUB topic
	k.send(k.ch.IOPub, m)
}

// busy publishes status busy for req and returns a function that publishes idle.
func (k *Kernel) busy(req *wire.Message) (idle func()) {
	k.publish(req, "status", wire.Status{ExecutionState: "busy"})
	return func() { k.publish(req, "status", wire.Status{ExecutionState: "idle"}) }
}
