/* encore: what every generated wrapper (build/generated/hooks_gen.c) uses.
 *
 * A wrapper is three steps: enc_hook_pre() tells the core about the call
 * (classify it, flush what it could observe), the real function runs,
 * enc_hook_post() follows up for the few entry points that need it (and may
 * replace the result: an error of an earlier held launch). Kernel
 * launches go to the core instead (enc_hook_launch_*), which may defer them.
 *
 * Calls encore makes into the driver itself run with the thread-local guard
 * set, so a wrapper reached from inside encore (or from inside the driver,
 * through a PLT) passes straight through. */
#ifndef ENCORE_HOOKS_H
#define ENCORE_HOOKS_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdint.h>

#include "core/path/engine.h"

#define ENC_EXPORT __attribute__((visibility("default")))

/* Stream argument placeholders for entry points without exactly one CUstream. */
#define ENC_NO_STREAM ((CUstream)(uintptr_t)-1)
#define ENC_MANY_STREAMS ((CUstream)(uintptr_t)-2)

typedef struct enc_export_desc {
    const char *name; /* exported ABI name, e.g. cuMemcpyHtoDAsync_v2_ptsz */
    void *wrapper;
    int entry;      /* entry id of its base name */
    int per_thread; /* _ptsz/_ptds: a NULL stream is the per-thread stream */
} enc_export_desc;

typedef struct enc_variant_desc {
    const char *base; /* name cuGetProcAddress is asked for, e.g. cuCtxSynchronize */
    const char *pfn;  /* typedef name, e.g. PFN_cuCtxSynchronize_v13000 */
    void *wrapper;
    int version; /* first CUDA version that returns this variant */
    int per_thread;
    int entry;
} enc_variant_desc;

/* Generated tables. */
extern const char *const enc_entry_names[];
extern const enc_export_desc enc_exports[];
extern const enc_variant_desc enc_variants[];
extern void *enc_real_export[];
extern void *enc_real_variant[];
extern void *const enc_trampolines[];

/* Real pointer of exported wrapper i, resolved from the real libcuda on first use. */
void *enc_resolve_export(int i);
#define ENC_REAL_EXPORT(i) (__builtin_expect(enc_real_export[i] != 0, 1) ? enc_real_export[i] : enc_resolve_export(i))

/* Per-entry class and flags, filled from policy/entry_class.c at start-up. */
extern unsigned char enc_entry_class[];
extern uint32_t enc_entry_flags[];

/* For the wrappers of entry points with a launch's signature only (enc_hot.launch_classed). */
static inline int enc_is_launch(int entry) {
    return __builtin_expect(__atomic_load_n(&enc_hot.launch_classed, __ATOMIC_RELAXED), 1) ||
           enc_entry_class[entry] == ENC_CLASS_LAUNCH;
}
/* ENCORE=0: a launch wrapper counts the launch and calls the driver at once
 * (core/path/engine.h, enc_core_launch_passes). */
static inline int enc_hook_launch_passes(void) { return enc_core_launch_passes(); }
/* A launch to a resting stream (core/path/launch.c, enc_core_launch_rests): the
 * wrapper calls the driver at once and hands its result to enc_hook_launch_result. */
static inline int enc_hook_launch_rests_lk(CUstream stream) { return enc_core_launch_rests(stream); }
int enc_hook_launch_rests_ex(const CUlaunchConfig *config);
static inline CUresult enc_hook_launch_result(CUresult r) {
    if (__builtin_expect(r != CUDA_SUCCESS, 0)) enc_core_launch_failed(r);
    return r;
}

/* A pure pass-through entry point (class PASS, no flags) needs no wrapper:
 * cuGetProcAddress and dlsym hand out the driver's own pointer for it, so
 * the queries frameworks make around every launch cost nothing extra.
 * ENCORE_WRAP_PASS=1 wraps them too (to count them). Exported symbols stay
 * wrappers either way. */
int enc_hand_out_real(int entry);

int enc_hook_pre(int entry, CUstream stream, int per_thread);
/* Returns what the wrapper returns: the call's result, or in place of its
 * CUDA_SUCCESS an error a held launch got when released (core/state/failure.c). */
CUresult enc_hook_post(int entry, CUstream stream, int per_thread, CUresult result);
/* The same, for the entry points whose first argument the hooks need
 * (scripts/gen_hooks.py OBJECT_ARG: the context or device a call destroys, the
 * module or library it unloads). */
int enc_hook_pre_obj(int entry, CUstream stream, int per_thread, uintptr_t object);
CUresult enc_hook_post_obj(int entry, CUstream stream, int per_thread, CUresult result, uintptr_t object);
/* enc_hook_pre for the calls that set a function's attribute or cache
 * configuration (ENC_F_FUNC_SET), which the core needs to see. */
int enc_hook_pre_func_set(int entry, const enc_func_set *c);

/* Stream operations the core may hold as graph nodes (scripts/gen_hooks.py
 * OPS). enc_hook_pre_op returns 0 (not ours: call through), 1 (call, then
 * enc_hook_post_op), 2 (held: return CUDA_SUCCESS, no post) or 3 (call, then
 * enc_hook_post_op: part of the open sequence). */
int enc_hook_pre_op(int entry, CUstream stream, int per_thread, const enc_op *op);
CUresult enc_hook_post_op(int entry, CUstream stream, int per_thread, CUresult result, int own);
/* Before a call that names event ev (cheap when nothing holds an event). */
void enc_hook_event(CUevent ev);

/* Inline: the wrapper builds the launch in place and calls the engine once, instead of
 * handing fourteen arguments (most on the stack) to a function that copies them. */
static inline CUresult enc_hook_launch_lk(int entry, int per_thread, void *real, CUfunction f, unsigned int gx,
                                          unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                                          unsigned int bz, unsigned int smem, CUstream stream, void **params,
                                          void **extra) {
    (void)entry;
    enc_launch l = {.shape = ENC_SHAPE_LK,
                    .per_thread = per_thread,
                    .real = real,
                    .f = f,
                    .grid = {gx, gy, gz},
                    .block = {bx, by, bz},
                    .smem = smem,
                    .stream = stream,
                    .params = params,
                    .extra = extra,
                    .config = NULL};
    return enc_core_launch(&l);
}
CUresult enc_hook_launch_ex(int entry, int per_thread, void *real, const CUlaunchConfig *config, CUfunction f,
                            void **params, void **extra);

/* Called by the generic trampolines (unknown entry points): flush, return the real target. */
void *enc_trampoline_enter(unsigned int index);
/* Hand out a trampoline that flushes everything and then calls `real`; NULL if none is left. */
void *enc_trampoline_for(void *real, const char *name);

/* Is this address inside libencore itself (one of our wrappers)? */
int enc_is_ours(const void *addr);

/* Look-ups used by dlsym and cuGetProcAddress. */
int enc_find_export(const char *name);                               /* index or -1 */
int enc_find_variant(const char *base, int version, int per_thread); /* index or -1 */
/* Fill the per-entry class table from policy/ (once; thread-safe). Every
 * path that reads the table (hooks, cuGetProcAddress, dlsym) ensures it. */
void enc_interpose_init(void);
extern int enc_interpose_ready;
/* Start-up for every way into encore: the core's, then the class table. */
static inline void enc_interpose_ensure_init(void) {
    enc_core_ensure_init();
    if (__builtin_expect(!__atomic_load_n(&enc_interpose_ready, __ATOMIC_ACQUIRE), 0)) enc_interpose_init();
}

#endif
