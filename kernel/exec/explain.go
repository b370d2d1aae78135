package exec

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/traefik/yaegi/interp"
)

// explain rewrites compile errors that yaegi words obscurely, or that come from its
// known limits, into messages that say what went wrong in the cell and what to write
// instead. err's first line starts with the cell position when yaegi knows it. Errors it
// does not recognise are returned unchanged.
func explain(err error, cell int, code string) error {
	msg := cleanPos(err.Error())
	line, col, ok := cellPos(msg, cell)
	src := ""
	if ok {
		if lines := strings.Split(code, "\n"); line <= len(lines) && col-1 <= len(lines[line-1]) {
			src = lines[line-1][col-1:]
		}
	}
	prefix := ""
	if ok {
		prefix = fmt.Sprintf("cell[%d]:%d:%d: ", cell, line, col)
	}
	if sub := unknownImportRE.FindStringSubmatch(msg); sub != nil {
		return fmt.Errorf("%scannot import %q: fetch its module first with %%go get MODULE@VERSION (the standard library, gonum's mat, stat and floats, and gml's packages need no fetching)", sub[1], sub[2])
	}
	switch {
	case ok && optionMismatch.MatchString(msg):
		// nn's options are typed by the call that takes them (nn.LayerOption,
		// nn.FitOption, ...): the option was passed to another call.
		m := optionMismatch.FindStringSubmatch(msg)
		name := src[:strings.IndexFunc(src+"(", func(r rune) bool { return r == '(' || r == ',' || r == ')' })]
		return fmt.Errorf("%s%s is a %s, but this argument must be a %s: the option belongs to another call "+
			"(nn.LayerOption goes to layer constructors, nn.CompileOption to Compile, nn.FitOption to Fit, "+
			"nn.EvaluateOption to Evaluate, nn.PredictOption to Predict, nn.CallbackOption to callbacks)", prefix, name, m[1], m[2])
	case inferenceFailed(err) && ok:
		name := calleeAt(code, line, col, strings.Contains(msg, "cannot use"))
		return fmt.Errorf("%s%s\n(the interpreter infers type arguments less well than Go, above all from function literals, untyped constants and constraints like ~[]E: give them, as in %s[int, string](...))", prefix, strings.TrimPrefix(msg, prefix), name)
	case strings.TrimSpace(msg) == "nil type":
		return errors.New("the interpreter could not compile a range over an integer or a function here, which the kernel rewrites into a plain loop when it can tell the range's type: give the range expression a declared type (var n int = ..., or a parameter typed iter.Seq[T]), or write the loop by hand: for i := 0; i < n; i++")
	case (strings.HasPrefix(src, "Must(") || strings.HasPrefix(src, "Must2(")) &&
		(strings.Contains(msg, "CFG post-order panic") || strings.Contains(msg, "nil reflect type")):
		return errors.New(prefix + "Must(f()) works as the first call of a statement (x := Must(f()), return Must(f()), ...), not after another call, on the right of && or ||, or in a loop condition: write v := Must(f()) on a line of its own and use v")
	}
	return err
}

// optionMismatch matches yaegi's error for an nn option given to a call of another kind.
var optionMismatch = regexp.MustCompile(`cannot use type (nn\.\w+) as type (nn\.\w+Option)$`)

// cellPos returns the line and column at the start of msg when it is a position in the
// cell.
func cellPos(msg string, cell int) (line, col int, ok bool) {
	sub := posRE.FindStringSubmatch(msg)
	if sub == nil {
		return 0, 0, false
	}
	if c, _ := strconv.Atoi(sub[1]); c != cell {
		return 0, 0, false
	}
	line, _ = strconv.Atoi(sub[2])
	col, _ = strconv.Atoi(sub[3])
	return line, col, line > 0 && col > 0
}

// setMismatchRE matches the panic yaegi's interface wrappers raise when a cell type's
// method does not have the signature of the interface it is used as.
var setMismatchRE = regexp.MustCompile(`^reflect\.Set: value of type (func\(.*) is not assignable to type (func\(.*)$`)

// explainPanic rewrites panics whose text only makes sense to yaegi's authors; others
// are returned unchanged. A method with the wrong signature becomes: the method, the
// interface, the signature expected and the one given.
func (i *Interp) explainPanic(err error) error {
	var p interp.Panic
	if !errors.As(err, &p) {
		return err
	}
	m := setMismatchRE.FindStringSubmatch(fmt.Sprint(p.Value))
	if m == nil {
		return err
	}
	given, want := m[1], m[2]
	iface, method := i.wrapperMethod(want)
	if method == "" {
		return err
	}
	owner := "a type of the cells"
	i.mu.Lock()
	for name, d := range i.defs {
		t, m, ok := strings.Cut(name, ".")
		if !ok || m != method {
			continue
		}
		if f, err := parseDecl(d.src); err == nil && len(f.Decls) == 1 {
			if fd, ok := f.Decls[0].(*ast.FuncDecl); ok && signature(fd.Type) == given {
				owner = t
			}
		}
	}
	i.mu.Unlock()
	p.Value = fmt.Sprintf("method %s of %s does not have the signature %s needs: want %s%s, have %s%s",
		method, owner, iface, method, strings.TrimPrefix(want, "func"), method, strings.TrimPrefix(given, "func"))
	return p
}

// wrapperMethod finds, in the symbol tables' interface wrappers, the interface and
// method whose signature prints as sig ("func(*nn.Forward, []*tensor.Node) ...").
func (i *Interp) wrapperMethod(sig string) (iface, method string) {
	for _, path := range i.paths {
		for _, syms := range i.yi.Symbols(path) {
			for name, v := range syms {
				if !strings.HasPrefix(name, "_") || v.Kind() != reflect.Pointer || v.Type().Elem().Kind() != reflect.Struct {
					continue
				}
				t := v.Type().Elem()
				for k := 0; k < t.NumField(); k++ {
					f := t.Field(k)
					if strings.HasPrefix(f.Name, "W") && f.Type.String() == sig {
						return packageName(path) + "." + name[1:], f.Name[1:]
					}
				}
			}
		}
	}
	return "", ""
}

// signature prints a function type the way reflect does: func(A, B) R.
func signature(ft *ast.FuncType) string {
	list := func(l *ast.FieldList) []string {
		var out []string
		for _, t := range fieldTypes(l) {
			out = append(out, typeString(t))
		}
		return out
	}
	s := "func(" + strings.Join(list(ft.Params), ", ") + ")"
	switch res := list(ft.Results); len(res) {
	case 0:
	case 1:
		s += " " + res[0]
	default:
		s += " (" + strings.Join(res, ", ") + ")"
	}
	return s
}

// locate gives a compile error that came without a position (yaegi's compiler failing
// on its own, "runtime error: invalid memory address or nil pointer dereference") the
// place it belongs to: the first statement that does not compile alone, and in it the
// first identifier that is undefined when there is one, since that is the usual cause.
func (i *Interp) locate(ch chunk, code, name string, id int, err error) error {
	if posRE.MatchString(cleanPos(err.Error())) || ch.kind == itemImport {
		return err
	}
	file, body, perr := i.parseChunk(ch, code, name, id, nil)
	if perr != nil || file == nil {
		return err
	}
	// Each function body of a declaration chunk is probed as a function literal.
	type scope struct {
		wrap  func([]ast.Stmt) []ast.Stmt
		stmts []ast.Stmt
	}
	var scopes []scope
	if body != nil {
		scopes = append(scopes, scope{func(l []ast.Stmt) []ast.Stmt { return l }, body.List})
	}
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || fd.Type.TypeParams != nil {
			continue
		}
		ft := *fd.Type
		if fd.Recv != nil {
			ft.Params = &ast.FieldList{List: append(append([]*ast.Field{}, fd.Recv.List...), fd.Type.Params.List...)}
		}
		scopes = append(scopes, scope{func(l []ast.Stmt) []ast.Stmt {
			p := fd.Pos()
			return []ast.Stmt{&ast.AssignStmt{Lhs: []ast.Expr{ast.NewIdent("_")}, TokPos: p, Tok: token.ASSIGN,
				Rhs: []ast.Expr{&ast.FuncLit{Type: &ft, Body: &ast.BlockStmt{Lbrace: p, List: l, Rbrace: p}}}}}
		}, fd.Body.List})
	}
	fset := i.yi.FileSet()
	for _, sc := range scopes {
		for k, s := range sc.stmts {
			if _, ok := i.probe(sc.wrap(sc.stmts[:k+1])); ok {
				continue
			}
			var found error
			var visit func(n ast.Node) bool
			visit = func(n ast.Node) bool {
				if found != nil {
					return false
				}
				switch x := n.(type) {
				case *ast.AssignStmt: // the names a := declares are not uses
					if x.Tok == token.DEFINE {
						for _, r := range x.Rhs {
							ast.Inspect(r, visit)
						}
						return false
					}
				case *ast.ValueSpec:
					for _, v := range x.Values {
						ast.Inspect(v, visit)
					}
					return false
				case *ast.KeyValueExpr: // a field name
					ast.Inspect(x.Value, visit)
					return false
				case *ast.SelectorExpr:
					ast.Inspect(x.X, func(m ast.Node) bool { return found == nil })
					if id, ok := x.X.(*ast.Ident); ok {
						found = i.undefined(sc.wrap, sc.stmts[:k], id)
					}
					return found == nil
				case *ast.Ident:
					found = i.undefined(sc.wrap, sc.stmts[:k], x)
				case *ast.FuncLit:
					return false
				}
				return true
			}
			ast.Inspect(s, visit)
			if found != nil {
				return found
			}
			return fmt.Errorf("%s: %s (the interpreter failed compiling this statement)", fset.Position(s.Pos()), err)
		}
	}
	return err
}

// undefined returns the "undefined: x" error of identifier x after the statements
// before, or nil.
func (i *Interp) undefined(wrap func([]ast.Stmt) []ast.Stmt, before []ast.Stmt, x *ast.Ident) error {
	if x.Name == "_" {
		return nil
	}
	probe := append(append([]ast.Stmt{}, before...), &ast.AssignStmt{
		Lhs: []ast.Expr{&ast.Ident{NamePos: x.Pos(), Name: "_"}}, TokPos: x.Pos(), Tok: token.ASSIGN,
		Rhs: []ast.Expr{&ast.Ident{NamePos: x.Pos(), Name: x.Name}},
	})
	if _, ok := i.probe(wrap(probe)); ok {
		return nil
	}
	err := fmt.Errorf("%s: undefined: %s", i.yi.FileSet().Position(x.Pos()), x.Name)
	if _, perr := i.probeCompile(&ast.BlockStmt{List: []ast.Stmt{&ast.ExprStmt{X: &ast.FuncLit{
		Type: &ast.FuncType{Params: &ast.FieldList{}}, Body: &ast.BlockStmt{List: wrap(probe)}}}}}); perr != nil && strings.Contains(perr.Error(), "undefined: "+x.Name) {
		return err
	}
	return nil
}

// calleeAt returns the name of the function called at, or around, a cell position: the
// identifier starting there when a call follows it (unless arg, the position being an
// argument's), else that of the innermost call whose arguments contain the position;
// "F" when there is none.
func calleeAt(code string, line, col int, arg bool) string {
	lines := strings.Split(code, "\n")
	if line > len(lines) || col-1 > len(lines[line-1]) {
		return "F"
	}
	l := lines[line-1]
	isName := func(r byte) bool {
		return r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	end := col - 1
	for end < len(l) && isName(l[end]) {
		end++
	}
	if !arg && end > col-1 && end < len(l) && l[end] == '(' && !strings.HasPrefix(l[col-1:], "func") {
		return l[col-1 : end]
	}
	depth := 0
	for k := col - 2; k >= 0; k-- {
		switch l[k] {
		case ')':
			depth++
		case '(':
			if depth > 0 {
				depth--
				continue
			}
			start := k
			for start > 0 && isName(l[start-1]) {
				start--
			}
			if start < k {
				return l[start:k]
			}
		}
	}
	return "F"
}
