package gstack

import (
	goruntime "runtime"
	"testing"
)

// recurse calls itself depth times and returns the stack used at the bottom.
func recurse(depth int) uintptr {
	var pad [256]byte
	if depth == 0 {
		return Used() + uintptr(pad[0])
	}
	return recurse(depth-1) + uintptr(pad[depth%256])
}

func TestUsedGrowsWithDepth(t *testing.T) {
	if goruntime.GOARCH != "amd64" && goruntime.GOARCH != "arm64" {
		if Used() != 0 {
			t.Fatal("Used is not 0 where the stack top is unknown")
		}
		t.Skip("the stack top is known on amd64 and arm64 only")
	}
	top := Used()
	if top == 0 || top > 64<<10 {
		t.Fatalf("Used() = %d at the top of a test goroutine", top)
	}
	// Deep enough that the stack is copied to larger ones on the way down.
	deep := recurse(10000)
	if deep < 10000*256 || deep > 10000*1024 {
		t.Errorf("Used() = %d after 10000 frames of at least 256 bytes", deep)
	}
	done := make(chan uintptr)
	go func() { done <- Used() }()
	if fresh := <-done; fresh == 0 || fresh > 8<<10 {
		t.Errorf("Used() = %d at the start of a new goroutine", fresh)
	}
}
