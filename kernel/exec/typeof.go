package exec

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/traefik/yaegi/interp"
)

// yaegi v0.16.1 cannot declare a global variable from a generic call: `x := F(a)` or
// `var x = F(a)` at the top level of a cell, F generic (a cell's Map, the prelude's min,
// slices.Sorted), fails in its global type analysis, while the same statement inside a
// function compiles. typeDefines works around it: it compiles a probe (never run) that
// holds the cell's statements up to each such declaration inside a function literal,
// reads the types yaegi inferred for the declared names from the compiled program, and
// rewrites the declaration as `var x T` followed by `x = F(a)`.
//
// Reading the types reaches yaegi's unexported node and type structures by reflection
// (as scope.go does for the scope map): interp.Program.root, node.{child,pos,ident,typ}
// and itype.{cat,name,path,rtype,val,key,arg,ret,length,field}. TestGenericGlobals
// checks that this still works with the pinned yaegi.

// typeDefines rewrites the top-level declarations of body that need it (see above):
// those whose value calls a known generic function, and, when all is true, every
// declaration whose value holds a call. It returns whether it changed anything.
func (i *Interp) typeDefines(body *ast.BlockStmt, all bool) bool {
	var targets []int
	for k, s := range body.List {
		if vals, _ := defineParts(s); vals != nil && i.needsType(vals, all) {
			targets = append(targets, k)
		}
	}
	if len(targets) == 0 {
		return false
	}
	// One probe holds everything up to the last target; each target's names are found
	// by position in the compiled probe.
	root, ok := i.probe(body.List[:targets[len(targets)-1]+1])
	if !ok {
		return false
	}
	changed := false
	var out []ast.Stmt
	next := 0
	for k, s := range body.List {
		if next >= len(targets) || targets[next] != k {
			out = append(out, s)
			continue
		}
		next++
		vals, names := defineParts(s)
		var decls []ast.Stmt
		ok := true
		for _, n := range names {
			if n.Name == "_" {
				continue
			}
			t := findType(root, n.Pos(), n.Name)
			if !t.IsValid() {
				ok = false
				break
			}
			src, err := i.typeSource(t, 0)
			if err != nil {
				ok = false
				break
			}
			if old, err := i.typeSource(i.globalType(n.Name), 0); err == nil && old == src {
				continue // the same variable takes the new value
			}
			texpr, err := parseTypeAt(src, n.Pos())
			if err != nil {
				ok = false
				break
			}
			decls = append(decls, &ast.DeclStmt{Decl: &ast.GenDecl{TokPos: n.Pos(), Tok: token.VAR, Specs: []ast.Spec{
				&ast.ValueSpec{Names: []*ast.Ident{{NamePos: n.Pos(), Name: n.Name}}, Type: texpr},
			}}})
		}
		if !ok {
			out = append(out, s)
			continue
		}
		lhs := make([]ast.Expr, len(names))
		for j, n := range names {
			lhs[j] = &ast.Ident{NamePos: n.Pos(), Name: n.Name}
		}
		out = append(out, decls...)
		out = append(out, &ast.AssignStmt{Lhs: lhs, TokPos: s.Pos(), Tok: token.ASSIGN, Rhs: vals})
		changed = true
	}
	body.List = out
	return changed
}

// probe compiles `_ = func() { list }` without running it and returns the root of the
// compiled program's yaegi nodes (a *node, as a reflect.Value). Inside a function
// literal the statements compile where the same statements at the top level may not,
// and the names they declare are locals that leave no trace.
func (i *Interp) probe(list []ast.Stmt) (reflect.Value, bool) {
	if len(list) == 0 {
		return reflect.Value{}, false
	}
	p := list[0].Pos()
	probe := &ast.BlockStmt{Lbrace: p, Rbrace: p, List: []ast.Stmt{&ast.AssignStmt{
		Lhs: []ast.Expr{&ast.Ident{NamePos: p, Name: "_"}}, TokPos: p, Tok: token.ASSIGN,
		Rhs: []ast.Expr{&ast.FuncLit{
			Type: &ast.FuncType{Func: p, Params: &ast.FieldList{Opening: p, Closing: p}},
			Body: &ast.BlockStmt{Lbrace: p, List: append([]ast.Stmt{}, list...), Rbrace: p},
		}},
	}}}
	prog, err := i.probeCompile(probe)
	if err != nil {
		return reflect.Value{}, false
	}
	root := unexported(reflect.ValueOf(prog).Elem(), "root")
	return root, root.IsValid()
}

// lastResultIsError reports whether the call at the end of list (an expression
// statement) has a last result of type error, by a probe.
func (i *Interp) lastResultIsError(list []ast.Stmt, call *ast.CallExpr) bool {
	root, ok := i.probe(list)
	if !ok {
		return false
	}
	n := findNode(root, call.Pos(), func(e reflect.Value) bool {
		return unexported(e, "kind").Uint() == kindCallExpr && unexported(e, "child").Len() == len(call.Args)+1
	})
	if !n.IsValid() {
		return false
	}
	fun := unexported(n.Elem(), "child").Index(0)
	t := unexported(fun.Elem(), "typ")
	if !t.IsValid() || t.IsNil() {
		return false
	}
	e := t.Elem()
	switch unexported(e, "cat").Uint() {
	case catValue:
		rt, _ := unexported(e, "rtype").Interface().(reflect.Type)
		return rt != nil && rt.Kind() == reflect.Func && rt.NumOut() > 0 && rt.Out(rt.NumOut()-1) == errorType
	case catFunc:
		rets := unexported(e, "ret")
		if rets.Len() == 0 {
			return false
		}
		r := rets.Index(rets.Len() - 1).Elem()
		if unexported(r, "cat").Uint() == catError {
			return true
		}
		rt, _ := unexported(r, "rtype").Interface().(reflect.Type)
		return unexported(r, "cat").Uint() == catValue && rt == errorType
	}
	return false
}

// kindCallExpr is yaegi's node kind of a call (interp.callExpr, v0.16.1).
const kindCallExpr = 10

// globalType returns the yaegi type (an *itype) of the global variable name, or an
// invalid Value.
func (i *Interp) globalType(name string) reflect.Value {
	sym := mainScope(i.yi)
	if !sym.IsValid() {
		return reflect.Value{}
	}
	s := sym.MapIndex(reflect.ValueOf(name))
	if !s.IsValid() || s.IsNil() || !unexported(s.Elem(), "global").Bool() {
		return reflect.Value{}
	}
	return unexported(s.Elem(), "typ")
}

// genericVar reports whether src is a `var` declaration with a value that calls a
// known generic function. Such a declaration is run as a statement, where typeDefines
// can give it its type: as a declaration yaegi would initialise it to the zero value.
func (i *Interp) genericVar(src string) bool {
	if !strings.HasPrefix(src, "var") {
		return false
	}
	f, err := parser.ParseFile(token.NewFileSet(), "", "package p;"+src, parser.SkipObjectResolution)
	if err != nil || len(f.Decls) != 1 {
		return false
	}
	g, ok := f.Decls[0].(*ast.GenDecl)
	if !ok {
		return false
	}
	for _, sp := range g.Specs {
		if vs, ok := sp.(*ast.ValueSpec); ok && i.needsType(vs.Values, false) {
			return true
		}
	}
	return false
}

// defineParts returns the values and names of a top-level `a, b := v...` or
// `var a, b = v...` (without a type); nil otherwise.
func defineParts(s ast.Stmt) (vals []ast.Expr, names []*ast.Ident) {
	switch x := s.(type) {
	case *ast.AssignStmt:
		if x.Tok != token.DEFINE {
			return nil, nil
		}
		for _, e := range x.Lhs {
			id, ok := e.(*ast.Ident)
			if !ok {
				return nil, nil
			}
			names = append(names, id)
		}
		return x.Rhs, names
	case *ast.DeclStmt:
		g, ok := x.Decl.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR || len(g.Specs) != 1 {
			return nil, nil
		}
		vs := g.Specs[0].(*ast.ValueSpec)
		if vs.Type != nil || len(vs.Values) == 0 {
			return nil, nil
		}
		return vs.Values, vs.Names
	}
	return nil, nil
}

// needsType reports whether vals call a known generic function (outside function
// literals), or, when all is true, call anything.
func (i *Interp) needsType(vals []ast.Expr, all bool) bool {
	found := false
	for _, v := range vals {
		ast.Inspect(v, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.CallExpr:
				fun := x.Fun
				switch f := fun.(type) {
				case *ast.IndexExpr:
					fun = f.X
				case *ast.IndexListExpr:
					fun = f.X
				}
				if all || i.isGeneric(fun) {
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// probeCompile compiles n without running it and removes from the main scope whatever
// the compile added.
func (i *Interp) probeCompile(n ast.Node) (*interp.Program, error) {
	sym := mainScope(i.yi)
	before := map[string]reflect.Value{}
	if sym.IsValid() {
		for _, k := range sym.MapKeys() {
			before[k.String()] = sym.MapIndex(k)
		}
	}
	prog, err := i.safeCompile(n)
	if sym.IsValid() {
		for _, k := range sym.MapKeys() {
			if old, ok := before[k.String()]; !ok {
				sym.SetMapIndex(k, reflect.Value{})
			} else if old != sym.MapIndex(k) {
				sym.SetMapIndex(k, old)
			}
		}
	}
	return prog, err
}

// unexported returns the field name of the addressable struct v, readable.
func unexported(v reflect.Value, name string) reflect.Value {
	f := v.FieldByName(name)
	if !f.IsValid() || !f.CanAddr() {
		return reflect.Value{}
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// findType returns the itype (a pointer) of the node at pos named name under the yaegi
// node n (a pointer), or an invalid Value.
func findType(n reflect.Value, pos token.Pos, name string) reflect.Value {
	m := findNode(n, pos, func(e reflect.Value) bool {
		id, t := unexported(e, "ident"), unexported(e, "typ")
		return id.IsValid() && id.String() == name && t.IsValid() && !t.IsNil()
	})
	if !m.IsValid() {
		return m
	}
	return unexported(m.Elem(), "typ")
}

// findNode returns the first node at pos under the yaegi node n (a pointer) for which
// match holds, or an invalid Value.
func findNode(n reflect.Value, pos token.Pos, match func(reflect.Value) bool) reflect.Value {
	if !n.IsValid() || n.IsNil() {
		return reflect.Value{}
	}
	e := n.Elem()
	if p := unexported(e, "pos"); p.IsValid() && token.Pos(p.Int()) == pos && match(e) {
		return n
	}
	children := unexported(e, "child")
	for k := 0; children.IsValid() && k < children.Len(); k++ {
		if m := findNode(children.Index(k), pos, match); m.IsValid() {
			return m
		}
	}
	return reflect.Value{}
}

// yaegi's type categories (interp.tcat, v0.16.1), those typeSource renders.
const (
	catArray     = 1
	catChan      = 6
	catChanSend  = 7
	catChanRecv  = 8
	catError     = 13
	catFunc      = 16
	catGeneric   = 17
	catInterface = 18
	catLinked    = 24
	catMap       = 25
	catPtr       = 26
	catSlice     = 27
	catStruct    = 30
	catValue     = 37
	catVariadic  = 38
)

// basicCats are the categories of the predeclared boolean, numeric and string types:
// bool, complex64, complex128, float32, float64, int..int64, string, uint..uintptr.
var basicCats = map[uint64]bool{4: true, 10: true, 11: true, 14: true, 15: true, 19: true, 20: true,
	21: true, 22: true, 23: true, 29: true, 31: true, 32: true, 33: true, 34: true, 35: true, 36: true}

// typeSource returns Go source for the yaegi type t (an *itype), with the package names
// cells use.
func (i *Interp) typeSource(t reflect.Value, depth int) (string, error) {
	if !t.IsValid() || t.IsNil() || depth > 20 {
		return "", fmt.Errorf("no type")
	}
	e := t.Elem()
	cat := unexported(e, "cat").Uint()
	name, path := unexported(e, "name").String(), unexported(e, "path").String()
	sub := func(field string) (string, error) { return i.typeSource(unexported(e, field), depth+1) }
	if cat == catValue {
		if rt, ok := unexported(e, "rtype").Interface().(reflect.Type); ok && rt != nil {
			return i.reflectSource(rt)
		}
		return "", fmt.Errorf("value type without reflect type")
	}
	if name != "" && path != "" && cat != catGeneric {
		return i.qualify(path, name)
	}
	switch {
	case cat == catError:
		return "error", nil
	case basicCats[cat]:
		if name == "" {
			return "", fmt.Errorf("basic type without name")
		}
		return name, nil
	case cat == catPtr:
		s, err := sub("val")
		return "*" + s, err
	case cat == catSlice:
		s, err := sub("val")
		return "[]" + s, err
	case cat == catVariadic:
		s, err := sub("val")
		return "..." + s, err
	case cat == catArray:
		s, err := sub("val")
		return "[" + strconv.Itoa(int(unexported(e, "length").Int())) + "]" + s, err
	case cat == catMap:
		k, err := sub("key")
		if err != nil {
			return "", err
		}
		v, err := sub("val")
		return "map[" + k + "]" + v, err
	case cat == catChan || cat == catChanSend || cat == catChanRecv:
		s, err := sub("val")
		return map[uint64]string{catChan: "chan ", catChanSend: "chan<- ", catChanRecv: "<-chan "}[cat] + s, err
	case cat == catFunc:
		list := func(field string) ([]string, error) {
			l := unexported(e, field)
			var out []string
			for k := 0; k < l.Len(); k++ {
				s, err := i.typeSource(l.Index(k), depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, s)
			}
			return out, nil
		}
		args, err := list("arg")
		if err != nil {
			return "", err
		}
		rets, err := list("ret")
		if err != nil {
			return "", err
		}
		s := "func(" + strings.Join(args, ", ") + ")"
		switch len(rets) {
		case 0:
		case 1:
			s += " " + rets[0]
		default:
			s += " (" + strings.Join(rets, ", ") + ")"
		}
		return s, nil
	case cat == catInterface && unexported(e, "field").Len() == 0:
		return "any", nil
	case cat == catStruct:
		fields := unexported(e, "field")
		var parts []string
		for k := 0; k < fields.Len(); k++ {
			f := fields.Index(k)
			s, err := i.typeSource(unexported(f, "typ"), depth+1)
			if err != nil {
				return "", err
			}
			if unexported(f, "embed").Bool() {
				parts = append(parts, s)
			} else {
				parts = append(parts, unexported(f, "name").String()+" "+s)
			}
		}
		return "struct{" + strings.Join(parts, "; ") + "}", nil
	case cat == catLinked && name != "":
		return name, nil
	}
	return "", fmt.Errorf("type category %d", cat)
}

// reflectSource returns Go source for a compiled type, with the package names cells use.
func (i *Interp) reflectSource(rt reflect.Type) (string, error) {
	if rt.Name() != "" {
		if rt.PkgPath() == "" {
			return rt.Name(), nil
		}
		return i.qualify(rt.PkgPath(), rt.Name())
	}
	switch rt.Kind() {
	case reflect.Pointer:
		s, err := i.reflectSource(rt.Elem())
		return "*" + s, err
	case reflect.Slice:
		s, err := i.reflectSource(rt.Elem())
		return "[]" + s, err
	case reflect.Array:
		s, err := i.reflectSource(rt.Elem())
		return "[" + strconv.Itoa(rt.Len()) + "]" + s, err
	case reflect.Map:
		k, err := i.reflectSource(rt.Key())
		if err != nil {
			return "", err
		}
		v, err := i.reflectSource(rt.Elem())
		return "map[" + k + "]" + v, err
	case reflect.Interface:
		if rt.NumMethod() == 0 {
			return "any", nil
		}
	}
	// Function, channel and struct types of compiled code print as Go source once their
	// named parts are qualified; reflect's String uses package names, which cells use
	// unless they renamed the import.
	s := rt.String()
	if strings.ContainsAny(s, "[") && rt.Kind() != reflect.Func {
		return "", fmt.Errorf("cannot name %s", s)
	}
	return s, nil
}

// qualify returns the name of type name in the package at path as cells write it.
func (i *Interp) qualify(path, name string) (string, error) {
	if path == "main" || path == "_" {
		return name, nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	for alias, p := range i.imports {
		if p == path {
			return alias + "." + name, nil
		}
	}
	return "", fmt.Errorf("package %s is not imported", path)
}

// parseTypeAt parses a type expression and positions it at pos.
func parseTypeAt(src string, pos token.Pos) (ast.Expr, error) {
	f, err := parser.ParseExpr(src)
	if err != nil {
		return nil, err
	}
	setPos(f, pos)
	return f, nil
}
