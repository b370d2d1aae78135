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
//     made, and the frame, which yaegi copies whole whenever it grows, grew by one to
//     three slots a cell, so `1+1` got slower as a session went on. releaseTemps, after
//     each chunk, replaces the chunk's slots that no symbol names with zero values and
//     gives the trailing ones back (the frame and the scopes' layout are cut to the last
//     kept slot), so the next chunk reuses them. A slot holding a value of a cell's own
//     type is kept: an interface value made from it calls the type's methods with the
//     receiver read from that slot.
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
// names, and cuts the frame and the layout of the scopes that share it (the others have
// no globals, as the generic std packages yaegi carries in source) after the last named
// slot.
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
	if n <= from {
		return
	}
	scopes := scopeList(i.yi)
	// A slot is kept when a symbol names it, or when it may hold the receiver of an
	// interpreted method that an interface value made in the chunk reads later (yaegi's
	// method wrappers read the receiver from its frame slot when called): a value of a
	// type yaegi made for a cell's type.
	named, last := map[int]bool{}, -1
	for k := from; k < n; k++ {
		if v := data.Index(k).Interface().(reflect.Value); v.IsValid() && !plainType(v.Type(), 0) {
			named[k] = true
			last = k
		}
	}
	for _, sc := range scopes {
		if sc.IsNil() {
			continue
		}
		for it := sc.Elem().Field(yf.sym).MapRange(); it.Next(); {
			if s := it.Value(); !s.IsNil() {
				if k := int(s.Elem().Field(yf.index).Int()); k >= from {
					named[k] = true
					last = max(last, k)
				}
			}
		}
	}
	keep := max(from, last+1)
	var layouts []reflect.Value
	for _, sc := range scopes {
		if sc.IsNil() {
			continue
		}
		t := settable(sc.Elem().Field(yf.types))
		switch {
		case t.Len() == n:
			layouts = append(layouts, t)
		case t.Len() > keep: // a scope whose layout stops among the slots: leave all alone
			keep, layouts = n, nil
		}
		if keep == n {
			break
		}
	}
	mu := (*sync.RWMutex)(unsafe.Pointer(fr.Elem().Field(yf.frameMu).UnsafeAddr()))
	mu.Lock()
	defer mu.Unlock()
	for k := from; k < n; k++ {
		switch slot := data.Index(k); {
		case k >= keep: // given back below
			slot.Set(reflect.ValueOf(reflect.Value{}))
		case !named[k]:
			if v := slot.Interface().(reflect.Value); v.IsValid() {
				slot.Set(reflect.ValueOf(reflect.New(v.Type()).Elem()))
			}
		}
	}
	for _, t := range layouts {
		for k := keep; k < n; k++ {
			t.Index(k).SetZero()
		}
		t.SetLen(keep)
	}
	data.SetLen(keep)
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
