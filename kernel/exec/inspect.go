package exec

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/gml-dev/gml/kernel/exec/symbols"
)

// Inspect describes the symbol under (or just before) cursor, counted in code points:
// for a package member its declaration and doc comment (embedded at generate time for
// gml's packages, gonum and the main standard packages) or at least its type; for a
// variable, its type and value; for a function defined in a cell, its signature. found
// is false when nothing is known. detail is accepted for the protocol; both levels give
// the same text.
func (i *Interp) Inspect(code string, cursor int, detail int) (data map[string]any, found bool) {
	off := byteOffset(code, cursor)
	if off > 0 && code[off-1] == '(' && identStart(code, off-1) < off-1 {
		off-- // just after "f(": inspect f
	}
	end := identEnd(code, off)
	start := chainStart(code, end)
	chain := code[start:end]
	if chain == "" {
		return nil, false
	}
	text, ok := i.describe(chain)
	if !ok {
		return nil, false
	}
	return map[string]any{"text/plain": text}, true
}

func (i *Interp) describe(chain string) (string, bool) {
	parts := strings.Split(chain, ".")
	path, isPkg := i.packagePath(parts[0])
	i.mu.Lock()
	kind := i.decls[parts[0]]
	i.mu.Unlock()
	switch {
	case isPkg && len(parts) == 1:
		return docOr(path, "", "package "+parts[0]+" // import \""+path+"\"")
	case isPkg:
		name := strings.Join(parts[1:], ".")
		sym, ok := i.yi.Symbols(path)[path][parts[1]]
		fallback := ""
		if ok {
			fallback = parts[0] + "." + parts[1] + " " + symbolType(sym)
		}
		return docOr(path, name, fallback)
	}
	if v, ok := i.lookup(chain); ok {
		return describeValue(chain, v, i.names()), true
	}
	if len(parts) > 1 {
		if v, ok := i.lookup(strings.Join(parts[:len(parts)-1], ".")); ok {
			if d, ok := describeMethod(v, parts[len(parts)-1]); ok {
				return d, true
			}
		}
	}
	if kind != "" && len(parts) == 1 && i.run.TryLock() {
		// A function or type defined in a cell: evaluating its name runs no code.
		defer i.run.Unlock()
		if v, err := i.yi.Eval(parts[0]); err == nil && v.IsValid() {
			if kind == "type" {
				return fmt.Sprintf("type %s %s", parts[0], typeOf(v)), true
			}
			return fmt.Sprintf("func %s: %s", parts[0], v.Type()), true
		}
	}
	if len(parts) == 1 {
		return docOr("builtin", parts[0], "") // len, append, error, ...
	}
	return "", false
}

// docOr returns the embedded doc of path.name, or fallback when there is none.
func docOr(path, name, fallback string) (string, bool) {
	if d, ok, err := symbols.Doc(path, name); err == nil && ok {
		return d, true
	}
	return fallback, fallback != ""
}

// symbolType describes an entry of a yaegi symbol table: types are stored as nil
// pointers to the type, variables as addressable values.
func symbolType(v reflect.Value) string {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return "(type " + v.Type().Elem().String() + ")"
	}
	return v.Type().String()
}

func typeOf(v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		return v.Type().Elem().String()
	}
	return v.Type().String()
}

// describeValue shows a variable's type, the doc of its type when embedded, and value.
func describeValue(name string, v reflect.Value, names map[reflect.Type]string) string {
	t := v.Type()
	if v.Kind() == reflect.Interface && !v.IsNil() {
		t = v.Elem().Type()
	}
	var val any
	if v.CanInterface() {
		val = v.Interface()
	}
	s := fmt.Sprintf("%s: %s\n\n%s", name, t, formatValue(val, names))
	nt := t
	if nt.Kind() == reflect.Pointer {
		nt = nt.Elem()
	}
	if d, ok, err := symbols.Doc(nt.PkgPath(), nt.Name()); err == nil && ok && nt.Name() != "" {
		s += "\n\n" + d
	}
	return s
}

// describeMethod shows the method name of v's type (or of a pointer to it): its
// embedded doc when the type is a compiled package's, its signature otherwise.
func describeMethod(v reflect.Value, name string) (string, bool) {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	t := v.Type()
	m, ok := t.MethodByName(name)
	if !ok && t.Kind() != reflect.Pointer {
		m, ok = reflect.PointerTo(t).MethodByName(name)
	}
	if !ok {
		return "", false
	}
	nt := t
	if nt.Kind() == reflect.Pointer {
		nt = nt.Elem()
	}
	if d, ok, err := symbols.Doc(nt.PkgPath(), nt.Name()+"."+name); err == nil && ok {
		return d, true
	}
	return fmt.Sprintf("method %s.%s: %s", nt, name, m.Type), true
}
