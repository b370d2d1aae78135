// Package wire implements the transport layer of the Jupyter messaging protocol (version
// 5.3): the connection file, the five ZeroMQ sockets over tcp and ipc, HMAC-SHA256 message
// signing, the multipart message format and typed structs for message contents.
//
// Decisions:
//   - Sockets come from github.com/go-zeromq/zmq4 (pure Go, no libzmq). Each Socket wraps
//     one zmq4 socket with a send mutex, because replies, IOPub output from cell
//     goroutines and stdin requests are sent from several goroutines.
//   - A Message keeps the raw bytes of the header it was decoded from, so that a reply's
//     parent_header is exactly the request's header, including fields this package does
//     not model (for example a front end's subshell_id).
//   - Verification happens in Decode: a message whose signature is missing or wrong is an
//     ErrSignature error and is never handed to the caller as a Message. The kernel drops
//     and logs it and keeps running (some Go kernels exit on one bad packet).
//   - An empty key in the connection file disables signing, as the protocol specifies;
//     any other signature_scheme than hmac-sha256 is refused when the file is read.
//   - The same types serve the kernel (Bind: ROUTER, PUB, REP) and the test and benchmark
//     clients (Dial: DEALER, SUB, REQ), so both sides speak through one implementation
//     of framing and signing.
package wire
