package wire

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
)

// Socket is one ZeroMQ socket that sends and receives signed Jupyter messages. Send is
// safe for concurrent use; Recv is meant for one reading goroutine.
type Socket struct {
	Name   string // "shell", "control", "stdin", "iopub"
	z      zmq4.Socket
	signer *Signer
	mu     sync.Mutex
}

// Send signs and sends m.
func (s *Socket) Send(m *Message) error {
	frames, err := m.Encode(s.signer)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.z.SendMulti(zmq4.NewMsgFrom(frames...)); err != nil {
		return fmt.Errorf("sending %s on %s: %w", m.Header.MsgType, s.Name, err)
	}
	return nil
}

// Recv waits for the next message. An error wrapping ErrSignature or a malformed message
// is returned for a message that must be dropped; the socket stays usable. An error
// that wraps ErrClosed means the socket is closed.
func (s *Socket) Recv() (*Message, error) {
	zm, err := s.z.Recv()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", s.Name, ErrClosed, err)
	}
	m, err := Decode(zm.Frames, s.signer)
	if err != nil {
		return nil, fmt.Errorf("%s: dropped message: %w", s.Name, err)
	}
	return m, nil
}

// Close closes the socket.
func (s *Socket) Close() error { return s.z.Close() }

// dialRetry is the pause between connection attempts of a client.
const dialRetry = 2 * time.Millisecond

// ErrClosed reports that a socket's Recv failed because it was closed.
var ErrClosed = errors.New("socket closed")

// Channels are the five sockets of one kernel connection, on either side.
type Channels struct {
	Shell, Control, Stdin, IOPub *Socket
	// Heartbeat is the raw heartbeat socket: REP on the kernel side, REQ on a client.
	Heartbeat zmq4.Socket
	Signer    *Signer
	ipcPaths  []string
}

// Close closes all sockets and removes ipc socket files created by Bind.
func (c *Channels) Close() error {
	var errs []error
	for _, s := range []*Socket{c.Shell, c.Control, c.Stdin, c.IOPub} {
		errs = append(errs, s.Close())
	}
	errs = append(errs, c.Heartbeat.Close())
	for _, p := range c.ipcPaths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// socketSpec names one of the five sockets, its port and the zmq4 socket to open there.
type socketSpec struct {
	dst  **Socket // nil for the heartbeat
	name string
	port int
	z    zmq4.Socket
}

// open listens on or dials (connect) each spec's endpoint and fills c; on failure it
// closes what it opened.
func (c *Channels) open(info ConnectionInfo, specs []socketSpec, connect func(z zmq4.Socket, ep string) error) error {
	for _, s := range specs {
		if err := connect(s.z, info.Endpoint(s.port)); err != nil {
			for _, t := range specs {
				t.z.Close()
			}
			for _, p := range c.ipcPaths {
				os.Remove(p)
			}
			return fmt.Errorf("%s socket: %w", s.name, err)
		}
		if s.dst == nil {
			c.Heartbeat = s.z
		} else {
			*s.dst = &Socket{Name: s.name, z: s.z, signer: c.Signer}
		}
	}
	return nil
}

// Bind opens the kernel side: ROUTER sockets for shell, control and stdin, PUB for
// IOPub and REP for the heartbeat, listening where info says. zmq4's own diagnostics go
// to logger.
func Bind(ctx context.Context, info ConnectionInfo, logger *log.Logger) (*Channels, error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	lo := zmq4.WithLogger(logger)
	c := &Channels{Signer: NewSigner(info.Key)}
	specs := []socketSpec{
		{&c.Shell, "shell", info.ShellPort, zmq4.NewRouter(ctx, lo)},
		{&c.Control, "control", info.ControlPort, zmq4.NewRouter(ctx, lo)},
		{&c.Stdin, "stdin", info.StdinPort, zmq4.NewRouter(ctx, lo)},
		{&c.IOPub, "iopub", info.IOPubPort, zmq4.NewPub(ctx, lo)},
		{nil, "heartbeat", info.HBPort, zmq4.NewRep(ctx, lo)},
	}
	err := c.open(info, specs, func(z zmq4.Socket, ep string) error {
		if path, ok := strings.CutPrefix(ep, "ipc://"); ok {
			removeStaleSocket(path)
			c.ipcPaths = append(c.ipcPaths, path)
		}
		return z.Listen(ep)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// removeStaleSocket deletes a unix socket file left behind by an earlier kernel, as
// libzmq does before binding; anything that is not a socket is left alone.
func removeStaleSocket(path string) {
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSocket != 0 {
		os.Remove(path)
	}
}

// Dial opens the client side of a connection: DEALER sockets for shell, control and
// stdin (sharing one identity, as Jupyter clients do, so the kernel can address stdin
// requests), SUB for IOPub subscribed to everything, and REQ for the heartbeat.
func Dial(ctx context.Context, info ConnectionInfo, identity string, logger *log.Logger) (*Channels, error) {
	if err := info.Validate(); err != nil {
		return nil, err
	}
	id := zmq4.WithID(zmq4.SocketIdentity(identity))
	lo := zmq4.WithLogger(logger)
	// Retry often and for long enough to connect to a kernel process that is still
	// starting: a few ms between attempts, about 10 s in all.
	re, retries := zmq4.WithDialerRetry(dialRetry), zmq4.WithDialerMaxRetries(int(10*time.Second/dialRetry))
	c := &Channels{Signer: NewSigner(info.Key)}
	specs := []socketSpec{
		{&c.Shell, "shell", info.ShellPort, zmq4.NewDealer(ctx, id, lo, re, retries)},
		{&c.Control, "control", info.ControlPort, zmq4.NewDealer(ctx, id, lo, re, retries)},
		{&c.Stdin, "stdin", info.StdinPort, zmq4.NewDealer(ctx, id, lo, re, retries)},
		{&c.IOPub, "iopub", info.IOPubPort, zmq4.NewSub(ctx, lo, re, retries)},
		{nil, "heartbeat", info.HBPort, zmq4.NewReq(ctx, lo, re, retries)},
	}
	if err := c.open(info, specs, zmq4.Socket.Dial); err != nil {
		return nil, err
	}
	if err := c.IOPub.z.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		c.Close()
		return nil, fmt.Errorf("subscribing to iopub: %w", err)
	}
	return c, nil
}

// SendRaw sends frames on s as they are, without encoding or signing. Tests use it to
// deliver forged or malformed messages.
func (s *Socket) SendRaw(frames [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.z.SendMulti(zmq4.NewMsgFrom(frames...))
}
