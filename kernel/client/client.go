package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/gml-dev/gml/kernel/wire"
)

// Client is a minimal Jupyter front end: it sends requests and collects each one's reply
// together with the IOPub messages it caused. Tests and `gml bench kernel` drive a kernel
// process through it over the real sockets.
type Client struct {
	Ch      *wire.Channels
	Session string
	// OnInput, when set, answers input_request messages on stdin with its result.
	OnInput func(req wire.InputRequest) string

	cancel context.CancelFunc

	// inbox holds received messages by the msg_id of their parent until Await takes them.
	mu      sync.Mutex
	replies map[string]*wire.Message
	iopub   map[string][]*wire.Message
	arrived chan struct{} // closed and replaced whenever a message arrives
}

// Exchange is everything a request produced: its reply and the IOPub messages whose
// parent it is, from status busy to status idle inclusive.
type Exchange struct {
	Reply *wire.Message
	IOPub []*wire.Message
}

// Outputs returns the IOPub messages of the exchange other than status and
// execute_input, in order.
func (e *Exchange) Outputs() []*wire.Message {
	var out []*wire.Message
	for _, m := range e.IOPub {
		if t := m.Header.MsgType; t != "status" && t != "execute_input" {
			out = append(out, m)
		}
	}
	return out
}

// NewClient connects to the kernel described by info.
func New(info wire.ConnectionInfo) (*Client, error) {
	ctx, cancel := context.WithCancel(context.Background())
	session := wire.NewID()
	ch, err := wire.Dial(ctx, info, session, log.New(io.Discard, "", 0))
	if err != nil {
		cancel()
		return nil, err
	}
	c := &Client{Ch: ch, Session: session, cancel: cancel, replies: map[string]*wire.Message{},
		iopub: map[string][]*wire.Message{}, arrived: make(chan struct{})}
	go c.pump(ch.Shell)
	go c.pump(ch.Control)
	go c.pump(ch.IOPub)
	go c.answerInput()
	return c, nil
}

// pump files verified messages from s in the inbox until s is closed.
func (c *Client) pump(s *wire.Socket) {
	for {
		m, err := s.Recv()
		if errors.Is(err, wire.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		c.mu.Lock()
		id := m.ParentHeader.MsgID
		if s == c.Ch.IOPub {
			c.iopub[id] = append(c.iopub[id], m)
		} else {
			c.replies[id] = m
		}
		close(c.arrived)
		c.arrived = make(chan struct{})
		c.mu.Unlock()
	}
}

// answerInput replies to input_request messages with OnInput.
func (c *Client) answerInput() {
	for {
		m, err := c.Ch.Stdin.Recv()
		if errors.Is(err, wire.ErrClosed) {
			return
		}
		if err != nil || m.Header.MsgType != "input_request" || c.OnInput == nil {
			continue
		}
		var req wire.InputRequest
		if m.DecodeContent(&req) != nil {
			continue
		}
		if r, err := m.Child("input_reply", wire.InputReply{Value: c.OnInput(req)}); err == nil {
			r.Identities = nil
			_ = c.Ch.Stdin.Send(r)
		}
	}
}

// Close disconnects the client.
func (c *Client) Close() error {
	err := c.Ch.Close()
	c.cancel()
	return err
}

// Send sends a request of msgType on s (a DEALER of this client) and returns it.
func (c *Client) Send(s *wire.Socket, msgType string, content any) (*wire.Message, error) {
	m, err := wire.NewMessage(msgType, c.Session, "gml-client", content)
	if err != nil {
		return nil, err
	}
	return m, s.Send(m)
}

// Request sends msgType on the shell or control socket and waits until both its reply
// and its status idle on IOPub have arrived, or timeout passes.
func (c *Client) Request(s *wire.Socket, msgType string, content any, timeout time.Duration) (*Exchange, error) {
	m, err := c.Send(s, msgType, content)
	if err != nil {
		return nil, err
	}
	return c.Await(m, timeout)
}

// Await collects the reply to req and its IOPub messages up to status idle, and removes
// them from the inbox. On timeout it returns what arrived with an error.
func (c *Client) Await(req *wire.Message, timeout time.Duration) (*Exchange, error) {
	return c.await(req, timeout, true, true)
}

// AwaitReply waits for the reply to req only, leaving its IOPub messages in the inbox.
func (c *Client) AwaitReply(req *wire.Message, timeout time.Duration) (*wire.Message, error) {
	ex, err := c.await(req, timeout, true, false)
	return ex.Reply, err
}

// Peek returns the IOPub messages of req that have arrived so far, leaving them in the
// inbox; a test uses it to see a running cell's output.
func (c *Client) Peek(req *wire.Message) []*wire.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*wire.Message(nil), c.iopub[req.Header.MsgID]...)
}

// AwaitIdle collects the IOPub messages of req up to status idle, for requests that
// have no reply (comm_open, comm_msg).
func (c *Client) AwaitIdle(req *wire.Message, timeout time.Duration) ([]*wire.Message, error) {
	ex, err := c.await(req, timeout, false, true)
	return ex.IOPub, err
}

func (c *Client) await(req *wire.Message, timeout time.Duration, wantReply, wantIdle bool) (*Exchange, error) {
	id := req.Header.MsgID
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		ex := &Exchange{Reply: c.replies[id], IOPub: c.iopub[id]}
		idle := len(ex.IOPub) > 0 && isIdle(ex.IOPub[len(ex.IOPub)-1])
		if (ex.Reply != nil || !wantReply) && (idle || !wantIdle) {
			delete(c.replies, id)
			if wantIdle {
				delete(c.iopub, id)
			}
			c.mu.Unlock()
			return ex, nil
		}
		arrived := c.arrived
		c.mu.Unlock()
		select {
		case <-arrived:
		case <-deadline.C:
			return ex, fmt.Errorf("%s: no reply and idle within %v (reply received: %v, idle: %v)",
				req.Header.MsgType, timeout, ex.Reply != nil, idle)
		}
	}
}

// isIdle reports whether m is a status message with execution_state idle.
func isIdle(m *wire.Message) bool {
	var st wire.Status
	return m.Header.MsgType == "status" && m.DecodeContent(&st) == nil && st.ExecutionState == "idle"
}

// Execute runs code with the default execute_request options.
func (c *Client) Execute(code string, timeout time.Duration) (*Exchange, error) {
	req := wire.DefaultExecuteRequest()
	req.Code = code
	return c.Request(c.Ch.Shell, "execute_request", req, timeout)
}

// WaitReady sends kernel_info_request until a reply and its IOPub status arrive, which
// shows that the kernel runs and this client's IOPub subscription is in place (a PUB
// socket drops what it sends before the subscriber has joined).
func (c *Client) WaitReady(timeout time.Duration) (*wire.Message, error) {
	end := time.Now().Add(timeout)
	for time.Now().Before(end) {
		ex, err := c.Request(c.Ch.Shell, "kernel_info_request", struct{}{}, 200*time.Millisecond)
		if err == nil {
			return ex.Reply, nil
		}
	}
	return nil, fmt.Errorf("kernel not ready within %v", timeout)
}

// Heartbeat sends one ping and waits for its echo.
func (c *Client) Heartbeat(timeout time.Duration) error {
	done := make(chan error, 1)
	go func() {
		if err := c.Ch.Heartbeat.Send(zmq4.NewMsgString("ping")); err != nil {
			done <- err
			return
		}
		_, err := c.Ch.Heartbeat.Recv()
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		return fmt.Errorf("no heartbeat within %v", timeout)
	}
}
