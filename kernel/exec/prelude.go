package exec

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"reflect"
	"sort"
	"strings"
	"time"
)

// preludeFile is the file name of the prelude's declarations in positions and panic
// frames; frames in it are left out of tracebacks. Its base name is srcBase because
// yaegi keys imports by file base name, and the prelude uses the pre-imported _gmlcell.
const preludeFile = "prelude/" + srcBase

// prelude is declared in every interpreter after the pre-imports. Must, Must2 and Check
// are the error helpers of cells (README "Errors in cells"); min, max and clear stand in
// for Go 1.21's builtins, which yaegi v0.16.1 lacks; the _gml helpers serve the
// rewrites (must.go, lower.go, infer.go, stdpkg.go). Users may redefine any of the
// first six.
const prelude = `package main

// Must returns v when err is nil. Otherwise it stops the cell, which fails with err and
// the place of the call: x := Must(strconv.Atoi(s)).
func Must[T any](v T, err error) T {
	if err != nil {
		_gmlcell.Fail(err, "Must", "")
	}
	return v
}

// Must2 is Must for calls with two results before the error.
func Must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		_gmlcell.Fail(err, "Must2", "")
	}
	return a, b
}

// Check stops the cell when err is not nil; the cell fails with err and the place of
// the call: Check(model.Save("m.gml")).
func Check(err error) {
	if err != nil {
		_gmlcell.Fail(err, "Check", "")
	}
}

func _gmlCheck(err error, call, pos string) {
	if err != nil {
		_gmlcell.Fail(err, call, pos)
	}
}

type _gmlOrdered interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64 | ~string
}

// min returns the smallest of its arguments, or NaN when one is NaN (Go's builtin).
func min[T _gmlOrdered](x T, y ...T) T { return _gml_min(x, y...) }

// max returns the largest of its arguments, or NaN when one is NaN (Go's builtin).
func max[T _gmlOrdered](x T, y ...T) T { return _gml_max(x, y...) }

// clear deletes every entry of a map, or sets every element of a slice to its zero
// value (Go's builtin).
func clear[T any](x T) { _gmlcell.Clear(x) }

// The builtins again, for the standard packages compiled from source (stdpkg.go),
// which must not see a cell's own min, max or clear.
func _gml_min[T _gmlOrdered](x T, y ...T) T {
	for _, v := range y {
		if v != v || v < x {
			x = v
		}
	}
	return x
}

func _gml_max[T _gmlOrdered](x T, y ...T) T {
	for _, v := range y {
		if v != v || v > x {
			x = v
		}
	}
	return x
}

func _gml_clear[T any](x T) { _gmlcell.Clear(x) }

func _gmlZero[T any](T) (z T) { return }

func _gmlArgs(...any) {}

func _gmlZero1[V any](seq func(func(V) bool)) (v V) { return }

func _gmlZero2[K, V any](seq func(func(K, V) bool)) (k K, v V) { return }

func _gmlSeq0(seq func(func() bool), body func() bool) {
	done := false
	seq(func() bool {
		if done {
			_gmlcell.Continued()
		}
		done = !body()
		return !done
	})
}

func _gmlSeq1[V any](seq func(func(V) bool), p *V, body func() bool) {
	done := false
	seq(func(v V) bool {
		if done {
			_gmlcell.Continued()
		}
		*p = v
		done = !body()
		return !done
	})
}

func _gmlSeq2[K, V any](seq func(func(K, V) bool), pk *K, pv *V, body func() bool) {
	done := false
	seq(func(k K, v V) bool {
		if done {
			_gmlcell.Continued()
		}
		*pk, *pv = k, v
		done = !body()
		return !done
	})
}
`

// preludeNames are the user-facing names the prelude declares, for completion and %help.
var preludeNames = []string{"Must", "Must2", "Check", "min", "max", "clear"}

// failure is the panic value of Must, Check and a cell's last call returning an error:
// the cell fails with Err, shown as an error rather than a panic.
type failure struct {
	err  error
	call string // the function failing, or the source text of its call: "Must(m.Fit(x, y))"
	pos  string // the call's place, "cell[3]:2:6", when known
}

func (f *failure) Error() string { return f.err.Error() }

// nameFailure is the Error.Name of a cell stopped by Must, Check or a returned error.
const nameFailure = "Error"

// preludeSymbols returns the compiled helpers the prelude and rewritten cells call,
// added to the _gmlcell package.
func (i *Interp) preludeSymbols() map[string]reflect.Value {
	return map[string]reflect.Value{
		"Callee": reflect.ValueOf(func(src, pos string) {
			i.mu.Lock()
			i.callee = &callee{src: src, pos: pos}
			i.mu.Unlock()
		}),
		"Fail": reflect.ValueOf(func(err error, call, pos string) { panic(&failure{err: err, call: call, pos: pos}) }),
		"Clear": reflect.ValueOf(func(x any) {
			v := reflect.ValueOf(x)
			if v.Kind() != reflect.Map && v.Kind() != reflect.Slice {
				panic(fmt.Sprintf("invalid argument: clear(%T): argument must be a map or a slice", x))
			}
			v.Clear()
		}),
		"CloneMap": reflect.ValueOf(func(m any) any {
			v := reflect.ValueOf(m)
			c := reflect.MakeMapWithSize(v.Type(), v.Len())
			for it := v.MapRange(); it.Next(); {
				c.SetMapIndex(it.Key(), it.Value())
			}
			return c.Interface()
		}),
		"Overlaps": reflect.ValueOf(func(a, b any) bool {
			va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
			if va.Len() == 0 || vb.Len() == 0 {
				return false
			}
			size := va.Type().Elem().Size()
			if size == 0 {
				return false
			}
			a0, b0 := va.Pointer(), vb.Pointer()
			return a0 <= b0+uintptr(vb.Len()-1)*size+(size-1) && b0 <= a0+uintptr(va.Len()-1)*size+(size-1)
		}),
		"SortFast": reflect.ValueOf(func(x any) bool {
			switch v := x.(type) {
			case []int:
				sort.Ints(v)
			case []float64:
				sort.Float64s(v)
			case []string:
				sort.Strings(v)
			default:
				return false
			}
			return true
		}),
		"Time": reflect.ValueOf(func(f func()) {
			start := time.Now()
			f()
			d := time.Since(start)
			i.mu.Lock()
			i.timed = d
			i.mu.Unlock()
		}),
		"Continued": reflect.ValueOf(func() {
			panic(errors.New("runtime error: range function continued iteration after function for loop body returned false"))
		}),
	}
}

// declarePrelude declares the prelude in the interpreter.
func (i *Interp) declarePrelude() error {
	src := "package main\n/*line " + preludeFile + ":1:1*/" + prelude[len("package main\n"):]
	if _, err := i.yi.Eval(src); err != nil {
		return fmt.Errorf("exec: declaring the prelude: %w", err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), preludeFile, prelude, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("exec: parsing the prelude: %w", err)
	}
	i.record(f)
	i.prelude = map[string]bool{}
	for _, n := range preludeNames {
		i.prelude[n] = true
	}
	return nil
}

func isFailure(v any) bool {
	_, ok := v.(*failure)
	return ok
}

// failureError is the cell error of a failure: the error's text, then the failing call
// with the function it is in and its place ("Must(f(s)) in g at cell[3]:2:6"), then the
// interpreted frames above it, without the prelude's own.
func failureError(f *failure, frames []string) *Error {
	tb := []string{nameFailure + ": " + f.err.Error()}
	first := true
	for _, fr := range frames {
		if strings.Contains(fr, preludeFile) {
			continue
		}
		if first {
			first = false
			fn, loc, _ := strings.Cut(strings.TrimSpace(fr), "at ")
			if f.pos != "" {
				loc = f.pos
			}
			fr = "  " + f.call + " " + fn + "at " + loc
		}
		tb = append(tb, fr)
	}
	if first {
		tb = append(tb, strings.TrimRight("  "+f.call+" at "+f.pos, " at"))
	}
	return &Error{Name: nameFailure, Value: f.err.Error(), Traceback: tb}
}
