package worker

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/gml-dev/gml/kernel"
)

// Message types between the supervisor and the worker.
const (
	// supervisor -> worker
	tExecute    = "execute"     // ID, Code
	tInterrupt  = "interrupt"   // stop the running cell
	tInputReply = "input_reply" // Text, or Error when the front end refused
	tAck        = "ack"         // the last stream, display, clear or stuck message was sent on
	tComplete   = "complete"    // ID, Code, Cursor
	tInspect    = "inspect"     // ID, Code, Cursor, Detail

	// worker -> supervisor
	tReady         = "ready"   // the interpreter is built; Error when it could not be
	tStream        = "stream"  // Name, Text written by the executor itself
	tDisplay       = "display" // Data, Metadata, DisplayID, Update
	tClear         = "clear"   // Wait
	tInput         = "input"   // Prompt, Password: ask the front end for a line
	tStuck         = "stuck"   // Text: the interrupted cell's work has not stopped yet
	tResult        = "result"  // ID, Data, Metadata, Err
	tCompleteReply = "complete_reply"
	tInspectReply  = "inspect_reply"
)

// msg is one message on the supervisor-worker connection. Only the fields of its type
// are set; the others are left out of the encoding.
type msg struct {
	T         string            `json:"t"`
	ID        uint64            `json:"id,omitempty"`
	Code      string            `json:"code,omitempty"`
	Cursor    int               `json:"cursor,omitempty"`
	Detail    int               `json:"detail,omitempty"`
	Name      string            `json:"name,omitempty"`
	Text      string            `json:"text,omitempty"`
	Error     string            `json:"error,omitempty"`
	Data      map[string]any    `json:"data,omitempty"`
	Metadata  map[string]any    `json:"metadata,omitempty"`
	DisplayID string            `json:"display_id,omitempty"`
	Update    bool              `json:"update,omitempty"`
	Wait      bool              `json:"wait,omitempty"`
	Prompt    string            `json:"prompt,omitempty"`
	Password  bool              `json:"password,omitempty"`
	Err       *kernel.CellError `json:"err,omitempty"`
	Matches   []string          `json:"matches,omitempty"`
	Start     int               `json:"start,omitempty"`
	End       int               `json:"end,omitempty"`
	Found     bool              `json:"found,omitempty"`

	// outMark and errMark are the totals of the worker's stdout and stderr when the
	// message arrived (process.go); they are not sent.
	outMark, errMark int64
}

// maxFrame bounds one message, so a corrupt length cannot make the reader allocate
// without limit; a display of a large image is well below it. Send refuses what Recv
// would, so an oversized message is an error at its sender, not a lost worker. (A
// variable so that tests can lower it.)
var maxFrame = 1 << 30

// conn sends and receives length-prefixed JSON messages. Send is safe for concurrent
// use; Recv is meant for one reading goroutine.
type conn struct {
	mu sync.Mutex
	w  io.Writer
	r  *bufio.Reader
}

func newConn(rw io.ReadWriter) *conn {
	return &conn{w: rw, r: bufio.NewReaderSize(rw, 64<<10)}
}

// Send writes m as one frame, in one write.
func (c *conn) Send(m *msg) error {
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("worker: encoding %s: %w", m.T, err)
	}
	if len(body) > maxFrame {
		return fmt.Errorf("worker: %s message of %d bytes exceeds the %d-byte limit", m.T, len(body), maxFrame)
	}
	frame := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(frame, uint32(len(body)))
	frame = append(frame, body...)
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = c.w.Write(frame)
	return err
}

// Recv reads the next message. io.EOF means the other side closed the connection.
func (c *conn) Recv() (*msg, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if int64(n) > int64(maxFrame) {
		return nil, fmt.Errorf("worker: frame of %d bytes exceeds the limit", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return nil, err
	}
	m := new(msg)
	if err := json.Unmarshal(body, m); err != nil {
		return nil, fmt.Errorf("worker: decoding a frame: %w", err)
	}
	return m, nil
}
