package exec

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"sort"
	"strings"
)

// Redefinition (README "Go in cells"). yaegi binds a call to the function declared when
// the caller was compiled, and keeps the first declaration of a type: after a cell
// redefines g, an h declared earlier still calls the old g, and a changed `type P
// struct{...}` is silently ignored. The kernel therefore keeps the source of every
// function, method and type declaration cells make (def), and:
//   - before compiling a type declaration whose text changed, removes the old type from
//     the interpreter's scope, so the declaration makes a new type (values of the old
//     one keep it, as with a fresh declaration in Go); an unchanged one is skipped, so
//     re-running a cell keeps its types and the values made with them;
//   - after a chunk redefines functions or types, compiles again, in their original
//     order and at their original cell positions, the declarations of earlier cells
//     that mention them, directly or through each other (h calling g, methods and
//     functions using P, types holding a P). One that no longer compiles is reported on
//     stderr with what to do; the cell itself succeeds.

// def is the source of a declaration a cell made.
type def struct {
	src       string // the declaration's text
	name      string // where it came from, "cell[3]"
	id        int
	line, col int
	order     int             // declaration order, for recompiling
	names     []string        // the names it declares ("g", "P", "P.Get")
	mentions  map[string]bool // identifiers it uses
	isType    bool
	typeNames []string // the type names it declares
}

// normalize drops the white space of a declaration's text, so that re-running a cell
// with other indentation counts as unchanged.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

// prepareRedefinitions readies a declaration chunk for compiling: type declarations
// unchanged since the last run are dropped from it, and changed ones have the old type
// removed from the scope. It returns the function that puts the removed types back,
// for when the compile fails.
func (i *Interp) prepareRedefinitions(ch chunk, code string, f *ast.File) (restore func()) {
	i.mu.Lock()
	defs := i.defs
	i.mu.Unlock()
	var changed []string
	var decls []ast.Decl
	for k, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE || k >= len(ch.items) {
			decls = append(decls, d)
			continue
		}
		text := normalize(code[ch.items[k].start:ch.items[k].end])
		var specs []ast.Spec
		for _, s := range g.Specs {
			name := s.(*ast.TypeSpec).Name.Name
			if old, known := defs[name]; known && old.isType {
				if normalize(old.src) == text {
					continue // unchanged: keep the type and the values made with it
				}
				changed = append(changed, name)
			}
			specs = append(specs, s)
		}
		if len(specs) == 0 {
			continue
		}
		g.Specs = specs
		decls = append(decls, g)
	}
	f.Decls = decls
	return i.removeTypes(changed)
}

// removeTypes removes the named types from the interpreter's scope, so that declaring
// them again makes new types, and returns the function that puts back those not
// declared again since.
func (i *Interp) removeTypes(names []string) (restore func()) {
	sym := mainScope(i.yi)
	removed := map[string]reflect.Value{}
	for _, name := range names {
		if !sym.IsValid() {
			break
		}
		if v := sym.MapIndex(reflect.ValueOf(name)); v.IsValid() {
			removed[name] = v
			sym.SetMapIndex(reflect.ValueOf(name), reflect.Value{})
		}
	}
	return func() {
		for name, v := range removed {
			if !sym.MapIndex(reflect.ValueOf(name)).IsValid() {
				sym.SetMapIndex(reflect.ValueOf(name), v)
			}
		}
	}
}

// recordDefs keeps the sources of the declarations of a compiled chunk and returns the
// names it redefined (declared before with another text).
func (i *Interp) recordDefs(ch chunk, code, name string, id int, f *ast.File) []string {
	i.mu.Lock()
	defer i.mu.Unlock()
	var redefined []string
	for _, it := range ch.items {
		src := code[it.start:it.end]
		file, err := parseDecl(src)
		if err != nil {
			continue
		}
		d := &def{src: src, name: name, id: id, line: it.line, col: it.col, mentions: map[string]bool{}}
		for _, decl := range file.Decls {
			switch x := decl.(type) {
			case *ast.FuncDecl:
				if x.Recv != nil {
					d.names = append(d.names, recvType(x.Recv)+"."+x.Name.Name)
				} else {
					d.names = append(d.names, x.Name.Name)
				}
			case *ast.GenDecl:
				if x.Tok != token.TYPE {
					continue // variables and constants are values: never re-run
				}
				for _, s := range x.Specs {
					n := s.(*ast.TypeSpec).Name.Name
					d.names = append(d.names, n)
					d.typeNames = append(d.typeNames, n)
					d.isType = true
				}
			}
		}
		if len(d.names) == 0 {
			continue
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				d.mentions[id.Name] = true
			}
			return true
		})
		for _, n := range d.names {
			delete(d.mentions, n) // a recursive function does not depend on itself
		}
		i.defOrder++
		d.order = i.defOrder
		for _, n := range d.names {
			if old, ok := i.defs[n]; ok && normalize(old.src) != normalize(src) {
				redefined = append(redefined, n)
			}
			i.defs[n] = d
		}
	}
	return redefined
}

// parseDecl parses the text of one top-level declaration.
func parseDecl(src string) (*ast.File, error) {
	return parser.ParseFile(token.NewFileSet(), "", "package main\n"+src, parser.SkipObjectResolution)
}

// updateDependents compiles again the declarations of earlier cells that mention the
// redefined names, directly or through each other (see the comment at the top), and
// reports those that no longer compile on stderr.
func (i *Interp) updateDependents(redefined []string) {
	if len(redefined) == 0 {
		return
	}
	i.mu.Lock()
	changed := map[string]bool{}
	for _, n := range redefined {
		changed[n] = true
		if k := strings.IndexByte(n, '.'); k > 0 {
			changed[n[k+1:]] = true // a method's name, as calls mention it
		}
	}
	fresh := map[*def]bool{}
	for _, n := range redefined {
		fresh[i.defs[n]] = true
	}
	todo := map[*def]bool{}
	for grew := true; grew; {
		grew = false
		for _, d := range i.defs {
			if todo[d] || fresh[d] {
				continue
			}
			for m := range d.mentions {
				if changed[m] {
					todo[d] = true
					grew = true
					for _, n := range d.names {
						changed[n] = true
					}
					break
				}
			}
		}
	}
	list := make([]*def, 0, len(todo))
	for d := range todo {
		list = append(list, d)
	}
	i.mu.Unlock()
	sort.Slice(list, func(a, b int) bool { return list[a].order < list[b].order })
	var failed []string
	for _, d := range list {
		if err := i.recompileDef(d); err != nil {
			failed = append(failed, fmt.Sprintf("  %s (%s:%d): %s", strings.Join(d.names, ", "), d.name, d.line, err))
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "note: after the redefinition of %s, these declarations of earlier cells do not compile and keep their old meaning; run their cells again after fixing them:\n%s\n",
			strings.Join(redefined, ", "), strings.Join(failed, "\n"))
	}
}

// recompileDef compiles a kept declaration again, at its original position.
func (i *Interp) recompileDef(d *def) error {
	ch := chunk{kind: itemDecl, items: []item{{kind: itemDecl, start: 0, end: len(d.src), line: d.line, col: d.col}}}
	file, _, err := i.parseChunk(ch, d.src, d.name, d.id, nil)
	if err != nil {
		return err
	}
	restore := i.removeTypes(d.typeNames) // new types holding the redefined ones
	simplifyCoreTypes(file)
	prog, err := i.safeCompile(file)
	if err != nil {
		restore()
		return fmt.Errorf("%s", cleanPos(err.Error()))
	}
	i.record(file)
	_, err = i.yi.ExecuteWithContext(context.Background(), prog)
	return err
}
