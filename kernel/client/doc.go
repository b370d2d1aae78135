// Package client is a small Jupyter front end in Go: it connects to a kernel's sockets,
// sends requests and collects each request's reply with the IOPub messages it caused. It
// also starts `gml kernel` processes on fresh local connections. The end-to-end tests in
// test/ and `gml bench kernel` drive the kernel through it over the real protocol.
//
// Messages are filed by the msg_id of their parent as they arrive, so requests may be
// awaited in any order and nothing that arrives early is lost.
package client
