package gemm

import (
	"fmt"
	"os"
	"strconv"
)

// Sweep knobs (temporary: read once for a host sweep, removed once settled).
//   - GML_GEMM_BLOCKS=mc,kc,nc overrides the avx512 shape's blocking.
//   - GML_GEMM_GRID=cols keeps row blocks of mc where A is shared and splits the columns.
//   - GML_GEMM_ITEMS=N is the items per worker of that grid (itemsPerWorker otherwise).
//   - GML_GEMM_DYNPACK=N packs a shared step in N chunks a worker, taken as workers come.
//   - GML_GEMM_PACKB=N packs a plain B N columns (a multiple of 16) at a time, 0 whole rows.
//   - GML_GEMM_PFA=N prefetches A N steps of k ahead in the avx512 kernel; GML_GEMM_NOFAST=1 turns its packed path off.
var (
	knobGridCols  = os.Getenv("GML_GEMM_GRID") == "cols"
	knobPackChunk = envInt("GML_GEMM_PACKB")
	prefetchA     = int64(envInt("GML_GEMM_PFA"))
	fastPacked    = int64(1 - envInt("GML_GEMM_NOFAST"))
	knobItems     = envInt("GML_GEMM_ITEMS")
	knobDynPack   = envInt("GML_GEMM_DYNPACK")
)

func envInt(name string) int {
	v, _ := strconv.Atoi(os.Getenv(name))
	return v
}

func init() {
	if s := os.Getenv("GML_GEMM_BLOCKS"); s != "" {
		var t tuning
		if _, err := fmt.Sscanf(s, "%d,%d,%d", &t.mc, &t.kc, &t.nc); err == nil {
			for i := range shapes {
				if shapes[i].name == shapeAVX512 {
					shapes[i].mc, shapes[i].kc, shapes[i].nc = t.mc, t.kc, t.nc
				}
			}
		}
	}
}
