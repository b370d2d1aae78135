// Command mutate checks that the test suite catches realistic bugs: it plants each bug
// of its list (mutations.go) one at a time in a scratch copy of the repository, runs the
// tests of the packages that bug concerns, and reports which bugs the suite caught, as a
// table on stdout and, with -json, as JSON. It is run by `make mutate`, not by `make
// test`: a full run takes tens of minutes.
//
// A mutation is a file, an exact snippet of it and its replacement, so the list stays
// usable as the code changes: a snippet that is no longer in its file (or is there more
// than once) is reported as such, never applied somewhere else. Mutations of GLSL
// sources regenerate the SPIR-V (go generate ./shaders, which needs glslc) before the
// tests run. A mutation that no longer compiles is reported, not counted as caught.
//
// Usage:
//
//	go run ./internal/mutate [-run REGEXP] [-json FILE] [-md FILE] [-list] [-check] [-keep] [-baseline=false]
//
// The reports (-json, -md) are rewritten after each mutation, so a run stopped early
// leaves the results it had.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(2)
	}
}

func run() error {
	only := flag.String("run", "", "run only the mutations whose name matches this regular expression")
	jsonOut := flag.String("json", "", "also write the report as JSON to this file")
	mdOut := flag.String("md", "", "also write the report's table (Markdown) to this file")
	list := flag.Bool("list", false, "list the mutations and exit")
	check := flag.Bool("check", false, "only check that every snippet is in its file exactly once")
	keep := flag.Bool("keep", false, "keep the scratch copy (and the test logs in it)")
	baseline := flag.Bool("baseline", true, "first run every selected package unmutated, and stop if that fails")
	timeout := flag.Duration("timeout", 20*time.Minute, "go test -timeout for each run")
	flag.Parse()
	selected := mutations
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return fmt.Errorf("-run: %w", err)
		}
		selected = nil
		for _, m := range mutations {
			if re.MatchString(m.name) {
				selected = append(selected, m)
			}
		}
		if len(selected) == 0 {
			return fmt.Errorf("-run %q selects no mutation", *only)
		}
	}
	if *list {
		for _, m := range selected {
			fmt.Printf("%-34s %-11s %s\n", m.name, m.area, m.about)
		}
		return nil
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if *check {
		return checkSnippets(root, selected)
	}
	scratch, err := os.MkdirTemp("", "gml-mutate-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintln(os.Stderr, "mutate: scratch copy in", scratch)
	} else {
		defer os.RemoveAll(scratch)
	}
	repo := filepath.Join(scratch, filepath.Base(root))
	if err := copyTree(root, repo); err != nil {
		return err
	}
	// Tests read ../shared beside the repository.
	if shared := filepath.Join(root, "..", "shared"); exists(shared) {
		if err := os.Symlink(shared, filepath.Join(scratch, "shared")); err != nil {
			return err
		}
	}
	logs := filepath.Join(scratch, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	t := &tester{repo: repo, logs: logs, timeout: *timeout}
	if *baseline {
		pkgs := map[string]bool{}
		for _, m := range selected {
			for _, p := range t.packages(m) {
				pkgs[p] = true
			}
		}
		all := sortedKeys(pkgs)
		fmt.Fprintf(os.Stderr, "mutate: baseline: go test %s\n", strings.Join(all, " "))
		out := t.test("baseline", all, "")
		if out.buildFailed || out.err != nil && len(out.failed) == 0 {
			return fmt.Errorf("the unmutated suite does not run (%s; log %s): fix that first, or pass -baseline=false",
				describe(out), out.log)
		}
		// A test that fails unmutated (a timing test on a loaded machine) cannot tell
		// whether a mutation is caught: it is left out of every verdict.
		t.flaky = map[string]bool{}
		for _, f := range out.allFailed {
			t.flaky[f] = true
		}
		if len(out.failed) > 0 {
			fmt.Fprintf(os.Stderr, "mutate: failing unmutated, so not counted: %s\n", strings.Join(out.allFailed, ", "))
		}
	}
	var results []result
	for i, m := range selected {
		fmt.Fprintf(os.Stderr, "mutate: [%d/%d] %s\n", i+1, len(selected), m.name)
		r := t.try(m)
		fmt.Fprintf(os.Stderr, "mutate:   %s %s (%.0fs)\n", r.Result, strings.Join(r.CaughtBy, ", "), r.Seconds)
		results = append(results, r)
		if err := writeReports(*jsonOut, *mdOut, results); err != nil {
			return err
		}
	}
	writeTable(os.Stdout, results)
	return nil
}

// writeReports writes the results so far to the files given (either may be "").
func writeReports(jsonFile, mdFile string, results []result) error {
	if jsonFile != "" {
		data, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(jsonFile, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	if mdFile != "" {
		var b bytes.Buffer
		writeTable(&b, results)
		if err := os.WriteFile(mdFile, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// The results a mutation can have.
const (
	caught      = "caught"
	notCaught   = "NOT CAUGHT"
	notFound    = "snippet not found"
	ambiguous   = "snippet ambiguous"
	noCompile   = "does not compile"
	toolFailure = "error"
)

// result is one row of the report.
type result struct {
	Name     string   `json:"name"`
	Area     string   `json:"area"`
	About    string   `json:"about"`
	Files    []string `json:"files"`
	Packages []string `json:"packages"`
	Result   string   `json:"result"`
	CaughtBy []string `json:"caught_by,omitempty"` // failing tests, leaves first, at most 4
	Detail   string   `json:"detail,omitempty"`
	Seconds  float64  `json:"seconds"`
}

// tester runs go test in the scratch copy.
type tester struct {
	repo, logs string
	timeout    time.Duration
	flaky      map[string]bool // tests that fail unmutated
}

// packages returns m's packages that exist in the copy (one the list names that this
// tree lacks is left out).
func (t *tester) packages(m mutation) []string {
	var out []string
	for _, p := range m.pkgs {
		dir := filepath.Join(t.repo, strings.TrimSuffix(p, "/..."))
		if exists(dir) {
			out = append(out, p)
		}
	}
	return out
}

// try plants m, runs its tests and puts the files back.
func (t *tester) try(m mutation) result {
	start := time.Now()
	r := result{Name: m.name, Area: m.area, About: m.about, Packages: t.packages(m)}
	for _, e := range m.edits {
		r.Files = append(r.Files, e.file)
	}
	finish := func(res, detail string) result {
		r.Result, r.Detail, r.Seconds = res, detail, time.Since(start).Round(time.Second).Seconds()
		return r
	}
	originals := map[string][]byte{}
	defer func() {
		for path, data := range originals {
			os.WriteFile(path, data, 0o644)
		}
	}()
	save := func(path string) error {
		if _, ok := originals[path]; ok {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		originals[path] = data
		return nil
	}
	for _, e := range m.edits {
		path := filepath.Join(t.repo, e.file)
		if err := save(path); err != nil {
			return finish(notFound, err.Error())
		}
		data, _ := os.ReadFile(path)
		switch n := bytes.Count(data, []byte(e.old)); n {
		case 1:
			os.WriteFile(path, bytes.Replace(data, []byte(e.old), []byte(e.new), 1), 0o644)
		case 0:
			return finish(notFound, fmt.Sprintf("%s: %q", e.file, firstLine(e.old)))
		default:
			return finish(ambiguous, fmt.Sprintf("%s: %q occurs %d times", e.file, firstLine(e.old), n))
		}
	}
	if m.regen {
		spv := filepath.Join(t.repo, "shaders", "spv")
		entries, err := os.ReadDir(spv)
		if err != nil {
			return finish(toolFailure, err.Error())
		}
		for _, e := range entries {
			if err := save(filepath.Join(spv, e.Name())); err != nil {
				return finish(toolFailure, err.Error())
			}
		}
		gen := exec.Command("go", "generate", "./shaders")
		gen.Dir = t.repo
		if out, err := gen.CombinedOutput(); err != nil {
			return finish(noCompile, "go generate ./shaders: "+strings.TrimSpace(string(out)))
		}
	}
	if len(r.Packages) == 0 {
		return finish(toolFailure, "none of its packages exists")
	}
	out := t.test(m.name, r.Packages, m.run)
	var real []string
	for _, f := range out.allFailed {
		if !t.flaky[f] {
			real = append(real, f)
		}
	}
	switch {
	case out.buildFailed:
		return finish(noCompile, out.log)
	case len(real) > 0:
		r.CaughtBy = leaves(real)
		return finish(caught, out.log)
	case len(out.failed) > 0:
		return finish(notCaught, "only tests failing unmutated failed; "+out.log)
	case out.err != nil:
		// go test failed without a failing test: a crash or a timeout is caught too.
		r.CaughtBy = []string{"(go test: " + out.err.Error() + ")"}
		return finish(caught, out.log)
	}
	return finish(notCaught, out.log)
}

// outcome is what one go test run showed.
type outcome struct {
	failed      []string // failing tests, the innermost ones, at most 4 and a count
	allFailed   []string // every failing test and subtest
	buildFailed bool
	err         error // go test's exit status
	log         string
}

func describe(o outcome) string {
	switch {
	case o.buildFailed:
		return "build failed"
	case len(o.failed) > 0:
		return "failing: " + strings.Join(o.failed, ", ")
	}
	return fmt.Sprint(o.err)
}

// test runs go test -json on pkgs (only the tests matching run, when set) and collects
// the failing tests; the whole output goes to a log file named after the run.
func (t *tester) test(name string, pkgs []string, run string) outcome {
	args := []string{"test", "-count=1", "-json", "-timeout", t.timeout.String()}
	if run != "" {
		args = append(args, "-run", run)
	}
	cmd := exec.Command("go", append(args, pkgs...)...)
	cmd.Dir = t.repo
	o := outcome{log: filepath.Join(t.logs, name+".log")}
	logFile, err := os.Create(o.log)
	if err != nil {
		return outcome{err: err}
	}
	defer logFile.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return outcome{err: err}
	}
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		return outcome{err: err}
	}
	var failed []string
	var elapsed []string // per package: "pass in 12s"
	sc := bufio.NewScanner(io.TeeReader(stdout, logFile))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e struct {
			Action, Package, Test, Output string
			Elapsed                       float64
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if e.Test == "" && (e.Action == "pass" || e.Action == "fail") {
			elapsed = append(elapsed, fmt.Sprintf("%s %s in %.0fs", shortPackage(e.Package), e.Action, e.Elapsed))
		}
		switch {
		case e.Action == "build-fail" || e.Action == "output" && e.Test == "" && strings.Contains(e.Output, "[build failed]"):
			o.buildFailed = true
		case e.Action == "fail" && e.Test != "":
			failed = append(failed, shortPackage(e.Package)+" "+e.Test)
		}
	}
	o.err = cmd.Wait()
	o.allFailed = failed
	o.failed = leaves(failed)
	fmt.Fprintf(os.Stderr, "mutate:     %s\n", strings.Join(elapsed, ", "))
	return o
}

// leaves keeps the failing tests none of whose subtests failed, at most four, and says
// how many more there were.
func leaves(failed []string) []string {
	var out []string
	for _, f := range failed {
		parent := false
		for _, g := range failed {
			if strings.HasPrefix(g, f+"/") {
				parent = true
				break
			}
		}
		if !parent {
			out = append(out, f)
		}
	}
	if len(out) > 4 {
		out = append(out[:4], fmt.Sprintf("(+%d more)", len(out)-4))
	}
	return out
}

func shortPackage(p string) string {
	return strings.TrimPrefix(p, "github.com/gml-dev/gml/")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// writeTable prints the report and the share caught.
func writeTable(w io.Writer, results []result) {
	fmt.Fprintf(w, "| mutation | mutated file | result | caught by | time |\n|---|---|---|---|---|\n")
	count := map[string]int{}
	var missed, broken []string
	for _, r := range results {
		by := strings.Join(r.CaughtBy, ", ")
		if r.Result != caught && r.Result != notCaught {
			by = r.Detail
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.0fs |\n", r.Name, strings.Join(slices.Compact(r.Files), ", "), r.Result, by, r.Seconds)
		count[r.Result]++
		switch r.Result {
		case caught:
		case notCaught:
			missed = append(missed, r.Name)
		default:
			broken = append(broken, r.Name+" ("+r.Result+")")
		}
	}
	tried := count[caught] + count[notCaught]
	share := 0.0
	if tried > 0 {
		share = 100 * float64(count[caught]) / float64(tried)
	}
	fmt.Fprintf(w, "\ncaught %d of %d mutations (%.0f%%)", count[caught], tried, share)
	if len(missed) > 0 {
		fmt.Fprintf(w, "; not caught: %s", strings.Join(missed, ", "))
	}
	if len(broken) > 0 {
		fmt.Fprintf(w, "; not tried: %s", strings.Join(broken, ", "))
	}
	fmt.Fprintln(w)
}

// checkSnippets reports each mutation whose snippets are missing from their files or
// occur more than once, and fails when there is one.
func checkSnippets(root string, ms []mutation) error {
	bad := 0
	for _, m := range ms {
		for _, e := range m.edits {
			data, err := os.ReadFile(filepath.Join(root, e.file))
			n := bytes.Count(data, []byte(e.old))
			if err != nil || n != 1 {
				bad++
				fmt.Printf("%s: %s: %q occurs %d times\n", m.name, e.file, firstLine(e.old), n)
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d snippets to update", bad)
	}
	fmt.Printf("all snippets of %d mutations found\n", len(ms))
	return nil
}

// repoRoot is the top of the git work tree holding the working directory.
func repoRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("not in a git work tree: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// copyTree copies the files git knows of or would add (tracked, and untracked ones not
// ignored: the work in progress too) from root to dst.
func copyTree(root, dst string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, f)
		info, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree, not yet in the index
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, data, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
