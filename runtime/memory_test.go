package runtime

import (
	"math"
	"testing"
)

// TestFormatBytes checks the signed form against the unsigned formatter it wraps.
func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		b    int64
		want string
	}{
		{0, "0 B"},
		{512, "512 B"},
		{-512, "-512 B"},
		{1536, "1.5 KiB"},
		{-1536, "-1.5 KiB"},
		{12 << 20, "12.0 MiB"},
		{math.MaxInt64, "8.0 EiB"},
		{math.MinInt64, "-8.0 EiB"},
	} {
		if got := FormatBytes(tc.b); got != tc.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
