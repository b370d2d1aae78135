package kernel

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/gml-dev/gml/kernel/wire"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, input string
		want           bool
	}{
		{"1?1", "1+1", true},
		{"1?1", "1+12", false},
		{"*fmt*", "import \"fmt\"\nfmt.Println(1)", true},
		{"x[0-9]", "x7", true},
		{"x[!0-9]", "x7", false},
		{"x[!0-9]", "xa", true},
		{"a.b", "axb", false}, // regexp metacharacters are literal
		{"", "anything\nat all", true},
		{"[unclosed", "[unclosed", true},
	}
	for _, tc := range tests {
		re, err := globRegexp(tc.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		if got := re.MatchString(tc.input); got != tc.want {
			t.Errorf("glob %q on %q = %v, want %v", tc.pattern, tc.input, got, tc.want)
		}
	}
}

func TestHistoryAcrossSessions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gml", "history.jsonl")
	first := NewHistory(path)
	first.Add(1, "a := 1", nil)
	first.Add(2, "a + 1", "2")
	first.Close()
	second := NewHistory(path)
	second.Add(1, "b := 2", nil)
	defer second.Close()

	tests := []struct {
		name string
		req  wire.HistoryRequest
		want string
	}{
		{"tail spans sessions", wire.HistoryRequest{HistAccessType: "tail", N: 2}, `[[1,2,"a + 1"],[2,1,"b := 2"]]`},
		{"range of the previous session", wire.HistoryRequest{HistAccessType: "range", Session: -1, Start: 1}, `[[1,1,"a := 1"],[1,2,"a + 1"]]`},
		{"range by absolute number", wire.HistoryRequest{HistAccessType: "range", Session: 2, Start: 1, Stop: 2}, `[[2,1,"b := 2"]]`},
		{"range of the current session", wire.HistoryRequest{HistAccessType: "range", Start: 1}, `[[2,1,"b := 2"]]`},
		{"output", wire.HistoryRequest{HistAccessType: "search", Pattern: "a + 1", Output: true}, `[[1,2,["a + 1","2"]]]`},
		{"search last n", wire.HistoryRequest{HistAccessType: "search", Pattern: "*:=*", N: 1}, `[[2,1,"b := 2"]]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := second.Query(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := json.Marshal(got)
			if string(data) != tc.want {
				t.Errorf("got %s, want %s", data, tc.want)
			}
		})
	}
	if _, err := second.Query(wire.HistoryRequest{HistAccessType: "bogus"}); err == nil {
		t.Error("an unknown hist_access_type was accepted")
	}
}
