package gemm

import (
	"os"
	"strconv"
)

// Sweep knobs (temporary: read once for a host sweep, removed once settled).
//   - GML_GEMM_GRID=cols keeps row blocks of mc where A is shared and splits the columns.
//   - GML_GEMM_PACKB=N packs a plain B N columns (a multiple of 16) at a time, 0 whole rows.
//   - GML_GEMM_NOFAST=1 turns the avx512 kernel's four-step paths off.
var (
	knobGridCols  = os.Getenv("GML_GEMM_GRID") == "cols"
	knobPackChunk = envInt("GML_GEMM_PACKB")
	fastPacked    = int64(1 - envInt("GML_GEMM_NOFAST"))
)

func envInt(name string) int {
	v, _ := strconv.Atoi(os.Getenv(name))
	return v
}
