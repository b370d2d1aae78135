package exec

import (
	"go/token"
	"reflect"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// universe holds the predeclared identifiers of Go offered as completions.
var universe = strings.Fields(`append bool byte cap clear close complex complex128 complex64 copy
delete error false float32 float64 imag int int16 int32 int64 int8 iota len make max min new nil
panic print println real recover rune string true uint uint16 uint32 uint64 uint8 uintptr any comparable`)

// keywords holds Go's keywords.
var keywords = func() []string {
	var k []string
	for t := token.BREAK; t <= token.VAR; t++ {
		if t.IsKeyword() {
			k = append(k, t.String())
		}
	}
	return k
}()

// Complete returns completions for the identifier that ends at cursor, and the span
// [start, end) it replaces. cursor, start and end count Unicode code points. After
// "pkg." it offers the package's members; after "x." (x a variable, or a field chain of
// one) the fields and methods of x's value; otherwise keywords, predeclared names,
// imported packages and the names cells have defined.
func (i *Interp) Complete(code string, cursor int) (matches []string, start, end int) {
	off := byteOffset(code, cursor)
	if word, ok := magicWord(code[:off]); ok {
		for _, m := range magicNames() {
			if strings.HasPrefix(m, word) {
				matches = append(matches, m)
			}
		}
		sort.Strings(matches)
		return matches, cursor - utf8.RuneCountInString(word), cursor
	}
	wordStart := identStart(code, off)
	prefix := code[wordStart:off]
	start = cursor - utf8.RuneCountInString(prefix)
	var cands []string
	if wordStart > 0 && code[wordStart-1] == '.' {
		chain := code[chainStart(code, wordStart-1) : wordStart-1]
		cands = i.members(chain)
	} else {
		cands = i.topNames()
	}
	seen := map[string]bool{}
	for _, c := range cands {
		if strings.HasPrefix(c, prefix) && !seen[c] && !strings.HasPrefix(c, "_gml") {
			seen[c] = true
			matches = append(matches, c)
		}
	}
	sort.Strings(matches)
	return matches, start, cursor
}

// topNames lists the names usable without a qualifier.
func (i *Interp) topNames() []string {
	names := append(append([]string{}, keywords...), universe...)
	i.mu.Lock()
	for n := range i.imports {
		names = append(names, n)
	}
	for n := range i.decls {
		names = append(names, n)
	}
	i.mu.Unlock()
	for n := range i.globals() {
		names = append(names, n)
	}
	return names
}

// members lists what can follow "chain.": package members when chain names an imported
// package, fields and methods of the value otherwise.
func (i *Interp) members(chain string) []string {
	if chain == "" {
		return nil
	}
	if path, isPkg := i.packagePath(chain); isPkg {
		if names, isStd := stdMembers(path); isStd {
			return names
		}
		var names []string
		for _, syms := range i.yi.Symbols(path) {
			for n := range syms {
				if !strings.HasPrefix(n, "_") {
					names = append(names, n)
				}
			}
		}
		return names
	}
	v, ok := i.lookup(chain)
	if !ok {
		return nil
	}
	names := fieldsAndMethods(v)
	t := v.Type()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if tn, ok := i.typeNames[t]; ok {
		names = append(names, i.methods[tn]...)
	}
	return names
}

// lookup resolves a chain "x.f.g" of a global variable and its fields by reflection,
// without running code.
func (i *Interp) lookup(chain string) (reflect.Value, bool) {
	parts := strings.Split(chain, ".")
	v, ok := i.globals()[parts[0]]
	if !ok {
		return reflect.Value{}, false
	}
	for _, f := range parts[1:] {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		if v = v.FieldByName(f); !v.IsValid() {
			return reflect.Value{}, false
		}
	}
	return v, true
}

// fieldsAndMethods lists the fields (through pointers) and the methods of v's type.
func fieldsAndMethods(v reflect.Value) []string {
	var names []string
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	t := v.Type()
	pt := t
	if t.Kind() != reflect.Pointer {
		pt = reflect.PointerTo(t)
	}
	for k := 0; k < pt.NumMethod(); k++ {
		names = append(names, pt.Method(k).Name)
	}
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() == reflect.Struct {
		for k := 0; k < st.NumField(); k++ {
			names = append(names, st.Field(k).Name)
		}
	}
	return names
}

// byteOffset converts a cursor counted in code points to a byte offset in s.
func byteOffset(s string, cursor int) int {
	if cursor <= 0 {
		return 0
	}
	n := 0
	for off := range s {
		if n == cursor {
			return off
		}
		n++
	}
	return len(s)
}

func isIdentRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// identStart returns the byte offset where the identifier ending at off begins.
func identStart(s string, off int) int {
	for off > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:off])
		if !isIdentRune(r) {
			break
		}
		off -= size
	}
	return off
}

// identEnd returns the byte offset where the identifier containing off ends.
func identEnd(s string, off int) int {
	for off < len(s) {
		r, size := utf8.DecodeRuneInString(s[off:])
		if !isIdentRune(r) {
			break
		}
		off += size
	}
	return off
}

// chainStart returns where a selector chain "a.b.c" ending at off begins.
func chainStart(s string, off int) int {
	for {
		st := identStart(s, off)
		if st == off {
			return off
		}
		if st > 0 && s[st-1] == '.' {
			off = st - 1
			continue
		}
		return st
	}
}

// packagePath resolves a name used as a package in a cell, unless a global variable of
// that name shadows it (yaegi lets `data := ...` hide the pre-imported data package): an
// import in effect, or else a package that could be imported, by the last element of its
// path (the shortest path wins: "rand" is math/rand). Completion and inspection thus
// work on `strings.` before any import line.
func (i *Interp) packagePath(name string) (string, bool) {
	if _, isVar := i.globals()[name]; isVar {
		return "", false
	}
	i.mu.Lock()
	path, ok := i.imports[name]
	i.mu.Unlock()
	if ok {
		return path, true
	}
	path, ok = i.importable()[name]
	return path, ok
}

// importable maps the last path element of every importable package to its path.
func (i *Interp) importable() map[string]string {
	i.importableOnce.Do(func() {
		i.importableIdx = map[string]string{}
		paths := append([]string{}, i.paths...)
		for p := range stdPaths() {
			paths = append(paths, p)
		}
		for _, path := range paths {
			if strings.Contains(path, "internal") {
				continue
			}
			name := packageName(path)
			if old, dup := i.importableIdx[name]; !dup || len(path) < len(old) || (len(path) == len(old) && path < old) {
				i.importableIdx[name] = path
			}
		}
	})
	return i.importableIdx
}
