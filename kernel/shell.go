package kernel

import (
	"context"
	"runtime"
	"strings"

	"github.com/gml-dev/gml/kernel/wire"
)

// handleShell answers one shell request, with status busy before and idle after.
func (k *Kernel) handleShell(ctx context.Context, m *wire.Message) {
	if m.Header.MsgType == "execute_request" {
		k.execute(ctx, m) // it publishes busy itself, once the cell has started
		return
	}
	idle := k.busy(m)
	sh := k.ch.Shell
	switch m.Header.MsgType {
	case "kernel_info_request":
		k.reply(sh, m, "kernel_info_reply", k.kernelInfo())
	case "complete_request":
		k.complete(m)
	case "inspect_request":
		k.inspect(m)
	case "is_complete_request":
		k.isComplete(m)
	case "history_request":
		k.historyReply(m)
	case "comm_info_request":
		k.reply(sh, m, "comm_info_reply", wire.CommInfoReply{Status: "ok", Comms: map[string]any{}})
	case "comm_open":
		k.refuseComm(m)
	case "comm_msg", "comm_close":
		// No comm targets exist, so there is nothing to deliver these to.
	case "shutdown_request":
		restart := k.shutdown(sh, m)
		idle()
		k.finish(restart)
		return
	default:
		k.log.Printf("shell: ignoring unknown message type %q", m.Header.MsgType)
	}
	idle()
}

// kernelInfo describes the kernel and its language.
func (k *Kernel) kernelInfo() wire.KernelInfoReply {
	goVersion := strings.TrimPrefix(runtime.Version(), "go")
	return wire.KernelInfoReply{
		Status:                "ok",
		ProtocolVersion:       wire.ProtocolVersion,
		Implementation:        "gml",
		ImplementationVersion: k.cfg.Version,
		LanguageInfo: wire.LanguageInfo{
			Name:              "go",
			Version:           goVersion,
			MIMEType:          "text/x-go",
			FileExtension:     ".go",
			PygmentsLexer:     "go",
			CodeMirrorMode:    "go",
			NBConvertExporter: "script",
		},
		Banner: "gml " + k.cfg.Version + ": Go " + goVersion + " cells, interpreted by yaegi, with tensors, nn and ag pre-imported",
		HelpLinks: []wire.HelpLink{
			{Text: "gml", URL: "https://github.com/gml-dev/gml"},
			{Text: "Go documentation", URL: "https://go.dev/doc/"},
			{Text: "Go standard library", URL: "https://pkg.go.dev/std"},
			{Text: "gonum", URL: "https://pkg.go.dev/gonum.org/v1/gonum"},
		},
	}
}

func (k *Kernel) complete(m *wire.Message) {
	var req wire.CompleteRequest
	if err := m.DecodeContent(&req); err != nil {
		k.badRequest(k.ch.Shell, m, err)
		return
	}
	matches, start, end := k.exec.Complete(req.Code, req.CursorPos)
	if matches == nil {
		matches = []string{}
	}
	k.reply(k.ch.Shell, m, "complete_reply", wire.CompleteReply{Status: "ok", Matches: matches,
		CursorStart: start, CursorEnd: end, Metadata: map[string]any{}})
}

func (k *Kernel) inspect(m *wire.Message) {
	var req wire.InspectRequest
	if err := m.DecodeContent(&req); err != nil {
		k.badRequest(k.ch.Shell, m, err)
		return
	}
	data, found := k.exec.Inspect(req.Code, req.CursorPos, req.DetailLevel)
	if data == nil {
		data = map[string]any{}
	}
	k.reply(k.ch.Shell, m, "inspect_reply", wire.InspectReply{Status: "ok", Found: found, Data: data,
		Metadata: map[string]any{}})
}

func (k *Kernel) isComplete(m *wire.Message) {
	var req wire.IsCompleteRequest
	if err := m.DecodeContent(&req); err != nil {
		k.badRequest(k.ch.Shell, m, err)
		return
	}
	status, indent := k.exec.IsComplete(req.Code)
	k.reply(k.ch.Shell, m, "is_complete_reply", wire.IsCompleteReply{Status: status, Indent: indent})
}

func (k *Kernel) historyReply(m *wire.Message) {
	req := wire.HistoryRequest{}
	if err := m.DecodeContent(&req); err != nil {
		k.badRequest(k.ch.Shell, m, err)
		return
	}
	entries, err := k.history.Query(req)
	if err != nil {
		k.log.Printf("history_request: %v", err)
	}
	k.reply(k.ch.Shell, m, "history_reply", wire.HistoryReply{Status: "ok", History: entries})
}

// badRequest answers a request whose content cannot be decoded with a reply of status
// "error", so the front end does not wait for an answer that never comes.
func (k *Kernel) badRequest(s *wire.Socket, m *wire.Message, err error) {
	k.log.Printf("%v", err)
	replyType := strings.TrimSuffix(m.Header.MsgType, "_request") + "_reply"
	k.reply(s, m, replyType, struct {
		Status string `json:"status"`
		wire.Error
	}{"error", wire.Error{EName: "BadRequest", EValue: err.Error(), Traceback: []string{"BadRequest: " + err.Error()}}})
}

// refuseComm answers comm_open with comm_close: the kernel registers no comm targets.
func (k *Kernel) refuseComm(m *wire.Message) {
	var req wire.CommOpen
	if err := m.DecodeContent(&req); err != nil {
		k.log.Printf("%v", err)
		return
	}
	k.log.Printf("comm_open for unknown target %q: closing it", req.TargetName)
	k.publish(m, "comm_close", wire.CommClose{CommID: req.CommID, Data: map[string]any{}})
}
