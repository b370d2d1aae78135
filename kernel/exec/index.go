package exec

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// Index and slice-bounds errors. Go says "index out of range [5] with length 3";
// yaegi indexes through reflection, whose panic carries no values, and by the time the
// panic is reported the frame that held the operands is gone. So the values are found
// again where that is safe: for an index or slice expression at the top level of the
// failed chunk (outside any function) whose operands are made of globals, constants,
// literals, arithmetic, fields, indexing and len/cap, the operands are evaluated once
// more, and the one expression that is out of range gives the message. Inside a
// function the operands were locals: there the message stays Go's text without values,
// and the traceback shows the line of the failing expression with a caret.

// indexDetails completes e, the error of a chunk (src, its rewritten AST), and returns
// the expression that failed when it was found.
func (i *Interp) indexDetails(e *Error, src ast.Node) ast.Node {
	if e.Value != indexOutOfRange && e.Value != sliceOutOfRange {
		return nil
	}
	var found []string
	var at []ast.Node
	ast.Inspect(src, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit, *ast.FuncDecl:
			return false // operands there were locals
		case *ast.IndexExpr:
			if e.Value == indexOutOfRange {
				if msg, ok := i.indexProbe(x); ok {
					found, at = append(found, msg), append(at, x)
				}
			}
		case *ast.SliceExpr:
			if e.Value == sliceOutOfRange {
				if msg, ok := i.sliceProbe(x); ok {
					found, at = append(found, msg), append(at, x)
				}
			}
		}
		return true
	})
	if len(found) != 1 {
		return nil
	}
	e.Value = found[0]
	e.Traceback[0] = "panic: " + found[0]
	return at[0]
}

// indexProbe evaluates x's operands and returns Go's message when the index is out of
// range now.
func (i *Interp) indexProbe(x *ast.IndexExpr) (string, bool) {
	v, ok := i.evalPure(x.X)
	if !ok {
		return "", false
	}
	if v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Array && !v.IsNil() {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Array, reflect.String:
	default:
		return "", false
	}
	k, ok := i.pureInt(x.Index)
	if !ok || (k >= 0 && k < int64(v.Len())) {
		return "", false
	}
	if k < 0 {
		return fmt.Sprintf("%s [%d]", indexOutOfRange, k), true
	}
	return fmt.Sprintf("%s [%d] with length %d", indexOutOfRange, k, v.Len()), true
}

// sliceProbe evaluates x's operands and returns Go's message when the bounds are out
// of range now.
func (i *Interp) sliceProbe(x *ast.SliceExpr) (string, bool) {
	v, ok := i.evalPure(x.X)
	if !ok {
		return "", false
	}
	if v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Array && !v.IsNil() {
		v = v.Elem()
	}
	var limit int64
	what := "capacity"
	switch v.Kind() {
	case reflect.Slice:
		limit = int64(v.Cap())
	case reflect.Array:
		limit = int64(v.Len())
		what = "length"
	case reflect.String:
		limit = int64(v.Len())
		what = "length"
	default:
		return "", false
	}
	bound := func(e ast.Expr, dflt int64) (int64, bool) {
		if e == nil {
			return dflt, true
		}
		return i.pureInt(e)
	}
	lo, ok1 := bound(x.Low, 0)
	hi, ok2 := bound(x.High, int64(v.Len()))
	max, ok3 := bound(x.Max, limit)
	if !ok1 || !ok2 || !ok3 {
		return "", false
	}
	switch {
	case x.Slice3 && (max < 0 || max > limit):
		return fmt.Sprintf("%s [::%d] with %s %d", sliceOutOfRange, max, what, limit), true
	case x.Slice3 && (hi < 0 || hi > max):
		return fmt.Sprintf("%s [:%d:%d]", sliceOutOfRange, hi, max), true
	case !x.Slice3 && (hi < 0 || hi > limit):
		if v.Kind() == reflect.String {
			limit = int64(v.Len())
		}
		return fmt.Sprintf("%s [:%d] with %s %d", sliceOutOfRange, hi, what, limit), true
	case lo < 0 || lo > hi:
		if x.Slice3 {
			return fmt.Sprintf("%s [%d:%d:]", sliceOutOfRange, lo, hi), true
		}
		return fmt.Sprintf("%s [%d:%d]", sliceOutOfRange, lo, hi), true
	}
	return "", false
}

// pureInt evaluates an integer operand.
func (i *Interp) pureInt(e ast.Expr) (int64, bool) {
	v, ok := i.evalPure(e)
	if !ok {
		return 0, false
	}
	switch {
	case v.CanInt():
		return v.Int(), true
	case v.CanUint():
		return int64(v.Uint()), true
	case v.Kind() == reflect.Float64 && v.Float() == float64(int64(v.Float())): // an untyped constant
		return int64(v.Float()), true
	}
	return 0, false
}

// evalPure evaluates e again when it cannot have effects: globals, constants, literals,
// operators, fields, indexing, and len and cap.
func (i *Interp) evalPure(e ast.Expr) (reflect.Value, bool) {
	globals := i.globals()
	i.mu.Lock()
	pure := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch x := n.(type) {
		case nil:
		case *ast.Ident:
			_, global := globals[x.Name]
			_, pkg := i.imports[x.Name]
			if !global && !pkg && x.Name != "true" && x.Name != "false" && x.Name != "nil" {
				pure = false
			}
		case *ast.SelectorExpr:
			ast.Inspect(x.X, func(m ast.Node) bool { // x.Sel is a field, not a variable
				if id, ok := m.(*ast.Ident); ok {
					_, global := globals[id.Name]
					_, pkg := i.imports[id.Name]
					pure = pure && (global || pkg)
				}
				return true
			})
			return false
		case *ast.CallExpr:
			if id, ok := x.Fun.(*ast.Ident); !ok || (id.Name != "len" && id.Name != "cap") || len(x.Args) != 1 {
				pure = false
			}
			for _, a := range x.Args {
				ast.Inspect(a, func(m ast.Node) bool {
					if id, ok := m.(*ast.Ident); ok {
						_, global := globals[id.Name]
						pure = pure && global
					}
					return true
				})
			}
			return false
		case *ast.BasicLit, *ast.BinaryExpr, *ast.ParenExpr, *ast.IndexExpr:
		case *ast.UnaryExpr:
			pure = pure && x.Op != token.ARROW
		default:
			pure = false
		}
		return pure
	})
	i.mu.Unlock()
	if !pure {
		return reflect.Value{}, false
	}
	var b bytes.Buffer
	if err := printer.Fprint(&b, token.NewFileSet(), e); err != nil {
		return reflect.Value{}, false
	}
	v, err := i.yi.Eval(b.String())
	if err != nil || !v.IsValid() {
		return reflect.Value{}, false
	}
	return v, true
}

// framePosRE finds the position in a traceback's frame line ("  in f at cell[2]:3:9").
var framePosRE = regexp.MustCompile(`at cell\[(\d+)\]:(\d+):(\d+)$`)

// withSource shows, under the innermost frame of a panic's traceback, the source line
// it points at with a caret under the column. yaegi finds the position of a failing
// operation by looking for the first node in its function that runs the same kind of
// operation, so it may point at an earlier node: the line is shown only when an
// expression that can fail this way starts there. failed, when known (an index found by
// indexDetails), is where the top-level frame really is. Errors of Must and Check name
// their call already and get no line.
func (i *Interp) withSource(e *Error, failed ast.Node) {
	tb := e.Traceback
	if e.Name != namePanic || len(tb) < 2 {
		return
	}
	m := framePosRE.FindStringSubmatch(tb[1])
	if m == nil {
		return
	}
	cell, _ := strconv.Atoi(m[1])
	line, _ := strconv.Atoi(m[2])
	col, _ := strconv.Atoi(m[3])
	if failed != nil && !strings.HasPrefix(tb[1], "  in ") {
		p := i.yi.FileSet().Position(failed.Pos())
		line, col = p.Line, p.Column
		tb[1] = framePosRE.ReplaceAllString(tb[1], fmt.Sprintf("at cell[%d]:%d:%d", cell, line, col))
	} else if !i.canFailAt(cell, line, col, e.Value) {
		return
	}
	i.mu.Lock()
	code := i.sources[cell]
	i.mu.Unlock()
	lines := strings.Split(code, "\n")
	if line < 1 || line > len(lines) {
		return
	}
	src := []string{"    " + lines[line-1], "    " + caretPad(lines[line-1], col) + "^"}
	e.Traceback = append(append(append([]string{}, tb[:2]...), src...), tb[2:]...)
}

// canFailAt reports whether an expression that can raise the panic msg starts at line
// and col of cell's source.
func (i *Interp) canFailAt(cell, line, col int, msg string) bool {
	i.mu.Lock()
	code, ok := i.sources[cell]
	i.mu.Unlock()
	if !ok {
		return false
	}
	chunks, err := splitCell(code, nil)
	if err != nil {
		return false
	}
	fset := token.NewFileSet()
	fits := func(n ast.Node) bool {
		switch n.(type) {
		case *ast.IndexExpr, *ast.IndexListExpr:
			return msg == indexOutOfRange || strings.HasPrefix(msg, indexOutOfRange+" [") || msg == nilDeref || strings.Contains(msg, "nil map")
		case *ast.SliceExpr:
			return strings.HasPrefix(msg, sliceOutOfRange)
		case *ast.SelectorExpr, *ast.StarExpr:
			return msg == nilDeref
		case *ast.BinaryExpr:
			return strings.Contains(msg, "divide by zero") || strings.Contains(msg, "comparing uncomparable")
		case *ast.TypeAssertExpr:
			return strings.HasPrefix(msg, "interface conversion")
		case *ast.CallExpr:
			return true // panic(...), a nil func, a method on nil, close of a nil channel, ...
		}
		return false
	}
	found := false
	for _, ch := range chunks {
		f, _, err := ch.parse(fset, code, fmt.Sprintf("cell[%d]", cell))
		if err != nil {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if found || n == nil {
				return false
			}
			if p := fset.Position(n.Pos()); p.Line == line && p.Column == col && fits(n) {
				found = true
			}
			return true
		})
	}
	return found
}
