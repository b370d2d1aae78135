package kernel

import (
	"github.com/gml-dev/gml/kernel/wire"
)

// handleControl answers one control request. It runs on the control reader's goroutine,
// so it is answered while a cell runs on the shell worker.
func (k *Kernel) handleControl(m *wire.Message) {
	idle := k.busy(m)
	c := k.ch.Control
	switch m.Header.MsgType {
	case "interrupt_request":
		k.interrupt()
		k.reply(c, m, "interrupt_reply", wire.StatusReply{Status: "ok"})
	case "shutdown_request":
		restart := k.shutdown(c, m)
		idle()
		k.finish(restart)
		return
	case "kernel_info_request":
		k.reply(c, m, "kernel_info_reply", k.kernelInfo())
	default:
		k.log.Printf("control: ignoring message type %q", m.Header.MsgType)
	}
	idle()
}

// shutdown answers a shutdown_request on s and on IOPub and stops the running cell; the
// caller then ends Run with finish. It returns whether a restart was asked for. With
// restart set the process still exits: the front end starts a new one.
func (k *Kernel) shutdown(s *wire.Socket, m *wire.Message) (restart bool) {
	var req wire.ShutdownRequest
	if err := m.DecodeContent(&req); err != nil {
		k.log.Printf("%v", err)
	}
	rep := wire.ShutdownReply{Status: "ok", Restart: req.Restart}
	k.reply(s, m, "shutdown_reply", rep)
	k.publish(m, "shutdown_reply", rep)
	k.interrupt()
	return req.Restart
}
