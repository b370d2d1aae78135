package ag

import (
	"container/list"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// program is one compiled trace. Later traces with the same signature (the same ops,
// attributes, shapes, constants, variables and outputs, in the same order) run it
// with their own data: their nodes correspond to its nodes by ID.
type program struct {
	exe    *runtime.Executable
	inputs []*tensor.Node // the inputs the executable reads
	outs   []*tensor.Node
	gen    uint64 // runs so far: values of an older run are gone
	freed  bool
	elem   *list.Element
	key    string
	held   []held // what each recorded value's output holds, for TapeMemory
}

// held is one value a program's run keeps on the device: the op that made it and its
// bytes (0 for a view sharing another buffer).
type held struct {
	op    string
	bytes int64
}

// traceCache keeps compiled traces by signature, freeing the least recently used.
type traceCache struct {
	capacity int
	byKey    map[string]*program
	lru      *list.List
	hits     int
	misses   int
	noReuse  bool // TraceCache(false): compile every trace
}

func newTraceCache(capacity int) *traceCache {
	return &traceCache{capacity: capacity, byKey: map[string]*program{}, lru: list.New()}
}

func (c *traceCache) clear() {
	for _, p := range c.byKey {
		p.free()
	}
	clear(c.byKey)
	c.lru.Init()
}

func (p *program) free() {
	if !p.freed {
		p.freed = true
		p.exe.Free()
	}
}

// program returns the compiled program of a trace, from the cache when a trace with
// the same signature ran before.
func (t *Tape) program(tr *trace, outs []*tensor.Node) (*program, error) {
	t0 := time.Now()
	key := signature(tr.g, outs)
	if p, ok := t.cache.byKey[string(key)]; ok && !t.cache.noReuse {
		t.cache.hits++
		t.cache.lru.MoveToFront(p.elem)
		if s := t.prof; s != nil {
			s.cur.signature += time.Since(t0)
			s.cur.hits++
		}
		return p, nil
	}
	t1 := time.Now()
	exe, err := t.rt.Compile(outs)
	if err != nil {
		return nil, err
	}
	t.cache.misses++
	p := &program{exe: exe, inputs: exe.Inputs(), outs: outs, key: string(key)}
	for _, x := range tr.vis {
		var b int64
		if x.node.Op() != tensor.OpReshape { // Reshape shares its input's buffer
			b = int64(x.node.Shape().Size() * x.node.DType().Size())
		}
		p.held = append(p.held, held{op: x.op, bytes: b})
	}
	if old, ok := t.cache.byKey[p.key]; ok {
		t.cache.lru.Remove(old.elem)
		old.free()
	}
	p.elem = t.cache.lru.PushFront(p)
	t.cache.byKey[p.key] = p
	for t.cache.lru.Len() > t.cache.capacity {
		old := t.cache.lru.Remove(t.cache.lru.Back()).(*program)
		delete(t.cache.byKey, old.key)
		old.free()
	}
	if s := t.prof; s != nil {
		s.cur.signature += t1.Sub(t0)
		s.cur.compile += time.Since(t1)
		s.cur.misses++
	}
	return p, nil
}

// signature encodes everything that decides a trace's compiled program: per node its
// op, dtype, shape, inputs and attribute, the identity of variables and the data of
// constants; then the outputs.
func signature(g *tensor.Graph, outs []*tensor.Node) []byte {
	b := make([]byte, 0, 32*g.Len()+8*len(outs))
	for _, n := range g.Nodes() {
		b = binary.AppendUvarint(b, uint64(n.Op()))
		b = append(b, byte(n.DType()), byte(len(n.Shape())))
		for _, d := range n.Shape() {
			b = binary.AppendUvarint(b, uint64(d))
		}
		b = binary.AppendUvarint(b, uint64(len(n.Inputs())))
		for _, in := range n.Inputs() {
			b = binary.AppendUvarint(b, uint64(in.ID()))
		}
		switch n.Op() {
		case tensor.OpVariable:
			b = binary.AppendUvarint(b, n.Variable().ID())
		case tensor.OpConst:
			b = append(b, n.Value().Bytes()...)
		}
		if n.StopsGradient() {
			b = append(b, 's')
		}
		if a := n.Attr(); a != nil {
			b = appendValue(b, reflect.ValueOf(a))
		}
		b = append(b, ';')
	}
	for _, o := range outs {
		b = binary.AppendUvarint(b, uint64(o.ID()))
	}
	return b
}

// appendValue encodes an attribute value: numbers, booleans, strings, and slices,
// arrays and structs of them.
func appendValue(b []byte, v reflect.Value) []byte {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return append(b, 1)
		}
		return append(b, 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return binary.AppendUvarint(b, v.Uint())
	case reflect.Float32, reflect.Float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float()))
	case reflect.String:
		b = binary.AppendUvarint(b, uint64(v.Len()))
		return append(b, v.String()...)
	case reflect.Slice, reflect.Array:
		b = binary.AppendUvarint(b, uint64(v.Len()))
		for i := 0; i < v.Len(); i++ {
			b = appendValue(b, v.Index(i))
		}
		return b
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			b = appendValue(b, v.Field(i))
		}
		return b
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return append(b, 0)
		}
		return appendValue(append(b, 1), v.Elem())
	}
	panic(fmt.Sprintf("ag: cannot encode an attribute of kind %v", v.Kind()))
}

// CacheStats counts the trace cache's hits and misses and the programs it holds.
type CacheStats struct {
	Hits, Misses, Programs int
}

// CacheStats reports how often runs found their trace already compiled.
func (t *Tape) CacheStats() CacheStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return CacheStats{Hits: t.cache.hits, Misses: t.cache.misses, Programs: len(t.cache.byKey)}
}
