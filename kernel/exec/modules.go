package exec

func (i *Interp) magicGoGet(m *magicCall) Result {
	return Result{Err: magicError("%go get: not yet")}
}

func (i *Interp) magicGoCell(m *magicCall) Result {
	return Result{Err: magicError("%%go: not yet")}
}
