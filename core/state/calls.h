/* encore: the program's calls as the engine records them: a kernel launch
 * (enc_launch) and a stream operation that may become a graph node (enc_op).
 * The hooks build them (core/path/engine.h); every floor of the engine reads
 * them. */
#ifndef ENCORE_CALLS_H
#define ENCORE_CALLS_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

/* A kernel launch from the program, in one of the two shapes. `real` is the
 * driver's function for the exact variant the program called. */
typedef struct enc_launch {
    int shape;      /* ENC_SHAPE_LK or ENC_SHAPE_EX */
    int per_thread; /* NULL stream means the per-thread default stream */
    void *real;
    CUfunction f;
    unsigned grid[3], block[3], smem;
    CUstream stream;
    void **params;
    void **extra;
    const CUlaunchConfig *config; /* ENC_SHAPE_EX */
} enc_launch;
enum { ENC_SHAPE_LK = 0, ENC_SHAPE_EX = 1 };

/* A stream operation other than a kernel launch that may become a node of a
 * captured sequence (core/graphs/nodes.c): an event record, a wait on an event, an
 * asynchronous copy or memset. Its bytes are recorded as they are (zero
 * what a kind does not use: equal operations must compare equal). */
enum enc_op_kind { ENC_OP_RECORD = 1, ENC_OP_WAIT, ENC_OP_COPY, ENC_OP_SET, ENC_OP_KINDS };
/* An event record or wait (the kinds that order streams, and do no work of their own). */
static inline int enc_op_is_event(uint32_t kind) { return kind == ENC_OP_RECORD || kind == ENC_OP_WAIT; }
typedef struct enc_op {
    uint32_t kind;  /* enum enc_op_kind */
    uint32_t flags; /* the call's flags (record, wait); the element size (memset) */
    CUevent ev;
    CUdeviceptr dst, src; /* copy: both ends as unified addresses; memset: dst */
    size_t n;             /* bytes (copy), elements (memset) */
    unsigned value;       /* memset */
    uint32_t pad;
} enc_op;

/* The program's own memory: device allocations and page-locked host ranges
 * (a copy between other memory is pageable and ends the sequence). */
enum enc_mem_kind { ENC_MEM_DEVICE = 1, ENC_MEM_PINNED = 2 };

#endif
