package pipeio

import (
	"syscall"
	"unicode/utf8"
	"unsafe"
)

// CompleteUTF8 returns the length of the longest prefix of b that does not end inside a
// multi-byte character. Invalid bytes count as complete: only a valid start of a
// character that its following bytes do not finish yet is held back.
func CompleteUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// Pending returns how many bytes wait unread in the pipe on fd, or 0 when the descriptor
// cannot say (it is closed, or a device such as /dev/null).
func Pending(fd int) int {
	var n int32
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	if errno != 0 {
		return 0
	}
	return int(n)
}
