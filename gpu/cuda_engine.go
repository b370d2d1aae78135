package gpu

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h"

#define CU(i) gml_cu[i]
#define LT(i) gml_lt[i]

typedef int (*cu_i)(int);
typedef int (*cu_p)(void *);
typedef int (*cu_pp)(void **);
typedef int (*cu_ppu)(void **, unsigned);
typedef int (*cu_pz)(void **, size_t);
typedef int (*cu_ppc)(void **, const void *);
typedef int (*cu_ppcc)(void **, void *, const void *);
typedef int (*cu_sem)(void *const *, const void *, unsigned, void *);
typedef int (*cu_pp2)(void *, void *);
typedef int (*cu_elapsed)(float *, void *, void *);
typedef int (*cu_v)(void);
typedef int (*cu_u)(unsigned);
typedef int (*cu_range)(int *, int *);
typedef int (*cu_stream_prio)(void **, unsigned, int);
typedef int (*lt_pp)(void **);
typedef int (*lt_p)(void *);
typedef int (*lt_desc_create)(void **, int, int);
typedef int (*lt_set)(void *, int, const void *, size_t);
typedef int (*lt_layout_create)(void **, int, uint64_t, uint64_t, int64_t);
typedef int (*lt_heuristic)(void *, void *, void *, void *, void *, void *, void *, int, void *, int *);
typedef int (*lt_matmul)(void *, void *, const void *, const void *, void *, const void *, void *,
	const void *, const void *, void *, void *, void *, const void *, void *, size_t, void *);

// gml_cu_engine is a CUDA stream with its cuBLASLt handle, workspace and the imported
// timeline semaphore, on one device.
typedef struct {
	int dev;
	void *stream, *lt, *ws, *sem;
	size_t wsSize;
	// Scheduling settings (priority.go): schedule is cudaSetDeviceFlags' flags or -1;
	// priority 0 the default stream priority, 1 the highest, 2 the lowest, 3 prioValue
	// clamped to the range. prioValue holds the priority the stream got.
	int schedule, priority, prioValue;
} gml_cu_engine;

// Where a start or a run failed, so Go can say which library's code an error is.
enum { AT_SET_DEVICE, AT_STREAM, AT_WORKSPACE, AT_SEMAPHORE, AT_HANDLE, AT_WAIT, AT_MATMUL, AT_SIGNAL, AT_EVENT, AT_SCRATCH, AT_SYNC,
	AT_DEVICE_FLAGS, AT_PRIORITY_RANGE };

static int gml_cu_start(gml_cu_engine *e, int semfd, size_t ws, int *at) {
	int err;
	*at = AT_SET_DEVICE;
	if ((err = ((cu_i)CU(CU_SET_DEVICE))(e->dev))) return err;
	*at = AT_DEVICE_FLAGS;
	if (e->schedule >= 0 && (err = ((cu_u)CU(CU_SET_DEVICE_FLAGS))((unsigned)e->schedule))) return err;
	*at = AT_PRIORITY_RANGE;
	int least = 0, greatest = 0;
	if ((err = ((cu_range)CU(CU_STREAM_PRIORITY_RANGE))(&least, &greatest))) return err;
	// Lower numbers are more urgent: greatest <= least.
	switch (e->priority) {
	case 1: e->prioValue = greatest; break;
	case 2: e->prioValue = least; break;
	case 3: e->prioValue = e->prioValue < greatest ? greatest : e->prioValue > least ? least : e->prioValue; break;
	default: e->prioValue = 0;
	}
	*at = AT_STREAM;
	if ((err = ((cu_stream_prio)CU(CU_STREAM_CREATE_PRIORITY))(&e->stream, 1, e->prioValue))) return err; // cudaStreamNonBlocking
	*at = AT_WORKSPACE;
	if ((err = ((cu_pz)CU(CU_MALLOC))(&e->ws, ws))) return err;
	e->wsSize = ws;
	// cudaExternalSemaphoreHandleDesc: type, the fd at offset 8, flags, reserved.
	uint8_t desc[128];
	memset(desc, 0, sizeof desc);
	*(int *)desc = 9; // cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd
	*(int *)(desc + 8) = semfd;
	*at = AT_SEMAPHORE;
	if ((err = ((cu_ppc)CU(CU_IMPORT_SEMAPHORE))(&e->sem, desc))) return err;
	*at = AT_HANDLE;
	return ((lt_pp)LT(LT_CREATE))(&e->lt);
}

static void gml_cu_stop(gml_cu_engine *e) {
	((cu_i)CU(CU_SET_DEVICE))(e->dev);
	if (e->stream) ((cu_p)CU(CU_STREAM_SYNC))(e->stream);
	if (e->lt) ((lt_p)LT(LT_DESTROY))(e->lt);
	if (e->sem) ((cu_p)CU(CU_DESTROY_SEMAPHORE))(e->sem);
	if (e->ws) ((cu_p)CU(CU_FREE))(e->ws);
	if (e->stream) ((cu_p)CU(CU_STREAM_DESTROY))(e->stream);
	memset(e, 0, sizeof *e);
}

// gml_cu_import maps a whole exported Vulkan allocation into the device's address space.
static int gml_cu_import(int dev, int fd, uint64_t size, int dedicated, void **ext, void **ptr) {
	int err = ((cu_i)CU(CU_SET_DEVICE))(dev);
	if (err) return err;
	// cudaExternalMemoryHandleDesc: type, the fd at 8, size at 24, flags at 32, reserved.
	uint8_t desc[128];
	memset(desc, 0, sizeof desc);
	*(int *)desc = 1; // cudaExternalMemoryHandleTypeOpaqueFd
	*(int *)(desc + 8) = fd;
	*(uint64_t *)(desc + 24) = size;
	*(uint32_t *)(desc + 32) = dedicated ? 1 : 0; // cudaExternalMemoryDedicated
	if ((err = ((cu_ppc)CU(CU_IMPORT_MEMORY))(ext, desc))) return err;
	// cudaExternalMemoryBufferDesc: offset, size, flags, reserved.
	uint8_t bd[128];
	memset(bd, 0, sizeof bd);
	*(uint64_t *)(bd + 8) = size;
	if ((err = ((cu_ppcc)CU(CU_MAPPED_BUFFER))(ptr, *ext, bd))) {
		((cu_p)CU(CU_DESTROY_MEMORY))(*ext);
		*ext = NULL;
	}
	return err;
}

static void gml_cu_unimport(int dev, void *ext, void *ptr) {
	((cu_i)CU(CU_SET_DEVICE))(dev);
	((cu_p)CU(CU_FREE))(ptr);
	((cu_p)CU(CU_DESTROY_MEMORY))(ext);
}

// gml_lt_shape describes one product as cuBLASLt sees it (column-major, see plan).
typedef struct {
	int compute, typeA, typeC, opA, opB, batch;
	uint64_t rowsA, colsA, rowsB, colsB, rowsC, colsC;
	int64_t lda, ldb, ldc, strideA, strideB, strideC;
	uint32_t alignA, alignB, alignC;
	uint64_t workspace;
} gml_lt_shape;

// gml_lt_plan is one shape's descriptors and chosen algorithm.
typedef struct {
	uint64_t algo[8]; // cublasLtMatmulAlgo_t
	void *desc, *la, *lb, *lc;
} gml_lt_plan;

static int gml_lt_layout(void **l, int type, uint64_t rows, uint64_t cols, int64_t ld, int batch, int64_t stride) {
	int st = ((lt_layout_create)LT(LT_LAYOUT_CREATE))(l, type, rows, cols, ld);
	if (st || batch <= 1) return st;
	int32_t b = batch;
	if ((st = ((lt_set)LT(LT_LAYOUT_SET))(*l, 5, &b, sizeof b))) return st;          // BATCH_COUNT
	return ((lt_set)LT(LT_LAYOUT_SET))(*l, 6, &stride, sizeof stride);               // STRIDED_BATCH_OFFSET
}

static void gml_lt_unplan(gml_lt_plan *p) {
	if (p->la) ((lt_p)LT(LT_LAYOUT_DESTROY))(p->la);
	if (p->lb) ((lt_p)LT(LT_LAYOUT_DESTROY))(p->lb);
	if (p->lc) ((lt_p)LT(LT_LAYOUT_DESTROY))(p->lc);
	if (p->desc) ((lt_p)LT(LT_DESC_DESTROY))(p->desc);
	memset(p, 0, sizeof *p);
}

// gml_lt_make_plan creates the descriptors of a shape and asks the heuristic for the
// best algorithm. It returns a cublasStatus_t, or -1 when no algorithm fits.
static int gml_lt_make_plan(void *lt, const gml_lt_shape *s, gml_lt_plan *p) {
	memset(p, 0, sizeof *p);
	int st;
	if ((st = ((lt_desc_create)LT(LT_DESC_CREATE))(&p->desc, s->compute, 0))) goto fail; // scale type CUDA_R_32F
	if ((st = ((lt_set)LT(LT_DESC_SET))(p->desc, 3, &s->opA, sizeof(int)))) goto fail;     // TRANSA
	if ((st = ((lt_set)LT(LT_DESC_SET))(p->desc, 4, &s->opB, sizeof(int)))) goto fail;     // TRANSB
	if ((st = gml_lt_layout(&p->la, s->typeA, s->rowsA, s->colsA, s->lda, s->batch, s->strideA))) goto fail;
	if ((st = gml_lt_layout(&p->lb, s->typeA, s->rowsB, s->colsB, s->ldb, s->batch, s->strideB))) goto fail;
	if ((st = gml_lt_layout(&p->lc, s->typeC, s->rowsC, s->colsC, s->ldc, s->batch, s->strideC))) goto fail;
	void *pref = NULL;
	if ((st = ((lt_pp)LT(LT_PREF_CREATE))(&pref))) goto fail;
	((lt_set)LT(LT_PREF_SET))(pref, 1, &s->workspace, sizeof s->workspace); // MAX_WORKSPACE_BYTES
	((lt_set)LT(LT_PREF_SET))(pref, 5, &s->alignA, sizeof(uint32_t));       // MIN_ALIGNMENT_A_BYTES
	((lt_set)LT(LT_PREF_SET))(pref, 6, &s->alignB, sizeof(uint32_t));
	((lt_set)LT(LT_PREF_SET))(pref, 7, &s->alignC, sizeof(uint32_t));
	((lt_set)LT(LT_PREF_SET))(pref, 8, &s->alignC, sizeof(uint32_t));
	// cublasLtMatmulHeuristicResult_t: algo, workspaceSize, state, wavesCount, reserved.
	uint8_t result[128];
	memset(result, 0, sizeof result);
	int found = 0;
	st = ((lt_heuristic)LT(LT_HEURISTIC))(lt, p->desc, p->la, p->lb, p->lc, p->lc, pref, 1, result, &found);
	((lt_p)LT(LT_PREF_DESTROY))(pref);
	if (st) goto fail;
	if (found < 1) {
		st = -1;
		goto fail;
	}
	memcpy(p->algo, result, sizeof p->algo);
	return 0;
fail:
	gml_lt_unplan(p);
	return st;
}

// gml_lt_call is one queued product: a plan, its pointers and scalars, and optional
// events around it.
typedef struct {
	gml_lt_plan *plan;
	const void *a, *b;
	void *c;
	float alpha, beta;
	void *ev0, *ev1;
} gml_lt_call;

// gml_cu_run queues on the stream: a wait for the timeline to reach wait, the products,
// a signal of signal. On failure *at says what failed and *index which product.
static int gml_cu_run(gml_cu_engine *e, uint64_t wait, uint64_t signal, gml_lt_call *calls, int n, int *at, int *index) {
	int err;
	*at = AT_SET_DEVICE;
	if ((err = ((cu_i)CU(CU_SET_DEVICE))(e->dev))) return err;
	// cudaExternalSemaphoreWaitParams / SignalParams: the fence value first, the rest 0.
	uint64_t params[32];
	memset(params, 0, sizeof params);
	params[0] = wait;
	*at = AT_WAIT;
	if ((err = ((cu_sem)CU(CU_WAIT_SEMAPHORES))(&e->sem, params, 1, e->stream))) return err;
	for (int i = 0; i < n; i++) {
		gml_lt_call *c = &calls[i];
		*index = i;
		*at = AT_EVENT;
		if (c->ev0 && (err = ((cu_pp2)CU(CU_EVENT_RECORD))(c->ev0, e->stream))) return err;
		*at = AT_MATMUL;
		gml_lt_plan *p = c->plan;
		err = ((lt_matmul)LT(LT_MATMUL))(e->lt, p->desc, &c->alpha, c->a, p->la, c->b, p->lb, &c->beta,
			c->c, p->lc, c->c, p->lc, p->algo, e->ws, e->wsSize, e->stream);
		if (err) return err;
		*at = AT_EVENT;
		if (c->ev1 && (err = ((cu_pp2)CU(CU_EVENT_RECORD))(c->ev1, e->stream))) return err;
	}
	params[0] = signal;
	*at = AT_SIGNAL;
	return ((cu_sem)CU(CU_SIGNAL_SEMAPHORES))(&e->sem, params, 1, e->stream);
}

// gml_lt_warm runs a planned product twice (beta 0 and 1) on the idle stream into
// scratch output and waits for it. A kernel's first launch may load its module, and a
// load may synchronize the context: behind a wait for a timeline value that only the
// host's next Vulkan submission provides, the load would wait for the stream, the stream
// for the semaphore and the host for the load. So each new plan runs once here first.
static int gml_lt_warm(gml_cu_engine *e, gml_lt_plan *p, const void *a, const void *b, size_t scratchSize, int *at) {
	int err;
	*at = AT_SET_DEVICE;
	if ((err = ((cu_i)CU(CU_SET_DEVICE))(e->dev))) return err;
	void *scratch = NULL;
	*at = AT_SCRATCH;
	if ((err = ((cu_pz)CU(CU_MALLOC))(&scratch, scratchSize))) return err;
	float alpha = 1, betas[2] = {0, 1};
	for (int i = 0; i < 2 && !err; i++) {
		*at = AT_MATMUL;
		err = ((lt_matmul)LT(LT_MATMUL))(e->lt, p->desc, &alpha, a, p->la, b, p->lb, &betas[i],
			scratch, p->lc, scratch, p->lc, p->algo, e->ws, e->wsSize, e->stream);
	}
	if (!err) {
		*at = AT_SYNC;
		err = ((cu_p)CU(CU_STREAM_SYNC))(e->stream);
	}
	((cu_p)CU(CU_FREE))(scratch);
	return err;
}

// gml_cu_query returns cudaStreamQuery's answer: 0 idle, 600 (cudaErrorNotReady) busy,
// anything else a failure.
static int gml_cu_query(gml_cu_engine *e) {
	((cu_i)CU(CU_SET_DEVICE))(e->dev);
	return ((cu_p)CU(CU_STREAM_QUERY))(e->stream);
}

static int gml_cu_sync(gml_cu_engine *e) {
	((cu_i)CU(CU_SET_DEVICE))(e->dev);
	return ((cu_p)CU(CU_STREAM_SYNC))(e->stream);
}

static int gml_cu_event(int dev, void **ev) {
	((cu_i)CU(CU_SET_DEVICE))(dev);
	return ((cu_pp)CU(CU_EVENT_CREATE))(ev);
}

static void gml_cu_event_destroy(int dev, void *ev) {
	((cu_i)CU(CU_SET_DEVICE))(dev);
	((cu_p)CU(CU_EVENT_DESTROY))(ev);
}

static float gml_cu_elapsed(void *a, void *b) {
	float ms = 0;
	if (((cu_elapsed)CU(CU_EVENT_ELAPSED))(&ms, a, b)) return -1;
	return ms;
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/gml-dev/gml/internal/sysmem"
)

// The CUDA side of the fast path: a productEngine running products through cuBLASLt on
// a CUDA stream, on Vulkan device memory imported once per block.

// cudaWorkspace is the cuBLASLt workspace of each engine, as PyTorch uses on Hopper.
const cudaWorkspace = 32 << 20

// CUDA and cuBLASLt constants (driver_types.h, library_types.h, cublas_api.h).
const (
	cudaR32F, cudaR16F, cudaR16BF          = 0, 2, 14
	cublasCompute32F, cublasCompute32FTF32 = 68, 77
	cublasOpN, cublasOpT                   = 0, 1
	cudaErrorNotReady                      = 600
)

// cudaEngine runs products through cuBLASLt on one CUDA device.
type cudaEngine struct {
	lib *cudaLib
	dev int
	d   *Device

	mu      sync.Mutex
	e       C.gml_cu_engine
	started bool
	imports map[*block]cudaImport
	plans   map[string]*C.gml_lt_plan // per shape; freed at close
}

type cudaImport struct {
	ext, ptr unsafe.Pointer
}

func newCUDAEngine(lib *cudaLib, dev int) *cudaEngine {
	return &cudaEngine{lib: lib, dev: dev, imports: map[*block]cudaImport{}, plans: map[string]*C.gml_lt_plan{}}
}

func (c *cudaEngine) describe() string { return c.lib.describe() }

// startError names the step of a start or run that failed.
func startError(at C.int, code C.int) error {
	steps := [...]string{"cudaSetDevice", "cudaStreamCreateWithPriority", "cudaMalloc (workspace)", "cudaImportExternalSemaphore (the Vulkan timeline)",
		"cublasLtCreate", "cudaWaitExternalSemaphoresAsync", "cublasLtMatmul", "cudaSignalExternalSemaphoresAsync", "cudaEventRecord",
		"cudaMalloc (scratch output)", "cudaStreamSynchronize", "cudaSetDeviceFlags (GML_CUDA_SCHEDULE)", "cudaDeviceGetStreamPriorityRange"}
	step := "CUDA"
	if int(at) < len(steps) {
		step = steps[at]
	}
	if at == C.AT_HANDLE || at == C.AT_MATMUL {
		return fmt.Errorf("%s: %s", step, cublasStatusText(code))
	}
	return fmt.Errorf("%s: %s", step, cudaErrorText(code))
}

// cublasStatusText names a cublasStatus_t.
func cublasStatusText(st C.int) string {
	names := map[C.int]string{1: "NOT_INITIALIZED", 3: "ALLOC_FAILED", 7: "INVALID_VALUE", 8: "ARCH_MISMATCH",
		11: "MAPPING_ERROR", 13: "EXECUTION_FAILED", 14: "INTERNAL_ERROR", 15: "NOT_SUPPORTED", 16: "LICENSE_ERROR"}
	if n, ok := names[st]; ok {
		return fmt.Sprintf("CUBLAS_STATUS_%s (%d)", n, int(st))
	}
	return fmt.Sprintf("cublasStatus %d", int(st))
}

func (c *cudaEngine) start(d *Device, tl *timeline) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.d = d
	fd, err := tl.exportFD()
	if err != nil {
		return err
	}
	c.e.dev = C.int(c.dev)
	set, err := cudaSettingsFromEnv()
	if err != nil {
		closeFD(fd)
		return err
	}
	c.e.schedule = C.int(set.schedule)
	switch set.priorityName {
	case "":
		c.e.priority = 0
	case "high":
		c.e.priority = 1
	case "low":
		c.e.priority = 2
	default:
		c.e.priority, c.e.prioValue = 3, C.int(set.priority)
	}
	var at C.int
	if code := C.gml_cu_start(&c.e, C.int(fd), cudaWorkspace, &at); code != 0 {
		if at <= C.AT_SEMAPHORE && c.e.sem == nil {
			closeFD(fd)
		}
		C.gml_cu_stop(&c.e)
		return startError(at, code)
	}
	c.started = true
	return nil
}

// settings describes the scheduling settings the engine started with (priority.go).
func (c *cudaEngine) settings() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	sched := "default"
	for name, f := range cudaSchedules {
		if int(c.e.schedule) == f {
			sched = name
		}
	}
	return fmt.Sprintf("context schedule %s, stream priority %d", sched, int(c.e.prioValue))
}

// pointer returns the device address of a buffer, importing its block on first use.
func (c *cudaEngine) pointer(b *Buffer) (unsafe.Pointer, error) {
	if imp, ok := c.imports[b.blk]; ok {
		return unsafe.Add(imp.ptr, b.off), nil
	}
	fd, err := c.d.exportMemoryFD(b.blk)
	if err != nil {
		return nil, err
	}
	var imp cudaImport
	code := C.gml_cu_import(C.int(c.dev), C.int(fd), C.uint64_t(b.blk.memSize), boolInt(c.d.fast.caps.dedicated), &imp.ext, &imp.ptr)
	if code != 0 {
		if imp.ext == nil {
			closeFD(fd)
		}
		return nil, fmt.Errorf("cudaImportExternalMemory of a %s Vulkan block: %s", sysmem.FormatBytes(b.blk.memSize), cudaErrorText(code))
	}
	c.imports[b.blk] = imp
	return unsafe.Add(imp.ptr, b.off), nil
}

// ltType is the cudaDataType of an element type.
func ltType(t DType) C.int {
	switch t {
	case F16:
		return cudaR16F
	case BF16:
		return cudaR16BF
	}
	return cudaR32F
}

// alignment is the largest power of two up to 256 dividing the address.
func alignment(p unsafe.Pointer) C.uint32_t {
	a := uint32(256)
	for a > 1 && uintptr(p)%uintptr(a) != 0 {
		a /= 2
	}
	return C.uint32_t(a)
}

// cudaPlan is a planned product: its shape's plan and its pointers.
type cudaPlan struct {
	plan    *C.gml_lt_plan
	a, b, c unsafe.Pointer
}

// ltLayout is a product as cuBLASLt sees it: column-major matrices, its A being our B.
type ltLayout struct {
	opA, opB                                 int // cublasOpN or cublasOpT
	rowsA, colsA, rowsB, colsB, rowsC, colsC int
	lda, ldb, ldc, strideA, strideB, strideC int
}

// ltLayoutOf maps the row-major product onto cuBLASLt's column-major one: a row-major
// matrix is its transpose in column-major order, so C = op(A)·op(B) is computed as
// Cᵀ = op(B)ᵀ·op(A)ᵀ, with B as cuBLASLt's first operand and A as its second.
func ltLayoutOf(p *extProduct) ltLayout {
	l := ltLayout{
		opA: cublasOpN, opB: cublasOpN,
		lda: p.LDB, ldb: p.LDA, ldc: p.LDC, strideA: p.SB, strideB: p.SA, strideC: p.SC,
		rowsC: p.N, colsC: p.M,
	}
	// cuBLASLt's A is our B: N×K (stored K×N row-major) or, transposed, stored N×K.
	l.rowsA, l.colsA = p.N, p.K
	if p.TransB {
		l.opA, l.rowsA, l.colsA = cublasOpT, p.K, p.N
	}
	l.rowsB, l.colsB = p.K, p.M
	if p.TransA {
		l.opB, l.rowsB, l.colsB = cublasOpT, p.M, p.K
	}
	return l
}

// plan plans a product on cuBLASLt (ltLayoutOf), once per shape, and imports the memory
// it touches.
func (c *cudaEngine) plan(p *extProduct) error {
	// The device's lock keeps runs out while a new shape is warmed up on the stream
	// (gml_lt_warm), and orders before c.mu as everywhere else.
	p.C.d.mu.Lock()
	defer p.C.d.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		return fmt.Errorf("the CUDA engine is not started")
	}
	pa, err := c.pointer(p.A)
	if err != nil {
		return err
	}
	pb, err := c.pointer(p.B)
	if err != nil {
		return err
	}
	pc, err := c.pointer(p.C)
	if err != nil {
		return err
	}
	l := ltLayoutOf(p)
	s := C.gml_lt_shape{
		compute: cublasCompute32F, typeA: ltType(p.In), typeC: ltType(p.Out), opA: C.int(l.opA), opB: C.int(l.opB),
		batch: C.int(p.Batch), lda: C.int64_t(l.lda), ldb: C.int64_t(l.ldb), ldc: C.int64_t(l.ldc),
		strideA: C.int64_t(l.strideA), strideB: C.int64_t(l.strideB), strideC: C.int64_t(l.strideC),
		rowsA: C.uint64_t(l.rowsA), colsA: C.uint64_t(l.colsA), rowsB: C.uint64_t(l.rowsB), colsB: C.uint64_t(l.colsB),
		rowsC: C.uint64_t(l.rowsC), colsC: C.uint64_t(l.colsC),
		alignA: alignment(pb), alignB: alignment(pa), alignC: alignment(pc), workspace: cudaWorkspace,
	}
	if p.In == F32 && p.TF32 {
		s.compute = cublasCompute32FTF32
	}
	p.key = fmt.Sprintf("%v", s)
	lp, ok := c.plans[p.key]
	if !ok {
		lp = (*C.gml_lt_plan)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gml_lt_plan{}))))
		if st := C.gml_lt_make_plan(c.e.lt, &s, lp); st != 0 {
			C.free(unsafe.Pointer(lp))
			if st == -1 {
				return fmt.Errorf("cuBLASLt has no algorithm for %s", p.describe())
			}
			return fmt.Errorf("cuBLASLt plan for %s: %s", p.describe(), cublasStatusText(st))
		}
		var at C.int
		if code := C.gml_lt_warm(&c.e, lp, pb, pa, C.size_t(p.outBytes()), &at); code != 0 {
			C.gml_lt_unplan(lp)
			C.free(unsafe.Pointer(lp))
			return fmt.Errorf("first run of %s: %w", p.describe(), startError(at, code))
		}
		c.plans[p.key] = lp
	}
	p.plan = &cudaPlan{plan: lp, a: pa, b: pb, c: pc}
	return nil
}

// describe renders the product for messages: "f32 1024x4096x4096 nt batch 2".
func (p *extProduct) describe() string {
	t := map[bool]string{false: "n", true: "t"}
	s := fmt.Sprintf("%s->%s %dx%dx%d %s%s", p.In, p.Out, p.M, p.N, p.K, t[p.TransA], t[p.TransB])
	if p.Batch > 1 {
		s += fmt.Sprintf(" batch %d", p.Batch)
	}
	return s
}

// cudaBatch is a group of products queued together, as C calls.
type cudaBatch struct {
	c      *cudaEngine
	calls  *C.gml_lt_call
	n      int
	events []unsafe.Pointer
}

func (c *cudaEngine) batch(ps []*extProduct, timed bool) engineBatch {
	b := &cudaBatch{c: c, n: len(ps)}
	b.calls = (*C.gml_lt_call)(C.calloc(C.size_t(len(ps)), C.size_t(unsafe.Sizeof(C.gml_lt_call{}))))
	calls := unsafe.Slice(b.calls, len(ps))
	for i, p := range ps {
		cp := p.plan.(*cudaPlan)
		// cuBLASLt's A is our B (see plan).
		calls[i] = C.gml_lt_call{plan: cp.plan, a: cp.b, b: cp.a, c: cp.c, alpha: 1, beta: C.float(p.Beta)}
	}
	if timed {
		b.events = make([]unsafe.Pointer, 2*len(ps))
		for i := range b.events {
			if C.gml_cu_event(C.int(c.dev), &b.events[i]) != 0 {
				b.releaseEvents()
				break
			}
		}
		for i := range calls {
			if b.events != nil {
				calls[i].ev0, calls[i].ev1 = b.events[2*i], b.events[2*i+1]
			}
		}
	}
	return b
}

func (b *cudaBatch) enqueue(wait, signal uint64) error {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	var at, index C.int
	if code := C.gml_cu_run(&b.c.e, C.uint64_t(wait), C.uint64_t(signal), b.calls, C.int(b.n), &at, &index); code != 0 {
		err := startError(at, code)
		if at == C.AT_MATMUL {
			// The library refused this product (its own status, no CUDA fault).
			return &productError{index: int(index), err: fmt.Errorf("%w: %v", errProduct, err)}
		}
		return err
	}
	return nil
}

func (b *cudaBatch) times() []float64 {
	if b.events == nil {
		return make([]float64, b.n)
	}
	out := make([]float64, b.n)
	for i := range out {
		if ms := C.gml_cu_elapsed(b.events[2*i], b.events[2*i+1]); ms >= 0 {
			out[i] = float64(ms) * 1e6
		}
	}
	return out
}

func (b *cudaBatch) releaseEvents() {
	for _, ev := range b.events {
		if ev != nil {
			C.gml_cu_event_destroy(C.int(b.c.dev), ev)
		}
	}
	b.events = nil
}

func (b *cudaBatch) release() {
	b.releaseEvents()
	C.free(unsafe.Pointer(b.calls))
	b.calls = nil
}

func (c *cudaEngine) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		return nil
	}
	switch code := C.gml_cu_query(&c.e); code {
	case 0, cudaErrorNotReady:
		return nil
	default:
		return fmt.Errorf("the CUDA stream failed: %s", cudaErrorText(code))
	}
}

func (c *cudaEngine) sync() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		return nil
	}
	if code := C.gml_cu_sync(&c.e); code != 0 {
		return fmt.Errorf("cudaStreamSynchronize: %s", cudaErrorText(code))
	}
	return nil
}

func (c *cudaEngine) forget(b *block) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if imp, ok := c.imports[b]; ok {
		C.gml_cu_unimport(C.int(c.dev), imp.ext, imp.ptr)
		delete(c.imports, b)
	}
}

func (c *cudaEngine) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		return
	}
	C.gml_cu_sync(&c.e)
	for b, imp := range c.imports {
		C.gml_cu_unimport(C.int(c.dev), imp.ext, imp.ptr)
		delete(c.imports, b)
	}
	for k, p := range c.plans {
		C.gml_lt_unplan(p)
		C.free(unsafe.Pointer(p))
		delete(c.plans, k)
	}
	C.gml_cu_stop(&c.e)
	c.started = false
}
