package sysmem

import (
	"errors"
	"strings"
	"testing"
)

func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{1<<20 - 1, "1024.0 KiB"}, // below a unit's boundary the smaller unit stays
		{1 << 20, "1.0 MiB"},
		{1 << 30, "1.0 GiB"},
		{4<<30 + 1<<29, "4.5 GiB"},
		{1 << 40, "1.0 TiB"},
		{1 << 50, "1.0 PiB"},
		{1<<64 - 1, "16.0 EiB"},
	} {
		if got := FormatBytes(tc.n); got != tc.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestCheckAlloc(t *testing.T) {
	named := false
	what := func() string { named = true; return "make([]byte, 1099511627776)" }
	if err := CheckAlloc(checkFrom-1, what); err != nil || named {
		t.Errorf("a small size: %v (named: %v), want nil without naming it", err, named)
	}
	info, ok := Read()
	if !ok {
		t.Skip("no /proc/meminfo")
	}
	if info.Available == 0 || info.Available > info.Total {
		t.Errorf("Read() = %+v", info)
	}
	err := CheckAlloc(1<<60, what)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "cannot allocate 1.0 EiB for make([]byte, 1099511627776): only ") {
		t.Errorf("1 EiB: %v", err)
	}
}
