package exec

import (
	"errors"
	"io"
	"sync"
)

// stdinReader is standard input as cells see it (os.Stdin and fmt.Scan*): each time its
// buffer runs dry it asks the running cell's front end for a line.
type stdinReader struct {
	mu  sync.Mutex
	pub *lockedPublisher
	buf []byte
	// asReader is the value installed as os.Stdin in the interpreter.
	asReader io.Reader
}

// errNoCell is returned when standard input is read outside a cell.
var errNoCell = errors.New("gml: standard input is only available while a cell runs")

func (s *stdinReader) set(p *lockedPublisher) {
	s.mu.Lock()
	s.pub, s.buf = p, nil
	s.mu.Unlock()
}

// Read returns buffered input, asking the front end for a new line when none is left.
// An input request the front end refuses reads as that error.
func (s *stdinReader) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf) == 0 {
		if s.pub == nil {
			return 0, errNoCell
		}
		line, err := s.pub.Input("", false)
		if err != nil {
			return 0, err
		}
		s.buf = []byte(line + "\n")
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}
