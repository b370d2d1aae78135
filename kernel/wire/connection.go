package wire

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// ConnectionInfo is the content of a Jupyter connection file: where the five sockets
// listen and the key that signs every message.
type ConnectionInfo struct {
	Transport       string `json:"transport"` // "tcp" or "ipc"
	IP              string `json:"ip"`        // an address for tcp, a path prefix for ipc
	ShellPort       int    `json:"shell_port"`
	ControlPort     int    `json:"control_port"`
	StdinPort       int    `json:"stdin_port"`
	IOPubPort       int    `json:"iopub_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`
	SignatureScheme string `json:"signature_scheme"`
	KernelName      string `json:"kernel_name,omitempty"`
}

// ReadConnectionFile reads and checks a connection file written by a Jupyter front end.
func ReadConnectionFile(path string) (ConnectionInfo, error) {
	var info ConnectionInfo
	data, err := os.ReadFile(path)
	if err != nil {
		return info, fmt.Errorf("reading connection file: %w", err)
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("connection file %s is not valid JSON: %w", path, err)
	}
	if err := info.Validate(); err != nil {
		return info, fmt.Errorf("connection file %s: %w", path, err)
	}
	return info, nil
}

// WriteFile writes info as a connection file readable only by its owner.
func (info ConnectionInfo) WriteFile(path string) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// Validate reports what is wrong with info: an unknown transport, a missing address or
// port, or a signature scheme other than hmac-sha256.
func (info *ConnectionInfo) Validate() error {
	if info.Transport == "" {
		info.Transport = "tcp"
	}
	if info.Transport != "tcp" && info.Transport != "ipc" {
		return fmt.Errorf("transport %q is not supported (want tcp or ipc)", info.Transport)
	}
	if info.IP == "" {
		return fmt.Errorf("no ip given")
	}
	if info.Key != "" && info.SignatureScheme != "hmac-sha256" {
		return fmt.Errorf("signature_scheme %q is not supported (want hmac-sha256)", info.SignatureScheme)
	}
	for name, port := range map[string]int{"shell_port": info.ShellPort, "control_port": info.ControlPort,
		"stdin_port": info.StdinPort, "iopub_port": info.IOPubPort, "hb_port": info.HBPort} {
		if port <= 0 || port > 65535 {
			return fmt.Errorf("%s %d is not a valid port", name, port)
		}
	}
	return nil
}

// Endpoint returns the ZeroMQ endpoint of the socket on port: tcp://IP:PORT, or for ipc
// the Jupyter convention ipc://IP-PORT, where IP is a file path prefix.
func (info ConnectionInfo) Endpoint(port int) string {
	if info.Transport == "ipc" {
		return fmt.Sprintf("ipc://%s-%d", info.IP, port)
	}
	ip := info.IP
	if strings.Contains(ip, ":") && !strings.HasPrefix(ip, "[") {
		ip = "[" + ip + "]"
	}
	return fmt.Sprintf("tcp://%s:%d", ip, port)
}
