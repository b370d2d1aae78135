// Command testsummary reads the event stream of `go test -json` on stdin, prints what
// `go test` prints without -json (a line per package, and the whole output of each test
// that failed), and ends with what did not run on this machine: one line per skipped
// test with the reason it gave, grouped by reason, so that a green run on a machine
// without a GPU, a dataset or a tool is not read as coverage it is not. It exits 1 when
// a test, a package or a build failed, or when the stream ends without a package
// result (a crashed `go test`). `make test` pipes `go test -json ./...` through it.
//
// Usage: go test -json ./... | go run ./internal/testsummary
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	failed, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// event is one line of test2json output (go doc test2json), with the build events of
// `go test -json` (Go 1.24+).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string // build-output, build-fail
	FailedBuild string // fail of a package whose build failed
}

// testKey identifies a test (Test "" is the package itself).
type testKey struct{ pkg, test string }

// skip is a test that did not run, and why.
type skip struct {
	testKey
	reason string
}

// summarize copies the usual output of the stream in to out, then the summary, and
// reports whether anything failed.
func summarize(in io.Reader, out io.Writer) (failed bool, err error) {
	w := out                          // unbuffered: each package's line shows when it finishes
	outputs := map[testKey][]string{} // output of running tests, dropped when they pass
	var skips []skip
	var failures []testKey
	packages, results := map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event (go vet output, a crashed go command): pass it on.
			fmt.Fprintln(w, string(line))
			continue
		}
		k := testKey{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "build-fail":
			failed = true
			failures = append(failures, testKey{pkg: e.ImportPath, test: "(build)"})
		case "start":
			packages[e.Package] = true
		case "run":
			outputs[k] = nil
		case "output":
			if e.Test == "" {
				// Package lines: "ok  pkg 1.2s", "FAIL", output outside tests. The
				// bare PASS line is what -v adds.
				if e.Output != "PASS\n" {
					fmt.Fprint(w, e.Output)
				}
				continue
			}
			outputs[k] = append(outputs[k], e.Output)
		case "pass":
			if e.Test == "" {
				results[e.Package] = true
			}
			delete(outputs, k)
		case "skip":
			if e.Test == "" {
				results[e.Package] = true // "no test files" or every test skipped
				continue
			}
			skips = append(skips, skip{k, skipReason(outputs[k])})
			delete(outputs, k)
		case "fail":
			failed = true
			if e.Test == "" {
				results[e.Package] = true
				continue
			}
			failures = append(failures, k)
			if !hasFailedChild(failures, k) {
				for _, o := range outputs[k] {
					if !strings.HasPrefix(o, "=== ") { // RUN, PAUSE, CONT, NAME: what -json adds
						fmt.Fprint(w, o)
					}
				}
			}
			delete(outputs, k)
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	var missing []string
	for p := range packages {
		if !results[p] {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	for _, p := range missing {
		failed = true
		fmt.Fprintf(w, "FAIL\t%s\t(no result: the test binary or go test stopped)\n", p)
	}
	writeSummary(w, skips, failures)
	return failed, nil
}

// hasFailedChild reports whether a subtest of k failed already: its output, printed
// then, holds the messages, and the parent's own output only repeats the --- lines.
func hasFailedChild(failures []testKey, k testKey) bool {
	for _, f := range failures {
		if f.pkg == k.pkg && strings.HasPrefix(f.test, k.test+"/") {
			return true
		}
	}
	return false
}

// skipReason is the message a skipped test logged: its output without the "=== RUN"
// and "--- SKIP" lines, the file:line prefix and the indentation, on one line.
func skipReason(lines []string) string {
	var parts []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		if i := strings.Index(l, ".go:"); i > 0 && !strings.ContainsAny(l[:i], " \t") {
			if j := strings.Index(l[i:], ": "); j > 0 {
				l = l[i+j+2:]
			}
		}
		parts = append(parts, l)
	}
	if len(parts) == 0 {
		return "no reason given"
	}
	return strings.Join(parts, " ")
}

// shortPackage drops the module path, keeping the package's directory.
func shortPackage(p string) string {
	const module = "github.com/gml-dev/gml/"
	if rest, ok := strings.CutPrefix(p, module); ok {
		return rest
	}
	return p
}

// writeSummary prints the failures, then the skips grouped by reason, then one line.
func writeSummary(w io.Writer, skips []skip, failures []testKey) {
	if len(failures) > 0 {
		fmt.Fprintf(w, "\nFAILED (%d):\n", len(failures))
		for _, f := range failures {
			fmt.Fprintf(w, "  %s %s\n", shortPackage(f.pkg), f.test)
		}
	}
	if len(skips) == 0 {
		fmt.Fprintln(w, "\nnot run here: nothing (no test skipped)")
		return
	}
	byReason := map[string][]string{}
	var reasons []string
	for _, s := range skips {
		if _, ok := byReason[s.reason]; !ok {
			reasons = append(reasons, s.reason)
		}
		byReason[s.reason] = append(byReason[s.reason], shortPackage(s.pkg)+" "+s.test)
	}
	sort.Strings(reasons)
	fmt.Fprintf(w, "\nskipped (%d):\n", len(skips))
	for _, r := range reasons {
		fmt.Fprintf(w, "  %s\n", r)
		for _, t := range byReason[r] {
			fmt.Fprintf(w, "    %s\n", t)
		}
	}
	var line []string
	for _, r := range reasons {
		line = append(line, fmt.Sprintf("%s (%d)", r, len(byReason[r])))
	}
	fmt.Fprintf(w, "not run here: %s\n", strings.Join(line, "; "))
}
