package kernel

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/gml-dev/gml/kernel/wire"
)

// execute runs the code of an execute_request and answers it, between status busy and
// idle. An executor that can (Starter) begins the cell before busy is published. After
// a failure with stop_on_error, the execute requests already queued behind it are
// aborted before idle; after idle, which front ends wait for, the cell goes into the
// history.
func (k *Kernel) execute(ctx context.Context, m *wire.Message) {
	req := wire.DefaultExecuteRequest()
	if err := m.DecodeContent(&req); err != nil {
		idle := k.busy(m)
		k.badRequest(k.ch.Shell, m, err)
		idle()
		return
	}
	if req.Silent {
		req.StoreHistory = false
	}
	k.mu.Lock()
	if req.StoreHistory {
		k.count++
	}
	count := k.count
	cellCtx, cancel := context.WithCancel(ctx)
	k.cancelCell = cancel
	k.mu.Unlock()

	k.exec.Start(req.Code)
	idle := k.busy(m)
	if !req.Silent {
		k.publish(m, "execute_input", wire.ExecuteInput{Code: req.Code, ExecutionCount: count})
	}
	pub := &cellPublisher{k: k, parent: m, ctx: cellCtx, silent: req.Silent, allowStdin: req.AllowStdin}
	res := k.run(cellCtx, req.Code, pub)

	k.mu.Lock()
	k.cancelCell = nil
	k.mu.Unlock()
	cancel()

	reply := wire.ExecuteReply{Status: "ok", ExecutionCount: count, UserExpressions: map[string]any{}}
	var output any
	if res.Err != nil {
		e := &wire.Error{EName: res.Err.Name, EValue: res.Err.Value, Traceback: res.Err.Traceback}
		if e.Traceback == nil {
			e.Traceback = []string{e.EName + ": " + e.EValue}
		}
		if !req.Silent {
			k.publish(m, "error", e)
		}
		reply.Status, reply.Error = "error", e
	} else if res.Data != nil {
		if !req.Silent {
			md := res.Metadata
			if md == nil {
				md = map[string]any{}
			}
			k.publish(m, "execute_result", wire.ExecuteResult{ExecutionCount: count, Data: res.Data, Metadata: md})
		}
		if text, ok := res.Data["text/plain"].(string); ok {
			output = text
		}
	}
	if res.Err == nil && len(req.UserExpressions) > 0 {
		reply.UserExpressions = k.userExpressions(ctx, req.UserExpressions)
	}
	k.reply(k.ch.Shell, m, "execute_reply", reply)
	// Abort before idle: a client that waits for idle and then sends its next cell must
	// not see that cell aborted.
	if res.Err != nil && req.StopOnError {
		k.abortQueued(ctx)
	}
	idle()
	if req.StoreHistory {
		k.history.Add(count, req.Code, output)
	}
}

// userExpressions evaluates the user_expressions of an execute_request after its cell
// succeeded, publishing nothing, and returns the protocol's result for each name: the
// value's MIME bundle with status "ok", or the error (as ipykernel does).
func (k *Kernel) userExpressions(ctx context.Context, exprs map[string]any) map[string]any {
	out := make(map[string]any, len(exprs))
	for name, v := range exprs {
		code, ok := v.(string)
		if !ok {
			msg := fmt.Sprintf("user expression %q is a %T, not a string of code", name, v)
			out[name] = map[string]any{"status": "error", "ename": "TypeError", "evalue": msg, "traceback": []string{"TypeError: " + msg}}
			continue
		}
		res := k.run(ctx, code, quietPublisher{})
		if res.Err != nil {
			tb := res.Err.Traceback
			if tb == nil {
				tb = []string{res.Err.Name + ": " + res.Err.Value}
			}
			out[name] = map[string]any{"status": "error", "ename": res.Err.Name, "evalue": res.Err.Value, "traceback": tb}
			continue
		}
		data, md := res.Data, res.Metadata
		if data == nil {
			data = map[string]any{}
		}
		if md == nil {
			md = map[string]any{}
		}
		out[name] = map[string]any{"status": "ok", "data": data, "metadata": md}
	}
	return out
}

// quietPublisher drops what a user expression prints or displays; an expression has no
// cell output to put it in.
type quietPublisher struct{}

func (quietPublisher) Stream(name, text string)                                             {}
func (quietPublisher) Display(data, metadata map[string]any, displayID string, update bool) {}
func (quietPublisher) ClearOutput(wait bool)                                                {}
func (quietPublisher) Input(prompt string, password bool) (string, error) {
	return "", errors.New("input is not available to user expressions")
}

// run calls the executor and turns a panic that escapes it into the cell's error, so a
// fault in the executor costs one cell, not the kernel.
func (k *Kernel) run(ctx context.Context, code string, pub Publisher) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			k.log.Printf("executor panic: %v\n%s", p, debug.Stack())
			msg := fmt.Sprint(p)
			res = Result{Err: &CellError{Name: "KernelPanic", Value: msg,
				Traceback: []string{"KernelPanic: " + msg, "the kernel recovered; its state may be incomplete"}}}
		}
	}()
	return k.exec.Execute(ctx, code, pub)
}

// abortQueued answers every execute_request already waiting in the shell queue with
// status "aborted" (as ipykernel does after an error with stop_on_error); other
// queued requests are handled normally, in order.
func (k *Kernel) abortQueued(ctx context.Context) {
	for {
		select {
		case m := <-k.shellQueue:
			if m.Header.MsgType != "execute_request" {
				k.handleShell(ctx, m)
				continue
			}
			idle := k.busy(m)
			k.mu.Lock()
			count := k.count
			k.mu.Unlock()
			k.reply(k.ch.Shell, m, "execute_reply", wire.ExecuteReply{Status: "aborted", ExecutionCount: count,
				UserExpressions: map[string]any{}})
			idle()
		default:
			return
		}
	}
}

// cellPublisher sends one cell's output to IOPub as children of its execute_request,
// and asks for input on stdin.
type cellPublisher struct {
	k          *Kernel
	parent     *wire.Message
	ctx        context.Context
	silent     bool
	allowStdin bool
}

func (p *cellPublisher) Stream(name, text string) {
	if p.silent || text == "" {
		return
	}
	if name != "stdout" && name != "stderr" {
		name = "stdout"
	}
	p.k.publish(p.parent, "stream", wire.Stream{Name: name, Text: text})
}

func (p *cellPublisher) Display(data, metadata map[string]any, displayID string, update bool) {
	if p.silent {
		return
	}
	if metadata == nil {
		metadata = map[string]any{}
	}
	transient := map[string]any{}
	if displayID != "" {
		transient["display_id"] = displayID
	}
	msgType := "display_data"
	if update && displayID != "" {
		msgType = "update_display_data"
	}
	p.k.publish(p.parent, msgType, wire.DisplayData{Data: data, Metadata: metadata, Transient: transient})
}

func (p *cellPublisher) ClearOutput(wait bool) {
	if p.silent {
		return
	}
	p.k.publish(p.parent, "clear_output", wire.ClearOutput{Wait: wait})
}

// ErrNoStdin is returned by Input when the front end did not allow stdin for the cell.
var ErrNoStdin = errors.New("input is not available: the front end does not accept input requests for this cell (allow_stdin is false)")

// Input sends input_request on stdin to the front end that sent the cell and waits for
// its input_reply, or for the cell to be interrupted.
func (p *cellPublisher) Input(prompt string, password bool) (string, error) {
	if !p.allowStdin {
		return "", ErrNoStdin
	}
	m, err := p.parent.Child("input_request", wire.InputRequest{Prompt: prompt, Password: password})
	if err != nil {
		return "", err
	}
	// Drop replies to earlier, abandoned requests.
	for len(p.k.inputReplies) > 0 {
		<-p.k.inputReplies
	}
	if err := p.k.ch.Stdin.Send(m); err != nil {
		return "", fmt.Errorf("asking for input: %w", err)
	}
	for {
		select {
		case r := <-p.k.inputReplies:
			if r.ParentHeader.MsgID != "" && r.ParentHeader.MsgID != m.Header.MsgID {
				continue
			}
			var rep wire.InputReply
			if err := r.DecodeContent(&rep); err != nil {
				return "", err
			}
			return rep.Value, nil
		case <-p.ctx.Done():
			return "", fmt.Errorf("input interrupted: %w", p.ctx.Err())
		}
	}
}
