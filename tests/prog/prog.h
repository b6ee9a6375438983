/* Helpers for the test programs that reach the driver through the `drv`
 * table (drv.h): start-up, kernels, counted launches, buffers.
 *
 * prog_init() fills the table the way $PROG_ACCESS says (procaddr, the
 * default, as cudart does; procaddr-ptds; dlsym; dlsym-ptsz), initialises the
 * driver and makes the primary context current. Every failing driver call
 * ends the program with status 2 and the call's text. */
#ifndef PROG_H
#define PROG_H

#include "drv.h"
#include "progutil.h"

#include <stdint.h>

#define CK(call) prog_check((call), #call, __FILE__, __LINE__)
void prog_check(CUresult r, const char *what, const char *file, int line);

extern CUcontext prog_ctx;

void prog_init(void);
/* The same, with the table filled as `how` says whatever $PROG_ACCESS is. */
void prog_init_with(enum prog_access how);
/* Makes the primary context current on a new host thread. */
void prog_thread_init(void);
/* Destroys the primary context (release: by releasing prog_init's reference, its only one; else
 * cuDevicePrimaryCtxReset), then retains it again as prog_ctx, current on this thread. */
void prog_reset_primary(int release);

/* The kernels of kernels.c. */
typedef struct prog_kernels {
    CUmodule mod;
    CUfunction fill, mix, add, axpy, copy, stamp, packed, reduce, flag_inc, flag_wait, delay, nop, fault;
} prog_kernels;

CUmodule prog_module_load(const char *so_path);
CUfunction prog_function(CUmodule mod, const char *name);
/* Loads libprogkernels.so (alt = 0) or libprogkernels_alt.so (alt = 1). */
void prog_kernels_load(prog_kernels *k, int alt);
void prog_kernels_unload(prog_kernels *k);

/* Counted launches, 1-D grid and block. */
void prog_launch(CUfunction f, unsigned grid, unsigned block, unsigned shmem, CUstream s, void **params);
void prog_launch_ex(CUfunction f, unsigned grid, unsigned block, unsigned shmem, CUstream s, void **params,
                    CUlaunchAttribute *attrs, unsigned nattrs);
void prog_launch_extra(CUfunction f, unsigned grid, unsigned block, unsigned shmem, CUstream s, void *argbuf,
                       size_t argsize);
/* cuLaunchKernelEx with launch attributes and a packed argument buffer (NCCL's form). */
void prog_launch_ex_packed(CUfunction f, unsigned grid, unsigned block, unsigned shmem, CUstream s, void *argbuf,
                           size_t argsize, CUlaunchAttribute *attrs, unsigned nattrs);

/* A counted launch that returns the driver's answer instead of failing (for
 * programs that look at launch errors). */
CUresult prog_launch_rc(CUfunction f, unsigned grid, unsigned block, unsigned shmem, CUstream s, void **params);
/* The name of a CUresult ("CUDA_ERROR_ILLEGAL_ADDRESS"). */
const char *prog_err_name(CUresult r);

/* The usual configuration for n elements: 64 threads a block, enough blocks. */
#define PROG_BLOCK 64u
#define PROG_GRID(n) (((n) + PROG_BLOCK - 1) / PROG_BLOCK)

/* Counted launches of the kernels with the usual configuration. */
void k_fill(const prog_kernels *k, CUstream s, CUdeviceptr dst, uint32_t value, uint32_t n);
void k_mix(const prog_kernels *k, CUstream s, CUdeviceptr dst, uint32_t salt, uint32_t n);
void k_add(const prog_kernels *k, CUstream s, CUdeviceptr dst, CUdeviceptr src, uint32_t n);
void k_axpy(const prog_kernels *k, CUstream s, CUdeviceptr dst, CUdeviceptr src, uint32_t a, uint32_t n);
void k_copy(const prog_kernels *k, CUstream s, CUdeviceptr dst, CUdeviceptr src, uint32_t n);
void k_stamp(const prog_kernels *k, CUstream s, CUdeviceptr dst, uint32_t n);
void k_reduce(const prog_kernels *k, CUstream s, CUdeviceptr out, CUdeviceptr src, uint32_t n);
void k_flag_inc(const prog_kernels *k, CUstream s, CUdeviceptr flag);
void k_flag_wait(const prog_kernels *k, CUstream s, CUdeviceptr flag, uint32_t value, uint32_t timeout_ms);
void k_delay(const prog_kernels *k, CUstream s, uint32_t us);

/* Device buffers of n uint32_t. */
CUdeviceptr prog_alloc(uint32_t n);
/* Hash of n words of device memory: async copy on s, synchronise s, hash. */
uint64_t prog_hash_dev(CUstream s, CUdeviceptr d, uint32_t n);
CUstream prog_stream(unsigned flags);

/* The set-up most programs share: k loaded, a non-blocking stream (returned),
 * x and y of n words filled with 1 and 2 on it (not synchronised). */
CUstream prog_stream_xy(prog_kernels *k, uint32_t n, CUdeviceptr *x, CUdeviceptr *y);

/* The hot-loop programs' buffers: x and y of n words (filled with 1 and 2,
 * then s synchronised) and r for a reduction. */
void prog_hot_buffers(const prog_kernels *k, CUstream s, uint32_t n, CUdeviceptr *x, CUdeviceptr *y, CUdeviceptr *r);
/* The hot-loop programs' whole set-up: prog_init, k loaded, a non-blocking
 * stream (returned), and prog_hot_buffers on it. */
CUstream prog_hot_setup(prog_kernels *k, uint32_t n, CUdeviceptr *x, CUdeviceptr *y, CUdeviceptr *r);
/* A ring of `count` buffer pairs of n words: xs[i] filled with xsalt * i + 1, ys[i] with 5 * i + 2. */
void prog_ring_buffers(const prog_kernels *k, CUstream s, uint32_t n, int count, uint32_t xsalt, CUdeviceptr *xs,
                       CUdeviceptr *ys);
/* Copy the reduction r back on s, synchronise, print "<what> <i> reduce <hex>". */
void prog_print_reduce(CUstream s, CUdeviceptr r, const char *what, int i);
/* Print the final hashes of x and y (n words) and report the launches made. */
void prog_finish(CUstream s, CUdeviceptr x, CUdeviceptr y, uint32_t n);

#endif
