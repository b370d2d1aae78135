package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestSignVerify(t *testing.T) {
	s := NewSigner("secret")
	parts := [][]byte{[]byte(`{"msg_id":"1"}`), []byte(`{}`), []byte(`{}`), []byte(`{"code":"1+1"}`)}
	sig := s.Sign(parts[0], parts[1], parts[2], parts[3])
	if len(sig) != 64 {
		t.Fatalf("signature length %d, want 64 hex digits", len(sig))
	}
	tests := []struct {
		name   string
		signer *Signer
		sig    []byte
		want   bool
	}{
		{"correct", s, sig, true},
		{"missing", s, []byte{}, false},
		{"wrong key", NewSigner("other"), sig, false},
		{"not hex", s, bytes.Repeat([]byte("z"), 64), false},
		{"truncated", s, sig[:62], false},
		{"unsigned connection", NewSigner(""), []byte("anything"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.signer.Verify(tc.sig, parts[0], parts[1], parts[2], parts[3]); got != tc.want {
				t.Errorf("Verify = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	s := NewSigner("k")
	req, err := NewMessage("execute_request", "sess", "user", ExecuteRequest{Code: "x := 1"})
	if err != nil {
		t.Fatal(err)
	}
	req.Identities = [][]byte{[]byte("client-id")}
	req.Buffers = [][]byte{[]byte("buf")}
	frames, err := req.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(frames, s)
	if err != nil {
		t.Fatal(err)
	}
	if got.Header != req.Header || string(got.Identities[0]) != "client-id" || string(got.Buffers[0]) != "buf" {
		t.Fatalf("round trip changed the message: %+v", got)
	}
	var c ExecuteRequest
	if err := got.DecodeContent(&c); err != nil || c.Code != "x := 1" {
		t.Fatalf("content %+v, err %v", c, err)
	}

	// A reply's parent header is the request's header frame, byte for byte, so fields this
	// package does not model survive.
	frames[3] = []byte(`{"msg_id":"m1","session":"s","username":"u","date":"d","msg_type":"execute_request","version":"5.3","subshell_id":"x"}`)
	frames[2] = s.Sign(frames[3], frames[4], frames[5], frames[6])
	got, err = Decode(frames, s)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := got.Child("execute_reply", ExecuteReply{Status: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := rep.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out[4], frames[3]) {
		t.Errorf("parent header %s, want the request header %s", out[4], frames[3])
	}
	if string(out[0]) != "client-id" {
		t.Errorf("reply addressed to %q, want client-id", out[0])
	}
}

func TestDecodeRejects(t *testing.T) {
	s := NewSigner("k")
	m, _ := NewMessage("kernel_info_request", "s", "u", struct{}{})
	good, _ := m.Encode(s)
	tamper := func(i int, v string) [][]byte {
		f := append([][]byte(nil), good...)
		f[i] = []byte(v)
		return f
	}
	tests := []struct {
		name   string
		frames [][]byte
		sig    bool // want ErrSignature
	}{
		{"no delimiter", [][]byte{[]byte("a"), []byte("b")}, false},
		{"too few frames", good[:4], false},
		{"bad signature", tamper(1, strings.Repeat("0", 64)), true},
		{"missing signature", tamper(1, ""), true},
		{"content changed", tamper(5, `{"x":1}`), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.frames, s)
			if err == nil {
				t.Fatal("Decode accepted a bad message")
			}
			if errors.Is(err, ErrSignature) != tc.sig {
				t.Errorf("error %v: signature error = %v, want %v", err, errors.Is(err, ErrSignature), tc.sig)
			}
		})
	}
}

func TestConnectionInfo(t *testing.T) {
	ok := ConnectionInfo{Transport: "tcp", IP: "127.0.0.1", ShellPort: 1, ControlPort: 2, StdinPort: 3,
		IOPubPort: 4, HBPort: 5, Key: "k", SignatureScheme: "hmac-sha256"}
	tests := []struct {
		name   string
		change func(*ConnectionInfo)
		errHas string
	}{
		{"valid", func(*ConnectionInfo) {}, ""},
		{"udp", func(c *ConnectionInfo) { c.Transport = "udp" }, "transport"},
		{"md5", func(c *ConnectionInfo) { c.SignatureScheme = "hmac-md5" }, "signature_scheme"},
		{"no port", func(c *ConnectionInfo) { c.HBPort = 0 }, "hb_port"},
		{"no ip", func(c *ConnectionInfo) { c.IP = "" }, "ip"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.change(&c)
			path := filepath.Join(t.TempDir(), "conn.json")
			if err := c.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			_, err := ReadConnectionFile(path)
			if tc.errHas == "" && err != nil || tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)) {
				t.Errorf("ReadConnectionFile error %v, want one mentioning %q", err, tc.errHas)
			}
		})
	}
	endpoints := []struct {
		info ConnectionInfo
		want string
	}{
		{ConnectionInfo{Transport: "tcp", IP: "127.0.0.1"}, "tcp://127.0.0.1:5555"},
		{ConnectionInfo{Transport: "tcp", IP: "::1"}, "tcp://[::1]:5555"},
		{ConnectionInfo{Transport: "ipc", IP: "/tmp/kernel-1"}, "ipc:///tmp/kernel-1-5555"},
	}
	for _, e := range endpoints {
		if got := e.info.Endpoint(5555); got != e.want {
			t.Errorf("Endpoint = %q, want %q", got, e.want)
		}
	}
}

func TestExecuteReplyJSON(t *testing.T) {
	tests := []struct {
		reply   ExecuteReply
		has     []string
		hasNone []string
	}{
		{ExecuteReply{Status: "ok", ExecutionCount: 3}, []string{`"status":"ok"`, `"execution_count":3`}, []string{"ename"}},
		{ExecuteReply{Status: "error", Error: &Error{EName: "E", EValue: "v", Traceback: []string{"t"}}},
			[]string{`"ename":"E"`, `"evalue":"v"`, `"traceback":["t"]`}, nil},
	}
	for _, tc := range tests {
		data, err := json.Marshal(tc.reply)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tc.has {
			if !strings.Contains(string(data), s) {
				t.Errorf("%s lacks %s", data, s)
			}
		}
		for _, s := range tc.hasNone {
			if strings.Contains(string(data), s) {
				t.Errorf("%s has %s", data, s)
			}
		}
	}
}
