package onnx

import (
	"fmt"
	"strconv"

	"github.com/gml-dev/gml/onnx/internal/onnxpb"
	"github.com/gml-dev/gml/tensor"
	"google.golang.org/protobuf/proto"
)

// unmarshal decodes a protobuf message, dropping fields gml does not read.
func unmarshal(data []byte, m proto.Message) error {
	return proto.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, m)
}

// nodeDef is one node of the flattened graph: model-local functions are inlined, every
// node knows the opset version it binds to, and its attributes are indexed by name.
type nodeDef struct {
	name    string // the node's name, or "OpType#index" when it has none
	op      string
	domain  string
	opset   int
	inputs  []string // "" is an omitted optional input
	outputs []string
	attrs   map[string]*onnxpb.AttributeProto
}

// where names the node in errors: `node "conv1" (Conv, opset 17)`.
func (n *nodeDef) where() string {
	op := n.op
	if n.domain != "" && n.domain != "ai.onnx" {
		op = n.domain + "." + op
	}
	return fmt.Sprintf("node %q (%s, opset %d)", n.name, op, n.opset)
}

// valueInfo is a graph input or output as the file declares it.
type valueInfo struct {
	name  string
	dtype DataType
	dims  []Dim
	known bool // the file gives a shape
}

// Dim is one dimension of a declared input or output shape: a size, or a symbolic name
// (Param) bound when the model runs. A dimension with neither is unknown.
type Dim struct {
	Value int
	Param string
}

// String is the size, the symbolic name, or "?".
func (d Dim) String() string {
	switch {
	case d.Param != "":
		return d.Param
	case d.Value >= 0:
		return strconv.Itoa(d.Value)
	}
	return "?"
}

// graphDef is a parsed, flattened main graph.
type graphDef struct {
	nodes   []*nodeDef
	inputs  []valueInfo // graph inputs without an initializer
	outputs []valueInfo
	inits   map[string]*Array
	defs    map[string]bool // initializers that are also graph inputs (overridable defaults)
	lastUse map[string]int  // value name -> index of the last node reading it (len(nodes) for outputs)
}

// maxInlineDepth bounds nested function calls, so a function calling itself fails
// cleanly.
const maxInlineDepth = 32

// parseGraph flattens the main graph of m. dir is where external data lives.
func parseGraph(m *onnxpb.ModelProto, dir string) (*graphDef, error) {
	g := m.GetGraph()
	if g == nil {
		return nil, fmt.Errorf("onnx: the model has no graph")
	}
	opsets := map[string]int{}
	for _, o := range m.OpsetImport {
		opsets[normDomain(o.GetDomain())] = int(o.GetVersion())
	}
	if _, ok := opsets[""]; !ok && m.GetIrVersion() < 3 {
		opsets[""] = 1
	}
	funcs := map[string]*onnxpb.FunctionProto{}
	for _, f := range m.Functions {
		funcs[normDomain(f.GetDomain())+"/"+f.GetName()] = f
	}
	gd := &graphDef{inits: map[string]*Array{}, defs: map[string]bool{}, lastUse: map[string]int{}}
	for _, tp := range g.Initializer {
		a, err := decodeTensor(tp, dir)
		if err != nil {
			return nil, fmt.Errorf("onnx: initializer: %w", err)
		}
		gd.inits[tp.GetName()] = a
	}
	if len(g.SparseInitializer) > 0 {
		return nil, fmt.Errorf("onnx: sparse initializers are %w (%d in the graph)", ErrUnsupported, len(g.SparseInitializer))
	}
	for _, vi := range g.Input {
		info, err := parseValueInfo(vi)
		if err != nil {
			return nil, fmt.Errorf("onnx: graph input: %w", err)
		}
		if _, ok := gd.inits[info.name]; ok {
			gd.defs[info.name] = true
			continue
		}
		gd.inputs = append(gd.inputs, info)
	}
	for _, vi := range g.Output {
		info, err := parseValueInfo(vi)
		if err != nil {
			return nil, fmt.Errorf("onnx: graph output: %w", err)
		}
		gd.outputs = append(gd.outputs, info)
	}
	fl := &flattener{funcs: funcs, out: gd}
	if err := fl.add(g.Node, opsets, nil, "", 0); err != nil {
		return nil, err
	}
	for i, n := range gd.nodes {
		for _, in := range n.inputs {
			if in != "" {
				gd.lastUse[in] = i
			}
		}
	}
	for _, o := range gd.outputs {
		gd.lastUse[o.name] = len(gd.nodes)
	}
	return gd, nil
}

// normDomain maps the default domain's two spellings to "".
func normDomain(d string) string {
	if d == "ai.onnx" {
		return ""
	}
	return d
}

// parseValueInfo reads a tensor-typed value declaration.
func parseValueInfo(vi *onnxpb.ValueInfoProto) (valueInfo, error) {
	info := valueInfo{name: vi.GetName()}
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		if vi.GetType() == nil {
			return info, fmt.Errorf("%q has no type", info.name)
		}
		return info, fmt.Errorf("%q is not a tensor (sequences, maps and optionals are %w)", info.name, ErrUnsupported)
	}
	info.dtype = DataType(tt.GetElemType())
	if !info.dtype.Supported() {
		return info, fmt.Errorf("%q has element type %v, which is %w", info.name, info.dtype, ErrUnsupported)
	}
	if sh := tt.GetShape(); sh != nil {
		info.known = true
		for _, d := range sh.Dim {
			switch {
			case d.GetDimParam() != "":
				info.dims = append(info.dims, Dim{Value: -1, Param: d.GetDimParam()})
			case d.Value != nil && d.GetDimValue() >= 0 && d.GetDimValue() <= int64(maxElements):
				info.dims = append(info.dims, Dim{Value: int(d.GetDimValue())})
			case d.Value != nil:
				return info, fmt.Errorf("%q has dimension %d", info.name, d.GetDimValue())
			default:
				info.dims = append(info.dims, Dim{Value: -1})
			}
		}
	}
	return info, nil
}

// staticShape returns the declared shape when every dimension is a number.
func (v valueInfo) staticShape() (tensor.Shape, bool) {
	if !v.known {
		return nil, false
	}
	s := make(tensor.Shape, len(v.dims))
	for i, d := range v.dims {
		if d.Value < 0 {
			return nil, false
		}
		s[i] = d.Value
	}
	return s, true
}

// flattener inlines model-local functions into one list of nodes.
type flattener struct {
	funcs map[string]*onnxpb.FunctionProto
	out   *graphDef
	calls int
}

// add appends nodes, renaming values through scope (a function's; nil at the top level),
// which also binds attribute references to the calling node's attributes.
func (f *flattener) add(nodes []*onnxpb.NodeProto, opsets map[string]int, scope *funcScope, prefix string, depth int) error {
	for _, np := range nodes {
		dom := normDomain(np.GetDomain())
		name := np.GetName()
		if name == "" {
			name = fmt.Sprintf("%s#%d", np.GetOpType(), len(f.out.nodes))
		}
		name = prefix + name
		if fn, ok := f.funcs[dom+"/"+np.GetOpType()]; ok {
			if depth >= maxInlineDepth {
				return fmt.Errorf("onnx: node %q calls function %q more than %d levels deep", name, np.GetOpType(), maxInlineDepth)
			}
			if err := f.inline(np, fn, scope, name, depth, opsets); err != nil {
				return err
			}
			continue
		}
		n := &nodeDef{name: name, op: np.GetOpType(), domain: dom, attrs: map[string]*onnxpb.AttributeProto{}}
		v, ok := opsets[dom]
		if !ok {
			return fmt.Errorf("onnx: node %q (%s): its domain %q is not imported by the model", name, np.GetOpType(), np.GetDomain())
		}
		n.opset = v
		for _, a := range np.Attribute {
			if ref := a.GetRefAttrName(); ref != "" {
				if scope == nil {
					return fmt.Errorf("onnx: %s: attribute %q refers to %q outside a function", n.where(), a.GetName(), ref)
				}
				bound, ok := scope.attrs[ref]
				if !ok {
					continue // not given by the caller and no default: the attribute is absent
				}
				b := proto.Clone(bound).(*onnxpb.AttributeProto)
				b.Name = proto.String(a.GetName())
				a = b
			}
			if a.G != nil || len(a.Graphs) > 0 {
				return fmt.Errorf("onnx: %s: attribute %q holds a subgraph; control flow (If, Loop, Scan) is %w", n.where(), a.GetName(), ErrUnsupported)
			}
			n.attrs[a.GetName()] = a
		}
		for _, in := range np.Input {
			n.inputs = append(n.inputs, scope.rename(in))
		}
		for _, out := range np.Output {
			n.outputs = append(n.outputs, scope.rename(out))
		}
		f.out.nodes = append(f.out.nodes, n)
	}
	return nil
}

// funcScope maps a function body's value names to the caller's, and its attribute
// names to the values bound at the call.
type funcScope struct {
	names  map[string]string
	prefix string
	attrs  map[string]*onnxpb.AttributeProto
}

// rename maps a value name into the enclosing graph ("" stays "": an omitted input).
func (s *funcScope) rename(name string) string {
	if s == nil || name == "" {
		return name
	}
	if r, ok := s.names[name]; ok {
		return r
	}
	return s.prefix + name
}

// inline expands a call to a model-local function.
func (f *flattener) inline(call *onnxpb.NodeProto, fn *onnxpb.FunctionProto, outer *funcScope, name string, depth int, callerOpsets map[string]int) error {
	f.calls++
	sc := &funcScope{names: map[string]string{}, prefix: fmt.Sprintf("%s/%d/", name, f.calls), attrs: map[string]*onnxpb.AttributeProto{}}
	for i, in := range fn.Input {
		actual := ""
		if i < len(call.Input) {
			actual = outer.rename(call.Input[i])
		}
		sc.names[in] = actual
	}
	for i, out := range fn.Output {
		actual := ""
		if i < len(call.Output) {
			actual = outer.rename(call.Output[i])
		}
		if actual == "" {
			actual = sc.prefix + out
		}
		sc.names[out] = actual
	}
	for _, a := range fn.AttributeProto {
		sc.attrs[a.GetName()] = a
	}
	for _, a := range call.Attribute {
		if ref := a.GetRefAttrName(); ref != "" {
			if outer == nil {
				continue
			}
			bound, ok := outer.attrs[ref]
			if !ok {
				continue
			}
			b := proto.Clone(bound).(*onnxpb.AttributeProto)
			b.Name = proto.String(a.GetName())
			a = b
		}
		sc.attrs[a.GetName()] = a
	}
	opsets := map[string]int{}
	for d, v := range callerOpsets {
		opsets[d] = v
	}
	for _, o := range fn.OpsetImport {
		opsets[normDomain(o.GetDomain())] = int(o.GetVersion())
	}
	return f.add(fn.Node, opsets, sc, name+"/", depth+1)
}
