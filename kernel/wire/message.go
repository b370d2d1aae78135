package wire

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ProtocolVersion is the version of the Jupyter messaging protocol spoken here.
const ProtocolVersion = "5.3"

// delimiter separates the routing identities from the signed message frames.
var delimiter = []byte("<IDS|MSG>")

// ErrSignature is returned by Decode for a message whose signature is missing or wrong.
var ErrSignature = errors.New("message signature is missing or wrong")

// Header is a message header. The zero Header encodes as {} (an absent parent).
type Header struct {
	MsgID    string `json:"msg_id,omitempty"`
	Session  string `json:"session,omitempty"`
	Username string `json:"username,omitempty"`
	Date     string `json:"date,omitempty"`
	MsgType  string `json:"msg_type,omitempty"`
	Version  string `json:"version,omitempty"`
}

// Message is one Jupyter message: routing identities, header, parent header, metadata,
// content and binary buffers.
type Message struct {
	Identities   [][]byte
	Header       Header
	ParentHeader Header
	Metadata     map[string]any
	Content      json.RawMessage
	Buffers      [][]byte

	// rawHeader is the header frame this message was decoded from; a reply uses it as
	// its parent header verbatim.
	rawHeader []byte
	// rawParent, when set, is encoded instead of ParentHeader.
	rawParent []byte
}

// NewID returns a fresh random message or session id (32 hex digits).
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// timestamp formats now as ISO 8601 in UTC with microseconds, as Jupyter does.
func timestamp() string {
	return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
}

// NewMessage returns a message of msgType in session with content encoded as JSON.
func NewMessage(msgType, session, username string, content any) (*Message, error) {
	raw, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("encoding %s content: %w", msgType, err)
	}
	return &Message{
		Header: Header{MsgID: NewID(), Session: session, Username: username, Date: timestamp(),
			MsgType: msgType, Version: ProtocolVersion},
		Metadata: map[string]any{},
		Content:  raw,
	}, nil
}

// Child returns a new message of msgType whose parent header is m's header, in m's
// session and addressed to m's sender. Replies, IOPub output and stdin requests are all
// children of the request they answer.
func (m *Message) Child(msgType string, content any) (*Message, error) {
	c, err := NewMessage(msgType, m.Header.Session, m.Header.Username, content)
	if err != nil {
		return nil, err
	}
	c.Identities = m.Identities
	c.ParentHeader = m.Header
	c.rawParent = m.rawHeader
	return c, nil
}

// DecodeContent unmarshals the message content into v.
func (m *Message) DecodeContent(v any) error {
	if len(m.Content) == 0 {
		return fmt.Errorf("%s has no content", m.Header.MsgType)
	}
	if err := json.Unmarshal(m.Content, v); err != nil {
		return fmt.Errorf("decoding %s content: %w", m.Header.MsgType, err)
	}
	return nil
}

// Encode returns the frames of m, signed with s.
func (m *Message) Encode(s *Signer) ([][]byte, error) {
	header, err := json.Marshal(m.Header)
	if err != nil {
		return nil, fmt.Errorf("encoding header: %w", err)
	}
	parent := m.rawParent
	if parent == nil {
		if parent, err = json.Marshal(m.ParentHeader); err != nil {
			return nil, fmt.Errorf("encoding parent header: %w", err)
		}
	}
	metadata := []byte("{}")
	if len(m.Metadata) > 0 {
		if metadata, err = json.Marshal(m.Metadata); err != nil {
			return nil, fmt.Errorf("encoding metadata: %w", err)
		}
	}
	content := []byte(m.Content)
	if len(content) == 0 {
		content = []byte("{}")
	}
	frames := make([][]byte, 0, len(m.Identities)+6+len(m.Buffers))
	frames = append(frames, m.Identities...)
	frames = append(frames, delimiter, s.Sign(header, parent, metadata, content), header, parent, metadata, content)
	frames = append(frames, m.Buffers...)
	return frames, nil
}

// Decode parses the frames of a message received on a socket and checks its signature
// with s. A missing or wrong signature yields ErrSignature.
func Decode(frames [][]byte, s *Signer) (*Message, error) {
	i := 0
	for i < len(frames) && !bytes.Equal(frames[i], delimiter) {
		i++
	}
	if i == len(frames) {
		return nil, fmt.Errorf("malformed message: no %s delimiter among %d frames", delimiter, len(frames))
	}
	if len(frames) < i+6 {
		return nil, fmt.Errorf("malformed message: %d frames after the delimiter, want at least 5", len(frames)-i-1)
	}
	sig, header, parent, metadata, content := frames[i+1], frames[i+2], frames[i+3], frames[i+4], frames[i+5]
	if !s.Verify(sig, header, parent, metadata, content) {
		return nil, ErrSignature
	}
	m := &Message{Identities: frames[:i], Content: content, rawHeader: header}
	if len(frames) > i+6 {
		m.Buffers = frames[i+6:]
	}
	if err := json.Unmarshal(header, &m.Header); err != nil {
		return nil, fmt.Errorf("malformed header: %w", err)
	}
	if err := json.Unmarshal(parent, &m.ParentHeader); err != nil {
		return nil, fmt.Errorf("malformed parent header: %w", err)
	}
	if err := json.Unmarshal(metadata, &m.Metadata); err != nil {
		return nil, fmt.Errorf("malformed metadata: %w", err)
	}
	if m.Header.MsgType == "" {
		return nil, fmt.Errorf("malformed header: no msg_type")
	}
	return m, nil
}
