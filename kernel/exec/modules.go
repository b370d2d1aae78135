package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"plugin"
	"reflect"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
)

// Third-party modules and compiled cells (README "Modules and compiled cells").
// `%go get MODULE@VERSION` and `%%go` cells are compiled by the Go toolchain into
// plugins (go build -buildmode=plugin) that the kernel's process loads. A plugin shares
// every package it has in common with the kernel (the runtime, reflect, gml's tensor,
// ...), so values pass both ways without copies, but only if those packages are
// identical: the plugin is built by the same Go version, with the kernel's build flags
// (-trimpath, -tags), against the kernel's module versions and gml's own source (found
// from this file's compiled-in path, or GML_SOURCE). The workspace is a module made
// for the kernel's lifetime in a temporary directory: its go.mod requires gml (replaced
// by its source) and takes what `%go get` adds; modules come from the module cache and
// GOPROXY as for any go command. Each plugin exports the yaegi symbol table of one
// package, written by a generator program in the workspace that runs yaegi's extract
// (as kernel/exec/symbols/gen does), and the kernel hands the table to the
// interpreter: the package is then importable by its path. A %%go cell is a package of
// its own; its exported functions, types and constants are also declared in the cells
// (F := _gmlgoN.F, type T = _gmlgoN.T), so later cells call them by name and a new
// version of the cell replaces them. Plugins cannot be unloaded; each build of a cell
// is a new package.
//
// Errors name what failed: no go command, another Go version, gml's source not found,
// a module version the kernel's own dependencies conflict with, cgo without a C
// compiler, the compile errors of a %%go cell at the cell's lines.

// goWorkspace is the module in which plugins are built.
type goWorkspace struct {
	dir    string   // the module's directory
	goBin  string   // the go command
	env    []string // its environment
	flags  []string // go build flags matching the kernel's build
	plugin int      // numbers plugins and %%go cells
	loaded map[string]bool
	kernel map[string]string // the kernel's modules and their versions
}

// workspace returns the kernel's Go workspace, made on first use.
func (i *Interp) workspace() (*goWorkspace, error) {
	i.mu.Lock()
	ws := i.ws
	i.mu.Unlock()
	if ws != nil {
		return ws, nil
	}
	ws, err := newWorkspace()
	if err != nil {
		return nil, err
	}
	i.mu.Lock()
	i.ws = ws
	i.mu.Unlock()
	return ws, nil
}

// newWorkspace checks the toolchain and writes the workspace module.
func newWorkspace() (*goWorkspace, error) {
	goBin := os.Getenv("GML_GO")
	if goBin == "" {
		if p, err := exec.LookPath("go"); err == nil {
			goBin = p
		} else if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
			goBin = p
		} else {
			return nil, fmt.Errorf("the go command is needed (not found on PATH, in GML_GO or in %s): install %s", filepath.Dir(p), runtime.Version())
		}
	}
	out, err := exec.Command(goBin, "env", "GOVERSION").Output()
	if err != nil {
		return nil, fmt.Errorf("the go command %s does not run (%v): install %s, or point GML_GO at its go", goBin, err, runtime.Version())
	}
	if v := strings.TrimSpace(string(out)); v != runtime.Version() {
		return nil, fmt.Errorf("the go command %s is %s but the kernel was built with %s: plugins must be built by the same toolchain (put a %s first on PATH or set GML_GO)", goBin, v, runtime.Version(), runtime.Version())
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil, errors.New("the kernel has no build information to match its module versions")
	}
	require, replace, err := gmlRequirement(info)
	if err != nil {
		return nil, err
	}
	kernel, err := kernelModules(goBin, info, replace)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", workspacePattern(os.Getpid()))
	if err != nil {
		return nil, err
	}
	// Every module of the kernel at the kernel's version: the module graph then starts
	// from them, and what %go get adds is checked against them (checkVersions).
	reqs := []string{require}
	for _, m := range sortedKeys(kernel) {
		reqs = append(reqs, m+" "+kernel[m])
	}
	gomod := fmt.Sprintf("module %s\n\ngo %s\n\nrequire (\n\t%s\n)\n%s",
		wsModule, strings.TrimPrefix(runtime.Version(), "go"), strings.Join(reqs, "\n\t"), replace)
	files := map[string]string{"go.mod": gomod, "gen/main.go": generatorSource}
	if replace != "" {
		if sum, err := os.ReadFile(filepath.Join(strings.TrimSpace(strings.SplitN(replace, "=>", 2)[1]), "go.sum")); err == nil {
			files["go.sum"] = string(sum)
		}
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	ws := &goWorkspace{dir: dir, goBin: goBin, loaded: map[string]bool{}, kernel: kernel}
	ws.env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off", "CGO_ENABLED=1")
	for _, s := range info.Settings {
		switch {
		case s.Key == "-trimpath" && s.Value == "true":
			ws.flags = append(ws.flags, "-trimpath")
		case s.Key == "-tags" || s.Key == "-gcflags" || s.Key == "-asmflags":
			ws.flags = append(ws.flags, s.Key+"="+s.Value)
		case strings.HasPrefix(s.Key, "GO") && s.Key != "GOOS" && s.Key != "GOARCH":
			ws.env = append(ws.env, s.Key+"="+s.Value) // GOAMD64, GOEXPERIMENT, ...
		}
	}
	return ws, nil
}

// workspacePattern is the os.MkdirTemp pattern of process pid's workspace: with the
// process id in the name, the supervisor of a worker that died can remove it.
func workspacePattern(pid int) string { return fmt.Sprintf("gml-go-%d-*", pid) }

// RemoveWorkspaces removes the Go workspaces process pid left in the temporary
// directory: a kernel worker that died could not remove its own (Close does that).
func RemoveWorkspaces(pid int) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), workspacePattern(pid)))
	for _, d := range dirs {
		os.RemoveAll(d)
	}
}

// wsModule is the module path of the workspace.
const wsModule = "gml.local/cells"

// gmlRequirement returns the go.mod lines that give the workspace the kernel's gml: its
// source directory (GML_SOURCE, or found from this file's compiled-in path), or the
// released version the kernel was built from.
func gmlRequirement(info *debug.BuildInfo) (require, replace string, err error) {
	const module = "github.com/gml-dev/gml"
	root := os.Getenv("GML_SOURCE")
	if root == "" {
		if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
			root = filepath.Dir(filepath.Dir(filepath.Dir(file)))
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); root != "" && err == nil && bytes.Contains(b, []byte("module "+module+"\n")) {
		return module + " v0.0.0-00010101000000-000000000000", "\nreplace " + module + " => " + root + "\n", nil
	}
	if info.Main.Path == module && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return module + " " + info.Main.Version, "", nil
	}
	return "", "", errors.New("gml's source, which plugins are built against, was not found (a kernel built with -trimpath?): set GML_SOURCE to the gml repository the kernel was built from")
}

// generatorSource is the program that writes a package's yaegi symbol table.
const generatorSource = `// Command gen writes the yaegi symbol table of a package into a plugin's main package.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/traefik/yaegi/extract"
)

func main() {
	out := flag.String("o", "", "file to write")
	flag.Parse()
	var b bytes.Buffer
	e := extract.Extractor{Dest: "main"}
	if _, err := e.Extract(flag.Arg(0), flag.Arg(0), &b); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`

// pluginMain is the rest of each plugin's main package.
const pluginMain = `package main

import "reflect"

// Symbols is the table the kernel hands to the interpreter.
var Symbols = map[string]map[string]reflect.Value{}
`

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// run runs the go command in the workspace. Its output streams to the cell's stderr
// when stream is set, and is returned.
func (ws *goWorkspace) run(ctx context.Context, stream bool, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, ws.goBin, args...)
	cmd.Dir, cmd.Env = ws.dir, ws.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if stream {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, os.Stderr), io.MultiWriter(&out, os.Stderr)
	}
	err := cmd.Run()
	return out.String(), err
}

// magicGoGet runs `go get` in the workspace, checks the kernel's module versions, and
// loads the named packages.
func (i *Interp) magicGoGet(m *magicCall) Result {
	args := strings.Fields(m.args)
	if len(args) < 2 || args[0] != "get" {
		return Result{Err: magicError("usage: %go get MODULE[@VERSION] ...")}
	}
	ws, err := i.workspace()
	if err != nil {
		return Result{Err: magicError("%go get: " + err.Error())}
	}
	saved := map[string][]byte{}
	for _, f := range []string{"go.mod", "go.sum"} {
		saved[f], _ = os.ReadFile(filepath.Join(ws.dir, f))
	}
	restore := func() {
		for f, b := range saved {
			os.WriteFile(filepath.Join(ws.dir, f), b, 0o644)
		}
	}
	if _, err := ws.run(m.ctx, true, append([]string{"get"}, args[1:]...)...); err != nil {
		restore()
		if m.ctx.Err() != nil {
			return Result{Err: interruptError(m.ctx.Err())}
		}
		return Result{Err: magicError(fmt.Sprintf("%%go get %s failed (the go command's output is above)", strings.Join(args[1:], " ")))}
	}
	if err := ws.checkVersions(m.ctx); err != nil {
		restore()
		return Result{Err: magicError(fmt.Sprintf("%%go get %s: %v", strings.Join(args[1:], " "), err))}
	}
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		p, _, _ := strings.Cut(a, "@")
		if _, err := ws.run(m.ctx, false, "list", p); err != nil {
			continue // a module path without a package of that name: its packages load on import
		}
		if err := i.loadPackage(m.ctx, p); err != nil {
			return Result{Err: magicError(err.Error())}
		}
		fmt.Fprintf(os.Stdout, "%s: ready to import\n", p)
	}
	return Result{}
}

// checkVersions fails when the workspace needs a module the kernel contains at another
// version: a plugin cannot hold a second version of a package the kernel has.
func (ws *goWorkspace) checkVersions(ctx context.Context) error {
	out, err := ws.run(ctx, false, "list", "-m", "-e", "-f", "{{.Path}} {{.Version}}", "all")
	if err != nil {
		return fmt.Errorf("listing the modules: %v\n%s", err, out)
	}
	var conflicts []string
	for path, v := range parseModules(out) {
		if kv, ok := ws.kernel[path]; ok && kv != v {
			conflicts = append(conflicts, fmt.Sprintf("%s %s (the kernel has %s)", path, v, kv))
		}
	}
	sort.Strings(conflicts)
	if len(conflicts) > 0 {
		return fmt.Errorf("it needs versions of modules the kernel is built with that differ from the kernel's: %s; pick a version that works with the kernel's, or build gml with the newer ones", strings.Join(conflicts, ", "))
	}
	return nil
}

// kernelModules returns the modules the kernel is built with and their versions: those
// that provide the packages of gml's command in gml's source when the workspace uses
// the source, else those the build information records.
func kernelModules(goBin string, info *debug.BuildInfo, replace string) (map[string]string, error) {
	if replace != "" {
		cmd := exec.Command(goBin, "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}", "./cmd/gml")
		cmd.Dir = strings.TrimSpace(strings.SplitN(replace, "=>", 2)[1])
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off")
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("listing the modules of gml's source in %s: %v", cmd.Dir, err)
		}
		mods := parseModules(string(out))
		delete(mods, "github.com/gml-dev/gml")
		return mods, nil
	}
	mods := map[string]string{}
	for _, d := range info.Deps {
		if d.Replace == nil && d.Version != "" && d.Version != "(devel)" {
			mods[d.Path] = d.Version
		}
	}
	return mods, nil
}

// parseModules reads the "path version" lines of go list -m.
func parseModules(out string) map[string]string {
	mods := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			mods[f[0]] = f[1]
		}
	}
	return mods
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// loadPackage builds the plugin of the package at path in the workspace, loads it and
// makes the package importable.
func (i *Interp) loadPackage(ctx context.Context, path string) error {
	ws, err := i.workspace()
	if err != nil {
		return err
	}
	if ws.loaded[path] {
		return nil
	}
	ws.plugin++
	name := fmt.Sprintf("p%d", ws.plugin)
	dir := filepath.Join(ws.dir, "plugins", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(pluginMain), 0o644); err != nil {
		return err
	}
	if out, err := ws.run(ctx, false, "run", "./gen", "-o", filepath.Join(dir, "symbols.go"), path); err != nil {
		return fmt.Errorf("reading the exported API of %s: %s", path, buildFailure(out, err))
	}
	so := filepath.Join(ws.dir, "plugins", name+".so")
	args := append(append([]string{"build", "-buildmode=plugin"}, ws.flags...), "-o", so, "./plugins/"+name)
	if out, err := ws.run(ctx, false, args...); err != nil {
		return fmt.Errorf("building %s: %s", path, buildFailure(out, err))
	}
	p, err := plugin.Open(so)
	if err != nil {
		msg := err.Error()
		if strings.Contains(msg, "different version of package") {
			msg += " (the plugin and the kernel must be built from the same sources and flags: rebuild the kernel, or set GML_SOURCE to the sources it was built from)"
		}
		return fmt.Errorf("loading %s: %s", path, msg)
	}
	sym, err := p.Lookup("Symbols")
	if err != nil {
		return fmt.Errorf("loading %s: %v", path, err)
	}
	tables, ok := sym.(*map[string]map[string]reflect.Value)
	if !ok {
		return fmt.Errorf("loading %s: the plugin's Symbols has type %T", path, sym)
	}
	if err := i.yi.Use(*tables); err != nil {
		return fmt.Errorf("loading %s: %v", path, err)
	}
	i.mu.Lock()
	for key := range *tables {
		i.paths = append(i.paths, filepath.Dir(key))
	}
	i.mu.Unlock()
	ws.loaded[path] = true
	return nil
}

// buildFailure explains a failed go command from its output.
func buildFailure(out string, err error) string {
	out = strings.TrimSpace(out)
	switch {
	case strings.Contains(out, "C compiler") || strings.Contains(out, "cgo:") || strings.Contains(out, "exec: \"gcc\""):
		return "it needs cgo, and no working C compiler was found (install gcc, or set CC):\n" + out
	case out == "":
		return err.Error()
	}
	return out
}

// importModules loads, before an import chunk compiles, the packages it imports that
// the interpreter does not know and the workspace provides (packages of modules that
// %go get fetched).
func (i *Interp) importModules(f *ast.File) error {
	i.mu.Lock()
	ws := i.ws
	known := map[string]bool{}
	for _, p := range i.paths {
		known[p] = true
	}
	i.mu.Unlock()
	if ws == nil {
		return nil
	}
	std := stdPaths()
	for _, imp := range f.Imports {
		_, p := importName(imp)
		if known[p] || std[p] || !strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
			continue
		}
		if _, err := ws.run(context.Background(), false, "list", p); err != nil {
			continue // yaegi reports the import
		}
		if err := i.loadPackage(context.Background(), p); err != nil {
			return fmt.Errorf("%s: %w", i.yi.FileSet().Position(imp.Pos()), err)
		}
	}
	return nil
}

// goErrRE matches a compile error of a %%go cell's file: "c/c3/cell.go:5:2: msg".
var goErrRE = regexp.MustCompile(`(?m)^(?:\./)?c/c\d+/cell\.go:(\d+):(\d+): `)

// magicGoCell compiles a %%go cell as a package, loads it, and declares its exported
// functions, types and constants in the cells.
func (i *Interp) magicGoCell(m *magicCall) Result {
	ws, err := i.workspace()
	if err != nil {
		return Result{Err: magicError("%%go: " + err.Error())}
	}
	ws.plugin++
	name := fmt.Sprintf("c%d", ws.plugin)
	lines := strings.Split(m.body, "\n")
	f, err := parser.ParseFile(token.NewFileSet(), "", m.body, parser.PackageClauseOnly)
	if err != nil || f.Name == nil {
		lines[m.line-1] = "package " + name // on the magic's line: the cell's lines stay
	}
	dir := filepath.Join(ws.dir, "c", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{Err: magicError("%%go: " + err.Error())}
	}
	if err := os.WriteFile(filepath.Join(dir, "cell.go"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		return Result{Err: magicError("%%go: " + err.Error())}
	}
	path := wsModule + "/c/" + name
	if out, err := ws.run(m.ctx, false, "build", "-o", os.DevNull, "./c/"+name); err != nil && goErrRE.MatchString(out) {
		msg := goErrRE.ReplaceAllString(strings.TrimSpace(out), fmt.Sprintf("cell[%d]:$1:$2: ", m.id))
		msg = strings.TrimPrefix(msg, "# "+path+"\n")
		return Result{Err: compileError(errors.New(msg), m.id, m.code)}
	}
	if err := i.loadPackage(m.ctx, path); err != nil {
		if m.ctx.Err() != nil {
			return Result{Err: interruptError(m.ctx.Err())}
		}
		return Result{Err: magicError("%%go: " + err.Error())}
	}
	// Declare the exports in the cells, through a private import of the package.
	alias := "_gmlgo" + name[1:]
	syms := i.yi.Symbols(path)[path]
	var names []string
	for n := range syms {
		if !strings.HasPrefix(n, "_") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var decls, stmts []string
	for _, n := range names {
		v := syms[n]
		switch {
		case v.Kind() == reflect.Pointer && v.IsNil():
			decls = append(decls, fmt.Sprintf("type %s = %s.%s", n, alias, n))
		case v.Kind() == reflect.Func:
			stmts = append(stmts, fmt.Sprintf("%s := %s.%s", n, alias, n))
		case !v.CanSet(): // a constant
			decls = append(decls, fmt.Sprintf("const %s = %s.%s", n, alias, n))
		}
	}
	src := fmt.Sprintf("import %s %q\n%s\n%s", alias, path, strings.Join(decls, "\n"), strings.Join(stmts, "\n"))
	if res := i.runCode(m.ctx, m.parent, fmt.Sprintf("cell[%d]", m.id), m.id, src); res.Err != nil {
		return res
	}
	i.mu.Lock()
	for _, n := range names {
		i.goNames[n] = true
	}
	i.mu.Unlock()
	return Result{}
}
