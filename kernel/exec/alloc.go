package exec

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"math/bits"
	"reflect"

	"github.com/gml-dev/gml/internal/sysmem"
)

// Impossible allocations. `make([]byte, 1<<40)` makes the Go runtime end the process
// ("fatal error: runtime: out of memory", or the OOM killer once the pages are used),
// which no recover catches. The rewriter therefore passes the size of every make of a
// slice, map or channel type written in the cell through _gmlcell.MakeSize, which
// compares it with the memory available (internal/sysmem) and panics with an error
// naming both when it cannot fit; the cell fails and the kernel lives. Sizes that are
// constants below smallMake are left alone, and so are makes of named types and makes
// inside generic functions, where the probe `(T)(nil)` might not compile. Compiled code
// (tensor.New, the CPU and GPU backends) checks its own allocations.

// smallMake is the largest constant size left unchecked.
const smallMake = 1 << 16

// guardMakes rewrites `make(T, n)` into `make(T, _gmlcell.MakeSize((T)(nil), int(n)))`,
// and `make(T, n, c)` likewise on c, under n.
func guardMakes(n ast.Node) {
	ast.Inspect(n, func(n ast.Node) bool {
		if fd, ok := n.(*ast.FuncDecl); ok && fd.Type.TypeParams != nil {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) < 2 || len(call.Args) > 3 {
			return true
		}
		if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "make" {
			return true
		}
		switch t := call.Args[0].(type) {
		case *ast.ArrayType:
			if t.Len != nil {
				return true
			}
		case *ast.MapType, *ast.ChanType:
		default:
			return true
		}
		size := &call.Args[len(call.Args)-1]
		if v, ok := constInt(*size); ok && v <= smallMake {
			return true
		}
		p := (*size).Pos()
		probe := &ast.CallExpr{Fun: &ast.ParenExpr{Lparen: p, X: call.Args[0], Rparen: p}, Lparen: p,
			Args: []ast.Expr{&ast.Ident{NamePos: p, Name: "nil"}}, Rparen: p}
		asInt := &ast.CallExpr{Fun: &ast.Ident{NamePos: p, Name: "int"}, Lparen: p, Args: []ast.Expr{*size}, Rparen: (*size).End()}
		*size = &ast.CallExpr{
			Fun:    &ast.SelectorExpr{X: &ast.Ident{NamePos: p, Name: cellPkg}, Sel: &ast.Ident{NamePos: p, Name: "MakeSize"}},
			Lparen: p, Args: []ast.Expr{probe, asInt}, Rparen: (*size).End(),
		}
		return true
	})
}

// constInt evaluates an integer constant written with literals and operators.
func constInt(e ast.Expr) (int64, bool) {
	var eval func(e ast.Expr) constant.Value
	eval = func(e ast.Expr) constant.Value {
		switch x := e.(type) {
		case *ast.BasicLit:
			return constant.MakeFromLiteral(x.Value, x.Kind, 0)
		case *ast.ParenExpr:
			return eval(x.X)
		case *ast.UnaryExpr:
			return constant.UnaryOp(x.Op, eval(x.X), 0)
		case *ast.BinaryExpr:
			a, b := eval(x.X), eval(x.Y)
			if x.Op == token.SHL || x.Op == token.SHR {
				s, ok := constant.Uint64Val(constant.ToInt(b))
				if !ok || s > 1<<10 {
					return constant.MakeUnknown()
				}
				return constant.Shift(a, x.Op, uint(s))
			}
			if x.Op == token.QUO && constant.Sign(b) == 0 {
				return constant.MakeUnknown()
			}
			return constant.BinaryOp(a, x.Op, b)
		}
		return constant.MakeUnknown()
	}
	v := constant.ToInt(eval(e))
	if v.Kind() != constant.Int {
		return 0, false
	}
	return constant.Int64Val(v)
}

// makeSize is _gmlcell.MakeSize: it returns n when n elements of probe's type (a nil
// slice, map or channel) fit in the memory available, and panics otherwise.
func makeSize(probe any, n int) int {
	t := reflect.TypeOf(probe)
	if t == nil || n <= 0 {
		return n
	}
	var elem uint64
	switch t.Kind() {
	case reflect.Slice, reflect.Chan:
		elem = uint64(t.Elem().Size())
	case reflect.Map:
		elem = uint64(t.Key().Size() + t.Elem().Size())
	}
	hi, bytes := bits.Mul64(uint64(n), elem)
	if hi != 0 {
		bytes = ^uint64(0)
	}
	if err := sysmem.CheckAlloc(bytes, func() string { return fmt.Sprintf("make(%v, %d)", t, n) }); err != nil {
		panic(err)
	}
	return n
}
