package exec

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/traefik/yaegi/interp"
)

// Memory per cell. yaegi keeps what every cell compiled and made:
//   - Interpreter.roots holds every compiled root node, and each package scope lists a
//     child scope for every function or block ever compiled, whose def keeps that
//     function's nodes, so every version of a redefined function stayed (12 KB a cell
//     that defines one). Only yaegi's debugger reads these lists: dropCompileHistory
//     empties them after each compile.
//   - Top-level statements run in the global frame, and every temporary value of them (a
//     call's result, the buffer of `len(make([]byte, 1<<20))`) gets a slot of its own
//     there that is never reused or cleared: each cell kept the values its expressions
//     made. releaseTemps, after each chunk, replaces the values in the chunk's slots
//     that no symbol names with zero values. The slots themselves stay (one to three a
//     cell, 40 bytes each with their layout entry; yaegi copies the frame whole when it
//     grows, a cost that rises slowly over a long session, as before).
// The fields are reached by reflection (yaegi v0.16.1), found once; where they are not
// the expected ones nothing is done. TestMemoryPerCellIsBounded checks both.

// yf are the positions of the yaegi fields used here.
var yf struct {
	once                      sync.Once
	ok                        bool
	roots, frame, scopes, uni int // in Interpreter
	data, frameMu             int // in frame
	sym, types, child         int // in scope
	index                     int // in symbol
}

// layout finds the fields once and reports whether they are all there.
func layout() bool {
	yf.once.Do(func() {
		field := func(t reflect.Type, name string, kind reflect.Kind) (reflect.StructField, bool) {
			f, ok := t.FieldByName(name)
			return f, ok && f.Type.Kind() == kind
		}
		it := reflect.TypeOf(interp.Interpreter{})
		roots, ok1 := field(it, "roots", reflect.Slice)
		frame, ok2 := field(it, "frame", reflect.Pointer)
		scopes, ok3 := field(it, "scopes", reflect.Map)
		uni, ok4 := field(it, "universe", reflect.Pointer)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return
		}
		data, ok5 := field(frame.Type.Elem(), "data", reflect.Slice)
		mu, ok6 := frame.Type.Elem().FieldByName("mutex")
		st := uni.Type.Elem()
		sym, ok7 := field(st, "sym", reflect.Map)
		types, ok8 := field(st, "types", reflect.Slice)
		child, ok9 := field(st, "child", reflect.Slice)
		if !ok5 || !ok6 || mu.Type != reflect.TypeOf(sync.RWMutex{}) || !ok7 || !ok8 || !ok9 ||
			data.Type != reflect.TypeOf([]reflect.Value(nil)) || types.Type != reflect.TypeOf([]reflect.Type(nil)) ||
			scopes.Type.Elem() != uni.Type || child.Type.Elem() != uni.Type {
			return
		}
		index, ok10 := field(sym.Type.Elem().Elem(), "index", reflect.Int)
		if !ok10 || sym.Type.Elem().Kind() != reflect.Pointer {
			return
		}
		yf.roots, yf.frame, yf.scopes, yf.uni = roots.Index[0], frame.Index[0], scopes.Index[0], uni.Index[0]
		yf.data, yf.frameMu = data.Index[0], mu.Index[0]
		yf.sym, yf.types, yf.child, yf.index = sym.Index[0], types.Index[0], child.Index[0], index.Index[0]
		yf.ok = true
	})
	return yf.ok
}

// settable makes an unexported field writable.
func settable(f reflect.Value) reflect.Value {
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// scopeList returns the universe and the package scopes, each a *scope Value.
func scopeList(yi *interp.Interpreter) []reflect.Value {
	v := reflect.ValueOf(yi).Elem()
	list := []reflect.Value{v.Field(yf.uni)}
	for it := v.Field(yf.scopes).MapRange(); it.Next(); {
		list = append(list, it.Value())
	}
	return list
}

// dropCompileHistory empties Interpreter.roots and the child lists of the universe
// and the package scopes.
func dropCompileHistory(yi *interp.Interpreter) {
	if !layout() {
		return
	}
	clear := func(f reflect.Value) {
		s := settable(f)
		for k := 0; k < s.Len(); k++ {
			s.Index(k).SetZero()
		}
		s.SetLen(0)
	}
	clear(reflect.ValueOf(yi).Elem().Field(yf.roots))
	for _, sc := range scopeList(yi) {
		if !sc.IsNil() {
			clear(sc.Elem().Field(yf.child))
		}
	}
}

// globalSlots returns the number of slots of yaegi's global frame.
func (i *Interp) globalSlots() int {
	if !layout() {
		return 0
	}
	fr := reflect.ValueOf(i.yi).Elem().Field(yf.frame)
	if fr.IsNil() {
		return 0
	}
	return fr.Elem().Field(yf.data).Len()
}

// releaseTemps clears the global frame's slots from index from on that no symbol
// names and whose values are of plain types (see plainType). The slots stay: yaegi's
// closures write their own slot back when a call ends (getFunc), so a slot given back
// and reused would be overwritten, or, cut from the frame, fail the call.
func (i *Interp) releaseTemps(from int) {
	if !layout() {
		return
	}
	fr := reflect.ValueOf(i.yi).Elem().Field(yf.frame)
	if fr.IsNil() {
		return
	}
	data := settable(fr.Elem().Field(yf.data))
	n := data.Len()
	// Most cells leave numbers or nothing in their slots: then there is nothing to free
	// and the symbols need not be looked at.
	holds := false
	for k := from; k < n && !holds; k++ {
		v := data.Index(k).Interface().(reflect.Value)
		holds = v.IsValid() && !v.IsZero() && !scalar(v.Kind())
	}
	if !holds {
		return
	}
	named := map[int]bool{}
	for _, sc := range scopeList(i.yi) {
		if sc.IsNil() {
			continue
		}
		for it := sc.Elem().Field(yf.sym).MapRange(); it.Next(); {
			if s := it.Value(); !s.IsNil() {
				if k := int(s.Elem().Field(yf.index).Int()); k >= from {
					named[k] = true
				}
			}
		}
	}
	mu := (*sync.RWMutex)(unsafe.Pointer(fr.Elem().Field(yf.frameMu).UnsafeAddr()))
	mu.Lock()
	defer mu.Unlock()
	for k := from; k < n; k++ {
		if named[k] {
			continue
		}
		slot := data.Index(k)
		// A value of a type yaegi made for a cell's type is kept: an interface value made
		// from it calls the type's methods with the receiver read from this slot.
		if v := slot.Interface().(reflect.Value); v.IsValid() && plainType(v.Type(), 0) {
			slot.Set(reflect.ValueOf(reflect.New(v.Type()).Elem()))
		}
	}
}

// plainType reports whether values of t cannot be (or hold) values of types yaegi made
// for cell types, which are unnamed structs (reflect.StructOf): t is plain when it is
// built only from named compiled types, basic kinds, functions and interfaces (a slot
// holding a function or an interface value is not read again by what it holds).
func plainType(t reflect.Type, depth int) bool {
	if depth > 8 {
		return false
	}
	if t.Name() != "" && t.PkgPath() != "" {
		return true // a compiled named type
	}
	switch t.Kind() {
	case reflect.Struct, reflect.UnsafePointer:
		return false
	case reflect.Interface, reflect.Func:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
		return plainType(t.Elem(), depth+1)
	case reflect.Map:
		return plainType(t.Key(), depth+1) && plainType(t.Elem(), depth+1)
	}
	return true // bool, numbers, string
}

// scalar reports kinds whose values refer to no other memory.
func scalar(k reflect.Kind) bool {
	return k >= reflect.Bool && k <= reflect.Complex128
}
