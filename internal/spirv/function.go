package spirv

// Func builds the body of one function. Instructions go into the current block;
// a block ends with a terminator (OpBranch, OpBranchConditional, OpReturn,
// OpUnreachable) and the next one begins with Label.
type Func struct {
	m       *Module
	id      ID
	header  []uint32 // OpFunction
	entry   ID       // label of the first block
	vars    []uint32 // Function-storage variables, hoisted to the entry block
	body    []uint32 // everything after the entry block's label and variables
	inBlock bool
	done    bool
}

// Function starts a function returning result with function type fnType and opens
// its entry block.
func (m *Module) Function(result, fnType ID) *Func {
	f := &Func{m: m, id: m.ID()}
	f.header = m.inst(OpFunction, uint32(result), uint32(f.id), FunctionControlNone, uint32(fnType))
	f.entry = m.ID()
	f.inBlock = true
	return f
}

// ID is the function's result id (for OpEntryPoint and OpFunctionCall).
func (f *Func) ID() ID { return f.id }

// Var declares a variable of type t in Function storage and returns a pointer to
// it. Vulkan requires such variables at the start of the entry block, wherever
// the caller declares them, so they are hoisted there.
func (f *Func) Var(t ID) ID {
	id := f.m.ID()
	ptr := f.m.Pointer(StorageFunction, t)
	f.vars = append(f.vars, f.m.inst(OpVariable, uint32(ptr), uint32(id), StorageFunction)...)
	return id
}

// terminator reports whether op ends a block (of those a compute shader can use;
// OpSwitch is not built here).
func terminator(op Op) bool {
	switch op {
	case OpBranch, OpBranchConditional, OpReturn, OpReturnValue, OpUnreachable:
		return true
	}
	return false
}

// Op emits an instruction that has no result id, with its operand words.
func (f *Func) Op(op Op, operands ...uint32) {
	if !f.inBlock {
		f.m.failf("spirv: instruction %d of function %d outside a block (missing Label)", op, f.id)
	}
	f.body = append(f.body, f.m.inst(op, operands...)...)
	if terminator(op) {
		f.inBlock = false
	}
}

// Res emits an instruction with result type t and a fresh result id, which it
// returns; operands follow the result id.
func (f *Func) Res(op Op, t ID, operands ...uint32) ID {
	id := f.m.ID()
	f.Op(op, append([]uint32{uint32(t), uint32(id)}, operands...)...)
	return id
}

// Label begins the block with label id. The previous block must have ended.
func (f *Func) Label(id ID) {
	if f.inBlock {
		f.m.failf("spirv: block %d begins before the previous block of function %d ended", id, f.id)
	}
	f.body = append(f.body, f.m.inst(OpLabel, uint32(id))...)
	f.inBlock = true
}

// Open reports whether the current block still accepts instructions (it has not
// been ended by a terminator).
func (f *Func) Open() bool { return f.inBlock }

// Load reads a value of type t through pointer ptr.
func (f *Func) Load(t, ptr ID) ID { return f.Res(OpLoad, t, uint32(ptr)) }

// Store writes v through pointer ptr.
func (f *Func) Store(ptr, v ID) { f.Op(OpStore, uint32(ptr), uint32(v)) }

// Branch ends the current block with an unconditional branch to target.
func (f *Func) Branch(target ID) { f.Op(OpBranch, uint32(target)) }

// If emits a structured selection: then runs in a block entered when cond is true.
func (f *Func) If(cond ID, then func()) { f.IfElse(cond, then, nil) }

// IfElse emits a structured selection with both arms; els may be nil. An arm that
// ends its own block (a return) does not branch to the merge block.
func (f *Func) IfElse(cond ID, then, els func()) {
	thenL, merge := f.m.ID(), f.m.ID()
	elseL := merge
	if els != nil {
		elseL = f.m.ID()
	}
	f.Op(OpSelectionMerge, uint32(merge), SelectionControlNone)
	f.Op(OpBranchConditional, uint32(cond), uint32(thenL), uint32(elseL))
	f.arm(thenL, merge, then)
	if els != nil {
		f.arm(elseL, merge, els)
	}
	f.Label(merge)
}

// arm emits one block (and whatever body nests in it) that ends by branching to
// merge unless body ended it.
func (f *Func) arm(label, merge ID, body func()) {
	f.Label(label)
	body()
	if f.inBlock {
		f.Branch(merge)
	}
}

// Loop emits a structured while loop with loop control ctl (LoopControlNone, ...):
// cond computes the condition in straight-line code at the top of each iteration,
// body runs while it holds (it may nest control flow), and cont runs in the
// continue block (the increment).
func (f *Func) Loop(ctl uint32, cond func() ID, body, cont func()) {
	header, check, bodyL, contL, merge := f.m.ID(), f.m.ID(), f.m.ID(), f.m.ID(), f.m.ID()
	f.Branch(header)
	f.Label(header)
	f.Op(OpLoopMerge, uint32(merge), uint32(contL), ctl)
	f.Branch(check)
	f.Label(check)
	c := cond()
	f.Op(OpBranchConditional, uint32(c), uint32(bodyL), uint32(merge))
	f.arm(bodyL, contL, body)
	f.Label(contL)
	cont()
	f.Branch(header)
	f.Label(merge)
}

// End closes the function (its last block must have ended) and adds it to the
// module.
func (f *Func) End() {
	if f.done {
		f.m.failf("spirv: function %d ended twice", f.id)
		return
	}
	if f.inBlock {
		f.m.failf("spirv: last block of function %d has no terminator", f.id)
	}
	f.done = true
	m := f.m
	m.functions = append(m.functions, f.header...)
	m.functions = append(m.functions, m.inst(OpLabel, uint32(f.entry))...)
	m.functions = append(m.functions, f.vars...)
	m.functions = append(m.functions, f.body...)
	m.functions = append(m.functions, m.inst(OpFunctionEnd)...)
}
