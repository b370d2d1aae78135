package ag

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unsafe"
)

// Module is a model piece with a forward pass on one tensor: every layer of this
// package, Sequential, and any struct of layers with a Forward method, including one
// defined in a notebook cell. Parameters, NamedParameters, Buffers and SetTraining find
// what a module holds by walking its fields (pointers, structs, slices, arrays, maps
// with string keys and interfaces), so a cell's struct needs no registration.
type Module interface {
	Forward(x *Tensor) *Tensor
}

// Named is a parameter or buffer with its path in a model: "fc1.weight", "layers.0.bias".
type Named struct {
	Name   string
	Tensor *Tensor
}

// Parameters lists the trainable parameters m holds, each once, in field order.
func Parameters(m any) []*Tensor {
	var out []*Tensor
	for _, n := range walk(m) {
		if n.Tensor.IsParam() {
			out = append(out, n.Tensor)
		}
	}
	return out
}

// NamedParameters lists the trainable parameters m holds with their field paths.
func NamedParameters(m any) []Named {
	var out []Named
	for _, n := range walk(m) {
		if n.Tensor.IsParam() {
			out = append(out, n)
		}
	}
	return out
}

// Buffers lists the non-trainable state m holds (batch-norm running statistics) with
// their field paths.
func Buffers(m any) []Named {
	var out []Named
	for _, n := range walk(m) {
		if !n.Tensor.IsParam() {
			out = append(out, n)
		}
	}
	return out
}

// CountParams is the number of trainable scalars m holds.
func CountParams(m any) int {
	n := 0
	for _, p := range Parameters(m) {
		n += p.Size()
	}
	return n
}

// tensorLister is what holders of variables under names of their own implement (a
// NetView lists nn's variable names).
type tensorLister interface {
	namedTensors() []Named
}

// trainable is what layers with a training mode (Dropout, BatchNorm, attention with
// dropout) implement.
type trainable interface {
	setTraining(on bool)
}

// SetTraining switches every layer m holds to training mode (dropout active, batch
// statistics used and updated) or evaluation mode. Layers start in training mode.
func SetTraining(m any, on bool) {
	visit(reflect.ValueOf(m), "", map[uintptr]bool{}, func(string, *Tensor) {}, func(t trainable) { t.setTraining(on) })
}

// walk lists the parameters and buffers m holds, each once, with their paths.
func walk(m any) []Named {
	var out []Named
	seen := map[*Tensor]bool{}
	visit(reflect.ValueOf(m), "", map[uintptr]bool{}, func(path string, t *Tensor) {
		if t.p != nil && !seen[t] {
			seen[t] = true
			out = append(out, Named{Name: path, Tensor: t})
		}
	}, nil)
	return out
}

var tensorType = reflect.TypeOf((*Tensor)(nil))

// visit walks v depth first, calling onTensor for every *Tensor and onMode for every
// value with a training mode. Pointers already visited are skipped.
func visit(v reflect.Value, path string, seen map[uintptr]bool, onTensor func(string, *Tensor), onMode func(trainable)) {
	if !v.IsValid() {
		return
	}
	if v.Type() == tensorType {
		if !v.IsNil() {
			onTensor(path, readable(v).Interface().(*Tensor))
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		x := readable(v).Interface()
		if t, ok := x.(trainable); ok && onMode != nil {
			onMode(t)
		}
		switch x := x.(type) {
		case tensorLister:
			for _, n := range x.namedTensors() {
				onTensor(join(path, n.Name), n.Tensor)
			}
			return
		case *Tape:
			return
		}
		visit(v.Elem(), path, seen, onTensor, onMode)
	case reflect.Interface:
		visit(v.Elem(), path, seen, onTensor, onMode)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			visit(v.Field(i), join(path, fieldName(v.Type().Field(i).Name)), seen, onTensor, onMode)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			visit(v.Index(i), join(path, strconv.Itoa(i)), seen, onTensor, onMode)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		names := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			names = append(names, k.String())
		}
		sort.Strings(names)
		for _, n := range names {
			visit(v.MapIndex(reflect.ValueOf(n).Convert(v.Type().Key())), join(path, n), seen, onTensor, onMode)
		}
	}
}

// readable returns v usable with Interface even when it was reached through an
// unexported field (a cell's struct may keep its layers in lower-case fields).
func readable(v reflect.Value) reflect.Value {
	if v.CanInterface() {
		return v
	}
	if v.CanAddr() {
		return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	}
	return v
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// fieldName turns a Go field name into a path element as PyTorch names attributes, in
// snake case: "Weight" -> "weight", "RunningMean" -> "running_mean", "FC1" -> "fc1",
// "QProj" -> "q_proj".
func fieldName(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 {
			prev := r[i-1]
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}
