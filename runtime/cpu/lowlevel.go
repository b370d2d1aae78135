package cpu

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/gml-dev/gml/runtime"
)

// The CPU backend's optional abilities (runtime/abilities.go): its buffers are host
// memory, so transfers at offsets, fills and copies are plain copies, and every buffer
// is host-visible. It has no asynchronous transfers: there is no second engine to
// overlap with, and the runtime runs such requests synchronously.

// MemoryInfo returns the machine's available memory (MemAvailable) and its total.
func (c *Backend) MemoryInfo() (free, total int64) {
	total = totalMemory()
	free = total
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 2 && fields[0] == "MemAvailable:" {
				kb, _ := strconv.ParseInt(fields[1], 10, 64)
				free = kb * 1024
				break
			}
		}
	}
	return free, total
}

// bufferRange returns bytes [offset, offset+n) of a CPU buffer, or an error naming the
// overrun or the freed buffer.
func bufferRange(b runtime.Buffer, offset, n int64, what string) ([]byte, error) {
	data, err := hostBytes(b)
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, fmt.Errorf("cpu: %s on a freed buffer", what)
	}
	if offset < 0 || n < 0 || offset+n > int64(len(data)) {
		return nil, fmt.Errorf("cpu: %s of %d bytes at offset %d overruns a %d-byte buffer", what, n, offset, len(data))
	}
	return data[offset : offset+n], nil
}

// UploadAt copies src into b at offset.
func (c *Backend) UploadAt(b runtime.Buffer, offset int64, src []byte) error {
	dst, err := bufferRange(b, offset, int64(len(src)), "upload")
	if err != nil {
		return err
	}
	copy(dst, src)
	return nil
}

// DownloadAt copies b's bytes from offset into dst.
func (c *Backend) DownloadAt(b runtime.Buffer, offset int64, dst []byte) error {
	src, err := bufferRange(b, offset, int64(len(dst)), "download")
	if err != nil {
		return err
	}
	copy(dst, src)
	return nil
}

// Fill repeats the 4-byte pattern (little-endian) over size bytes at offset.
func (c *Backend) Fill(b runtime.Buffer, offset, size int64, pattern uint32) error {
	if offset%4 != 0 || size%4 != 0 {
		return fmt.Errorf("cpu: fill of %d bytes at offset %d: both must be multiples of 4", size, offset)
	}
	dst, err := bufferRange(b, offset, size, "fill")
	if err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	binary.LittleEndian.PutUint32(dst, pattern)
	for filled := 4; filled < len(dst); filled *= 2 {
		copy(dst[filled:], dst[:filled])
	}
	return nil
}

// Copy copies size bytes of src at srcOffset into dst at dstOffset.
func (c *Backend) Copy(dst runtime.Buffer, dstOffset int64, src runtime.Buffer, srcOffset, size int64) error {
	to, err := bufferRange(dst, dstOffset, size, "copy")
	if err != nil {
		return err
	}
	from, err := bufferRange(src, srcOffset, size, "copy")
	if err != nil {
		return err
	}
	copy(to, from)
	return nil
}

// HostVisible reports true for every CPU buffer: it is host memory.
func (c *Backend) HostVisible(b runtime.Buffer) bool {
	_, err := hostBytes(b)
	return err == nil
}
