package exec

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"path"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/traefik/yaegi/interp"
	"github.com/traefik/yaegi/stdlib"
)

//go:generate go run ./stdsrc/copy

// Generic standard packages (README "Go in cells"). yaegi's symbol tables cannot hold
// generic functions: slices, maps and cmp are empty there and iter is missing, and the
// partial generic sources yaegi compiles itself fail on most of slices. Cells get these
// packages from source instead. stdsrc holds the standard library's files (copied from
// GOROOT by `go generate`, see stdsrc/VERSION) and hand-written iter and sync/atomic
// parts. yaegi v0.16.1 instantiates generic functions of an imported source package
// badly (it resolves their names from the caller's file), while generic functions of
// the main package work, so each package is compiled into the main package, once, when
// a cell first imports it:
//   - its top-level names are prefixed, slices.Sort becoming _gml_slices_Sort, and a
//     cell's slices.Sort is rewritten to match (renameStdRefs); the packages it imports
//     get private names (_gmlpkg_bits);
//   - generic functions over a core type, F[S ~[]E, E any](s S) S, become F[E any](s
//     []E) []E (simplifyCoreTypes): yaegi can neither infer nor instantiate the first
//     form, so slices.Clone(x) returns []E rather than x's named slice type;
//   - range loops over iter.Seq and iter.Seq2 parameters are lowered as in cells
//     (lower.go); min, max and clear are the prelude's;
//   - what rests on the runtime or unsafe is replaced (runtimeParts): maps' clone and
//     slices' overlaps check by compiled helpers, the sorting functions by the compiled
//     sort package (directly for []int, []float64 and []string, through sort.Slice
//     otherwise, NaNs first as in slices); iter.Pull runs the iterator in a goroutine
//     (stdsrc/iter); sync/atomic is the compiled package re-exported, plus a
//     mutex-based Pointer[T] (stdsrc/sync/atomic).

//go:embed stdsrc
var stdsrc embed.FS

// stdAtomicPath is where the compiled sync/atomic is importable for the source version.
const stdAtomicPath = "gml.internal/atomic"

// stdPkg is a standard package prepared to be compiled into the main package.
type stdPkg struct {
	path    string
	deps    []string        // source packages it imports, compiled first
	code    string          // its declarations, renamed, as a cell's text
	exports map[string]bool // its exported names
}

// stdPkgs holds the prepared packages by import path, once per process.
var stdPkgs struct {
	once sync.Once
	pkgs map[string]*stdPkg
	err  error
}

// stdSources returns the prepared source packages by import path.
func stdSources() (map[string]*stdPkg, error) {
	s := &stdPkgs
	s.once.Do(func() { s.pkgs, s.err = prepareStdPkgs() })
	return s.pkgs, s.err
}

// stdPaths returns the import paths of the packages in stdsrc, without preparing them
// (which takes a while: it is done when a cell first imports one).
var stdPaths = sync.OnceValue(func() map[string]bool {
	paths := map[string]bool{}
	fs.WalkDir(stdsrc, "stdsrc", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go.txt") {
			paths[strings.TrimPrefix(path.Dir(p), "stdsrc/")] = true
		}
		return err
	})
	return paths
})

// stdPrefix returns the prefix of the renamed top-level names of the package at path.
func stdPrefix(path string) string { return "_gml_" + packageName(path) + "_" }

// prepareStdPkgs reads and rewrites the packages of stdsrc (see above).
func prepareStdPkgs() (map[string]*stdPkg, error) {
	files := map[string][]string{} // import path -> file names
	err := fs.WalkDir(stdsrc, "stdsrc", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go.txt") {
			return err
		}
		dir := strings.TrimPrefix(path.Dir(p), "stdsrc/")
		files[dir] = append(files[dir], p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	pkgs := map[string]*stdPkg{}
	for p := range files {
		pkgs[p] = &stdPkg{path: p, exports: map[string]bool{}}
	}
	for p, names := range files {
		if err := pkgs[p].prepare(names, pkgs); err != nil {
			return nil, fmt.Errorf("exec: preparing the source of %s: %w", p, err)
		}
	}
	return pkgs, nil
}

// prepare parses, rewrites and renames the files of one package.
func (pkg *stdPkg) prepare(names []string, pkgs map[string]*stdPkg) error {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		src, err := stdsrc.ReadFile(n)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, n, src, 0) // with object resolution, for renaming
		if err != nil {
			return err
		}
		replaceRuntimeParts(f)
		files = append(files, f)
	}
	name := files[0].Name.Name
	extra := "package " + name + "\n" + kernelImports[pkg.path]
	if pkg.path == "sync/atomic" {
		extra += atomicExports()
	}
	for fn, src := range runtimeParts {
		if strings.HasPrefix(fn, name+".") {
			extra += "\n" + src + "\n"
		}
	}
	f, err := parser.ParseFile(fset, "gml_kernel.go", extra, 0)
	if err != nil {
		return fmt.Errorf("the kernel's part does not parse: %w", err)
	}
	files = append(files, f)
	top := map[string]bool{}
	for _, f := range files {
		simplifyCoreTypes(f)
		expandSeqParams(f)
		if err := lowerRanges(fset, f, staticKinds(f)); err != nil {
			return err
		}
		for _, d := range f.Decls {
			for _, n := range declNames(d) {
				top[n] = true
				if ast.IsExported(n) {
					pkg.exports[n] = true
				}
			}
		}
	}
	imports := map[string]string{} // import line -> itself, deduplicated
	var body bytes.Buffer
	for _, f := range files {
		local := map[string]string{} // name in the file -> replacement prefix or alias
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			n := packageName(p)
			if imp.Name != nil {
				n = imp.Name.Name
			}
			if _, ok := pkgs[p]; ok {
				local[n] = stdPrefix(p)
				pkg.deps = append(pkg.deps, p)
				imports[fmt.Sprintf("import %q", p)] = ""
				continue
			}
			alias := "_gmlpkg_" + strings.NewReplacer("/", "_", ".", "_").Replace(p)
			local[n] = alias
			imports[fmt.Sprintf("import %s %q", alias, p)] = ""
		}
		renameStd(f, top, stdPrefix(pkg.path), local)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
				continue
			}
			if err := printer.Fprint(&body, fset, d); err != nil {
				return err
			}
			body.WriteString("\n\n")
		}
	}
	var head []string
	for imp := range imports {
		head = append(head, imp)
	}
	sort.Strings(head)
	pkg.code = strings.Join(head, "\n") + "\n\n" + body.String()
	return nil
}

// declNames returns the names a top-level declaration declares (not methods).
func declNames(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			out = append(out, d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.Name != "_" {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	return out
}

// renameStd renames, in a file of a standard package, the references to the package's
// top-level names (prefix + name), to the builtins yaegi lacks (the prelude's _gml_min,
// ...), and the package references: imported source packages become prefixes
// (cmp.Less -> _gml_cmp_Less), compiled ones private aliases (bits.Len ->
// _gmlpkg_math_bits.Len). A name counts as top-level when the parser did not resolve
// it to a local declaration. Field and method names, and struct literal keys, stay.
func renameStd(f *ast.File, top map[string]bool, prefix string, imports map[string]string) {
	isTop := func(id *ast.Ident) bool {
		if !top[id.Name] {
			return false
		}
		if id.Obj == nil {
			return true
		}
		switch d := id.Obj.Decl.(type) {
		case *ast.FuncDecl:
			return d.Recv == nil
		case *ast.TypeSpec, *ast.ValueSpec:
			for _, decl := range f.Decls {
				if g, ok := decl.(*ast.GenDecl); ok {
					for _, s := range g.Specs {
						if s == d {
							return true
						}
					}
				}
			}
		}
		return false
	}
	skip := map[*ast.Ident]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncDecl:
			if x.Recv != nil {
				skip[x.Name] = true
			}
		case *ast.Field:
			for _, id := range x.Names {
				skip[id] = true
			}
		case *ast.LabeledStmt:
			skip[x.Label] = true
		case *ast.BranchStmt:
			if x.Label != nil {
				skip[x.Label] = true
			}
		case *ast.KeyValueExpr:
			if id, ok := x.Key.(*ast.Ident); ok && id.Obj == nil {
				skip[id] = true // a struct field name, most likely
			}
		case *ast.SelectorExpr:
			skip[x.Sel] = true
		case *ast.ImportSpec:
			return false
		}
		return true
	})
	replaceExprs(f, func(e ast.Expr) ast.Expr {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return nil
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || pkg.Obj != nil {
			return nil
		}
		repl, ok := imports[pkg.Name]
		if !ok {
			return nil
		}
		if strings.HasPrefix(repl, "_gml_") {
			return &ast.Ident{NamePos: sel.Pos(), Name: repl + sel.Sel.Name}
		}
		return &ast.SelectorExpr{X: &ast.Ident{NamePos: pkg.Pos(), Name: repl}, Sel: sel.Sel}
	})
	ast.Inspect(f, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok || skip[id] {
			return true
		}
		switch {
		case isTop(id):
			id.Name = prefix + id.Name
		case id.Obj == nil && (id.Name == "min" || id.Name == "max" || id.Name == "clear"):
			id.Name = "_gml_" + id.Name
		}
		return true
	})
}

// replaceExprs replaces, under n, every expression for which repl returns non-nil.
func replaceExprs(n ast.Node, repl func(ast.Expr) ast.Expr) {
	exprType := reflect.TypeOf((*ast.Expr)(nil)).Elem()
	swap := func(f reflect.Value) {
		if e, ok := f.Interface().(ast.Expr); ok && e != nil {
			if r := repl(e); r != nil {
				f.Set(reflect.ValueOf(r))
			}
		}
	}
	ast.Inspect(n, func(m ast.Node) bool {
		if m == nil {
			return false
		}
		v := reflect.ValueOf(m).Elem()
		if v.Kind() != reflect.Struct {
			return true
		}
		for k := 0; k < v.NumField(); k++ {
			f := v.Field(k)
			if f.Type() == exprType && !f.IsNil() {
				swap(f)
			}
			if f.Kind() == reflect.Slice && f.Type().Elem() == exprType {
				for j := 0; j < f.Len(); j++ {
					swap(f.Index(j))
				}
			}
		}
		return true
	})
}

// replaceRuntimeParts drops, from a standard file, the functions runtimeParts replaces
// (those resting on the runtime or unsafe) and the unsafe import.
func replaceRuntimeParts(f *ast.File) {
	var decls []ast.Decl
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
			if _, replaced := runtimeParts[f.Name.Name+"."+fd.Name.Name]; replaced {
				continue
			}
		}
		decls = append(decls, d)
	}
	f.Decls = decls
	var imports []*ast.ImportSpec
	for _, imp := range f.Imports {
		if imp.Path.Value != `"unsafe"` {
			imports = append(imports, imp)
		}
	}
	f.Imports = imports
}

// runtimeParts are the standard functions that rest on the runtime or unsafe, or that
// yaegi cannot run (the generic pattern-defeating quicksort), written anew.
var runtimeParts = map[string]string{
	"maps.clone":      "func clone(m any) any { return " + cellPkg + ".CloneMap(m) }",
	"slices.overlaps": "func overlaps[E any](a, b []E) bool { return " + cellPkg + ".Overlaps(a, b) }",
	"slices.Sort": `func Sort[E cmp.Ordered](x []E) {
	if !` + cellPkg + `.SortFast(x) {
		sort.Slice(x, func(i, j int) bool { return cmp.Less[E](x[i], x[j]) })
	}
}`,
	"slices.SortFunc": `func SortFunc[E any](x []E, compare func(a, b E) int) {
	sort.Slice(x, func(i, j int) bool { return compare(x[i], x[j]) < 0 })
}`,
	"slices.SortStableFunc": `func SortStableFunc[E any](x []E, compare func(a, b E) int) {
	sort.SliceStable(x, func(i, j int) bool { return compare(x[i], x[j]) < 0 })
}`,
}

// kernelImports are the imports of the kernel's part of each package.
var kernelImports = map[string]string{
	"slices":      "import (\n\t\"cmp\"\n\t\"sort\"\n)\n",
	"sync/atomic": fmt.Sprintf("import compiled %q\n", stdAtomicPath),
}

// expandSeqParams writes the iter.Seq and iter.Seq2 parameters of generic functions (of
// the standard packages and of cells) as the function types they stand for: yaegi
// infers V from a Seq[int] argument given a func(yield func(V) bool) parameter, not
// given a Seq[V] one.
func expandSeqParams(f *ast.File) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Type.TypeParams == nil {
			continue
		}
		for _, p := range fd.Type.Params.List {
			var base ast.Expr
			var args []ast.Expr
			switch t := p.Type.(type) {
			case *ast.IndexExpr:
				base, args = t.X, []ast.Expr{t.Index}
			case *ast.IndexListExpr:
				base, args = t.X, t.Indices
			default:
				continue
			}
			switch name := typeString(base); {
			case name == "iter.Seq" || name == "iter.Seq2" || name == "_gml_iter_Seq" || name == "_gml_iter_Seq2":
			case (name == "Seq" || name == "Seq2") && f.Name.Name == "iter":
			default:
				continue
			}
			var fields []*ast.Field
			for _, a := range args {
				fields = append(fields, &ast.Field{Type: a})
			}
			yield := &ast.FuncType{Params: &ast.FieldList{List: fields}, Results: &ast.FieldList{List: []*ast.Field{{Type: ast.NewIdent("bool")}}}}
			p.Type = &ast.FuncType{Params: &ast.FieldList{List: []*ast.Field{{Names: []*ast.Ident{ast.NewIdent("yield")}, Type: yield}}}}
		}
	}
}

// atomicExports re-exports the compiled sync/atomic: its types as aliases, its
// functions (but those on unsafe.Pointer) as wrappers.
func atomicExports() string {
	var b strings.Builder
	syms := stdlib.Symbols["sync/atomic/atomic"]
	names := make([]string, 0, len(syms))
	for n := range syms {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := syms[n]
		t := v.Type()
		if t.Kind() == reflect.Pointer && v.IsNil() { // a type
			fmt.Fprintf(&b, "\ntype %s = compiled.%s\n", n, n)
			continue
		}
		if t.Kind() != reflect.Func || strings.Contains(t.String(), "unsafe") {
			continue
		}
		var params, args, results []string
		for k := 0; k < t.NumIn(); k++ {
			params = append(params, fmt.Sprintf("p%d %s", k, t.In(k)))
			args = append(args, fmt.Sprintf("p%d", k))
		}
		for k := 0; k < t.NumOut(); k++ {
			results = append(results, t.Out(k).String())
		}
		ret := ""
		if len(results) > 0 {
			ret = "return "
		}
		fmt.Fprintf(&b, "\nfunc %s(%s) (%s) { %scompiled.%s(%s) }\n", n, strings.Join(params, ", "), strings.Join(results, ", "), ret, n, strings.Join(args, ", "))
	}
	return b.String()
}

// stdSymbols returns the standard symbol tables cells use: yaegi's, without the tables
// of the packages compiled from source, and with the compiled sync/atomic also at
// stdAtomicPath for the source version.
func stdSymbols() map[string]map[string]reflect.Value {
	pkgs := stdPaths()
	out := make(map[string]map[string]reflect.Value, len(stdlib.Symbols))
	for k, v := range stdlib.Symbols {
		if !pkgs[path.Dir(k)] {
			out[k] = v
		}
	}
	out[stdAtomicPath+"/atomic"] = stdlib.Symbols["sync/atomic/atomic"]
	return out
}

// dropBuiltinGenerics removes the generic sources yaegi compiles itself when given the
// standard library (partial slices, maps and cmp packages, visible even without an
// import). It reaches yaegi's unexported maps by reflection (Interpreter.srcPkg,
// pkgNames, scopes and universe.sym, v0.16.1); TestGenericStdPackages fails if that
// stops working.
func dropBuiltinGenerics(yi *interp.Interpreter) {
	v := reflect.ValueOf(yi).Elem()
	maps := []reflect.Value{unexported(v, "srcPkg"), unexported(v, "pkgNames"), unexported(v, "scopes")}
	if u := unexported(v, "universe"); u.IsValid() && !u.IsNil() {
		maps = append(maps, unexported(u.Elem(), "sym"))
	}
	for _, p := range []string{"cmp", "maps", "slices"} {
		for _, m := range maps {
			if m.IsValid() && m.Kind() == reflect.Map {
				m.SetMapIndex(reflect.ValueOf(p), reflect.Value{})
			}
		}
	}
}

// importStd handles the imports of source packages in an import chunk: it compiles each
// package into the main package (once), records the import when record is set (a
// cell's own imports), and removes the spec. It reports whether any import is left for
// yaegi.
func (i *Interp) importStd(f *ast.File, record bool) (bool, error) {
	pkgs := stdPaths()
	var decls []ast.Decl
	var kept []*ast.ImportSpec
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			decls = append(decls, d)
			continue
		}
		var specs []ast.Spec
		for _, s := range gd.Specs {
			imp := s.(*ast.ImportSpec)
			name, p := importName(imp)
			if !pkgs[p] {
				specs = append(specs, s)
				kept = append(kept, imp)
				continue
			}
			if err := i.loadStd(p); err != nil {
				return false, fmt.Errorf("%s: %w", i.yi.FileSet().Position(imp.Pos()), err)
			}
			if record {
				i.mu.Lock()
				i.imports[name] = p
				i.mu.Unlock()
			}
		}
		if len(specs) > 0 {
			gd.Specs = specs
			decls = append(decls, gd)
		}
	}
	f.Decls, f.Imports = decls, kept
	return len(kept) > 0, nil
}

// loadStd compiles the source package at path, and those it imports, into the main
// package, once.
func (i *Interp) loadStd(p string) error {
	i.mu.Lock()
	done := i.stdLoaded[p]
	i.stdLoaded[p] = true
	i.mu.Unlock()
	if done {
		return nil
	}
	pkgs, err := stdSources()
	if err != nil {
		return err
	}
	pkg := pkgs[p]
	for _, dep := range pkg.deps {
		if err := i.loadStd(dep); err != nil {
			return err
		}
	}
	res := i.runCode(context.Background(), context.Background(), "std/"+p, 0, pkg.code)
	if res.Err != nil {
		i.mu.Lock()
		delete(i.stdLoaded, p)
		i.mu.Unlock()
		return fmt.Errorf("compiling the kernel's source of %s: %s", p, strings.Join(res.Err.Traceback, "\n"))
	}
	return nil
}

// renameStdRefs rewrites a cell's references to imported source packages, slices.Sort
// becoming _gml_slices_Sort (see above).
func (i *Interp) renameStdRefs(f *ast.File) {
	pkgs := stdPaths()
	i.mu.Lock()
	prefixes := map[string]string{}
	for name, p := range i.imports {
		if pkgs[p] {
			prefixes[name] = stdPrefix(p)
		}
	}
	i.mu.Unlock()
	if len(prefixes) == 0 {
		return
	}
	replaceExprs(f, func(e ast.Expr) ast.Expr {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return nil
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && prefixes[pkg.Name] != "" {
			return &ast.Ident{NamePos: sel.Pos(), Name: prefixes[pkg.Name] + sel.Sel.Name}
		}
		return nil
	})
}

// stdMembers returns the exported names of the source package at path, for completion;
// ok is false when it is not one.
func stdMembers(p string) (names []string, ok bool) {
	if !stdPaths()[p] {
		return nil, false
	}
	pkgs, _ := stdSources()
	pkg := pkgs[p]
	if pkg == nil {
		return nil, true
	}
	for n := range pkg.exports {
		names = append(names, n)
	}
	return names, true
}
