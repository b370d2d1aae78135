package kernel

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/gml-dev/gml/kernel/wire"
)

// maxPastEntries bounds how many entries of earlier sessions are loaded from the file.
const maxPastEntries = 10000

// historyEntry is one executed cell.
type historyEntry struct {
	Session int    `json:"-"`
	SID     string `json:"sid"` // random id of the kernel session that ran it
	Line    int    `json:"line"`
	Input   string `json:"input"`
	Output  any    `json:"output"` // text/plain of the cell's value, or nil
}

// History records the cells a kernel executed, in memory for this session and, when a
// file is configured, appended to that file (one JSON object per line) so that later
// sessions can read earlier ones. Sessions are numbered from 1 in the order they first
// appear in the file; the file is read only when a history_request needs it.
type History struct {
	mu      sync.Mutex
	sid     string
	path    string
	file    *os.File // opened on the first Add; nil without a path
	current []historyEntry
	past    []historyEntry
	loaded  bool
	session int // number of the current session, known once loaded
}

// NewHistory returns an empty history persisted to path ("" keeps it in memory).
func NewHistory(path string) *History {
	return &History{sid: wire.NewID(), path: path, session: 1}
}

// Add records that cell line ran input, with output the text of its value or nil.
func (h *History) Add(line int, input string, output any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := historyEntry{Session: h.session, SID: h.sid, Line: line, Input: input, Output: output}
	h.current = append(h.current, e)
	if h.path == "" {
		return
	}
	if h.file == nil {
		if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
			h.path = ""
			return
		}
		f, err := os.OpenFile(h.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			h.path = ""
			return
		}
		h.file = f
	}
	data, err := json.Marshal(e)
	if err == nil {
		_, _ = h.file.Write(append(data, '\n'))
	}
}

// Close closes the history file.
func (h *History) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.file == nil {
		return nil
	}
	err := h.file.Close()
	h.file, h.path = nil, ""
	return err
}

// load reads earlier sessions from the file once and numbers the sessions.
func (h *History) load() error {
	if h.loaded {
		return nil
	}
	h.loaded = true
	if h.path == "" {
		return nil
	}
	f, err := os.Open(h.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading history: %w", err)
	}
	defer f.Close()
	numbers := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	for sc.Scan() {
		var e historyEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.SID == "" || e.SID == h.sid {
			continue
		}
		n, ok := numbers[e.SID]
		if !ok {
			n = len(numbers) + 1
			numbers[e.SID] = n
		}
		e.Session = n
		h.past = append(h.past, e)
		if len(h.past) > 2*maxPastEntries {
			h.past = append(h.past[:0], h.past[len(h.past)-maxPastEntries:]...)
		}
	}
	if len(h.past) > maxPastEntries {
		h.past = h.past[len(h.past)-maxPastEntries:]
	}
	h.session = len(numbers) + 1
	for i := range h.current {
		h.current[i].Session = h.session
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading history %s: %w", h.path, err)
	}
	return nil
}

// Query answers a history_request: "tail" (the last n cells), "range" (lines start up
// to stop of a session: 0 is the current one, negative counts back from it) or
// "search" (inputs matching a glob pattern, the last n, optionally unique).
func (h *History) Query(req wire.HistoryRequest) ([][]any, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	loadErr := h.load()
	all := append(append([]historyEntry(nil), h.past...), h.current...)
	var sel []historyEntry
	switch req.HistAccessType {
	case "tail":
		sel = last(all, req.N)
	case "range":
		session := req.Session
		if session <= 0 {
			session += h.session
		}
		for _, e := range all {
			if e.Session == session && e.Line >= req.Start && (req.Stop <= 0 || e.Line < req.Stop) {
				sel = append(sel, e)
			}
		}
	case "search":
		re, err := globRegexp(req.Pattern)
		if err != nil {
			return [][]any{}, err
		}
		seen := map[string]bool{}
		for i := len(all) - 1; i >= 0; i-- {
			e := all[i]
			if !re.MatchString(e.Input) || (req.Unique && seen[e.Input]) {
				continue
			}
			seen[e.Input] = true
			sel = append(sel, e)
			if req.N > 0 && len(sel) == req.N {
				break
			}
		}
		for i, j := 0, len(sel)-1; i < j; i, j = i+1, j-1 {
			sel[i], sel[j] = sel[j], sel[i]
		}
	default:
		return [][]any{}, fmt.Errorf("unknown hist_access_type %q", req.HistAccessType)
	}
	out := make([][]any, 0, len(sel))
	for _, e := range sel {
		var cell any = e.Input
		if req.Output {
			cell = []any{e.Input, e.Output}
		}
		out = append(out, []any{e.Session, e.Line, cell})
	}
	return out, loadErr
}

// last returns the last n entries, or all of them when n <= 0.
func last(entries []historyEntry, n int) []historyEntry {
	if n <= 0 || n >= len(entries) {
		return entries
	}
	return entries[len(entries)-n:]
}

// globRegexp compiles a glob pattern as IPython's history search uses it (SQLite GLOB:
// * any text including newlines, ? one character, [...] a class) into an anchored
// regular expression. An empty pattern matches everything.
func globRegexp(pattern string) (*regexp.Regexp, error) {
	if pattern == "" {
		pattern = "*"
	}
	var b strings.Builder
	b.WriteString(`(?s)^`)
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			j := i + 1
			if j < len(rs) && (rs[j] == '^' || rs[j] == '!') {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				b.WriteString(regexp.QuoteMeta(string(r)))
				continue
			}
			class := string(rs[i+1 : j])
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("history search pattern %q: %w", pattern, err)
	}
	return re, nil
}
