/* encore: the run-time side of the generated hooks.
 *
 * Tables are generated (hooks_gen.c); this file looks them up, resolves real
 * pointers, hands out trampolines for unknown entry points, and forwards each
 * hooked call to the core according to its class from policy/. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "base/driver.h"
#include "core/path/engine.h"
#include "base/log.h"
#include "interpose/hooks.h"
#include "hooks_gen.h"
#include "policy/entry_class.h"
#include "policy/options.h"

unsigned char enc_entry_class[ENC_ENTRY_COUNT];
uint32_t enc_entry_flags[ENC_ENTRY_COUNT];

int enc_interpose_ready;
static pthread_once_t interpose_once = PTHREAD_ONCE_INIT;

static void interpose_init_once(void) {
    for (int i = 0; i < ENC_ENTRY_COUNT; i++) {
        unsigned char cls;
        uint32_t flags;
        enc_policy_lookup(enc_entry_names[i], &cls, &flags);
        enc_entry_flags[i] = flags;
        __atomic_store_n(&enc_entry_class[i], cls, __ATOMIC_RELEASE);
    }
    static const int launch_shaped[] = ENC_LAUNCH_SHAPED_ENTRIES;
    int all = 1;
    for (size_t i = 0; i < sizeof launch_shaped / sizeof launch_shaped[0]; i++)
        all &= enc_entry_class[launch_shaped[i]] == ENC_CLASS_LAUNCH;
    __atomic_store_n(&enc_hot.launch_classed, all, __ATOMIC_RELEASE);
    enc_stats_set_cause_names(enc_entry_names, ENC_ENTRY_COUNT); /* flushes are counted by entry id */
    __atomic_store_n(&enc_interpose_ready, 1, __ATOMIC_RELEASE);
}

void enc_interpose_init(void) { pthread_once(&interpose_once, interpose_init_once); }

int enc_hand_out_real(int entry) {
    return !enc_opt.wrap_pass && __atomic_load_n(&enc_entry_class[entry], __ATOMIC_ACQUIRE) == ENC_CLASS_PASS &&
           enc_entry_flags[entry] == 0;
}

int enc_is_ours(const void *addr) {
    Dl_info ours, info;
    return addr && dladdr((void *)enc_is_ours, &ours) && dladdr(addr, &info) && info.dli_fbase == ours.dli_fbase;
}

int enc_find_export(const char *name) {
    int lo = 0, hi = ENC_EXPORT_COUNT - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(enc_exports[mid].name, name);
        if (c == 0) return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Variants are sorted by (base, per_thread, version): find the newest
 * version not above `version` with the given per-thread flag. */
int enc_find_variant(const char *base, int version, int per_thread) {
    int lo = 0, hi = ENC_VARIANT_COUNT - 1, first = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(enc_variants[mid].base, base);
        if (c >= 0) {
            if (c == 0) first = mid;
            hi = mid - 1;
        } else
            lo = mid + 1;
    }
    if (first < 0) return -1;
    int best = -1;
    for (int i = first; i < ENC_VARIANT_COUNT && strcmp(enc_variants[i].base, base) == 0; i++)
        if (enc_variants[i].per_thread == per_thread && enc_variants[i].version <= version) best = i;
    return best;
}

/* Stand-in for an exported entry point the real driver does not have. */
static CUresult missing_entry_point(void) { return CUDA_ERROR_NOT_SUPPORTED; }

void *enc_resolve_export(int i) {
    void *lib = enc_libcuda();
    void *p = lib ? enc_real_dlsym(lib, enc_exports[i].name) : NULL;
    if (!p) {
        enc_log(ENC_LOG_WARN, "the driver has no %s (returning CUDA_ERROR_NOT_SUPPORTED)", enc_exports[i].name);
        p = (void *)missing_entry_point;
    }
    void *expected = NULL;
    if (!__atomic_compare_exchange_n(&enc_real_export[i], &expected, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return expected;
    return p;
}

/* ---- trampolines for entry points the headers do not describe ---------- */

static void *trampoline_target[ENC_TRAMPOLINES];
static char trampoline_name[ENC_TRAMPOLINES][64];
static int trampoline_used;

void *enc_trampoline_for(void *real, const char *name) {
#if defined(__x86_64__)
    int n = __atomic_load_n(&trampoline_used, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (__atomic_load_n(&trampoline_target[i], __ATOMIC_ACQUIRE) == real) return enc_trampolines[i];
    int i = __atomic_fetch_add(&trampoline_used, 1, __ATOMIC_ACQ_REL);
    if (i >= ENC_TRAMPOLINES) return NULL;
    strncpy(trampoline_name[i], name, sizeof trampoline_name[i] - 1); /* the caller's string may not live */
    __atomic_store_n(&trampoline_target[i], real, __ATOMIC_RELEASE);
    ENC_DEBUG("%s is not in the CUDA headers encore was built with: calls flush everything", name);
    return enc_trampolines[i];
#else
    (void)real;
    (void)name;
    return NULL;
#endif
}

void *enc_trampoline_enter(unsigned int index) {
    void *target = __atomic_load_n(&trampoline_target[index], __ATOMIC_ACQUIRE);
    enc_core_current_ctx_changed(1); /* an unknown entry point may change or destroy any current context */
    if (!enc_thr.guard && enc_hot.active) ENC_GUARDED {
            enc_stats_count_call(ENC_CLASS_FLUSH_ALL);
            enc_core_flush_all(ENC_FLUSH_ALL_CALL);
            enc_core_wide_call_begin(); /* a barrier only: we do not see the call return */
            enc_core_wide_call_end();
            enc_core_act_on_requests();
        }
    return target;
}

/* ---- hooked calls -------------------------------------------------------- */

/* The first argument of an OBJECT_ARG entry point, for this thread's call. */
static __thread uintptr_t hook_object __attribute__((tls_model("initial-exec")));

/* An error a released launch got, taken by enc_hook_pre for the call in
 * progress: enc_hook_post returns it instead of the call's CUDA_SUCCESS. */
static __thread CUresult pending_result __attribute__((tls_model("initial-exec")));

/* A call that observes one stream (a flush point on it) or any (a
 * flush-everything call) returns an error a held launch got when released
 * there, as CUDA calls return errors of earlier asynchronous work; not calls
 * whose success the program acts on (enc_policy_reports_pending). */
static void take_pending(int cls, uint32_t flags, CUstream stream, int per_thread, int one_stream) {
    if (!enc_policy_reports_pending((unsigned char)cls, flags)) return;
    pending_result = enc_core_take_error(stream, per_thread, !(cls == ENC_CLASS_FLUSH_STREAM && one_stream));
}

/* Code or a context goes away: the core drops what belongs to it. */
static void unload(int entry) {
    if (entry == ENC_E_cuModuleUnload)
        enc_core_unload_module((CUmodule)hook_object);
    else if (entry == ENC_E_cuLibraryUnload)
        enc_core_unload_library((CUlibrary)hook_object);
    else
        enc_core_module_unload(); /* a context: everything */
}

int enc_hook_pre(int entry, CUstream stream, int per_thread) {
    if (enc_thr.guard) return 0;
    enc_interpose_ensure_init();
    int cls = enc_entry_class[entry];
    if ((enc_entry_flags[entry] & ENC_F_CURRENT_CTX) || cls == ENC_CLASS_FLUSH_ALL) /* active or not */
        enc_core_current_ctx_changed(cls == ENC_CLASS_FLUSH_ALL); /* a context destroyed: on every thread */
    if (!enc_hot.active) {
        if (__atomic_load_n(&enc_hot.forked_child, __ATOMIC_RELAXED)) return 0; /* straight through: no lock, no join */
        enc_thr.guard = ENC_GUARD_OWN;
        enc_core_join_pending(); /* released before encore switched off */
        enc_thr.guard = ENC_GUARD_DRIVER;
        return 1;
    }
    enc_thr.guard = ENC_GUARD_OWN;
    enc_stats_count_call(cls);
    uint32_t flags = enc_entry_flags[entry];
    enc_flush_cause = entry + 1; /* what this call makes the core issue is counted against it */
    if (flags & ENC_F_UNLOAD) unload(entry);
    if ((flags & ENC_F_CONTEXT_GONE) && entry != ENC_E_cuCtxDestroy)
        enc_core_primary_context_before((CUdevice)hook_object);
    if (flags & ENC_F_FUNC_SET) enc_core_func_set_begin(NULL); /* a wrapper that cannot say which function */
    int one_stream = stream != ENC_NO_STREAM && stream != ENC_MANY_STREAMS;
    if (flags & ENC_F_ANY_EVENT) enc_core_event_observe_all(); /* a graph's event nodes: any stream's held events */
    if ((flags & ENC_F_STREAM_DESTROY) && one_stream)
        enc_core_stream_destroy(stream, per_thread); /* issues what it holds, then forgets it */
    else if ((flags & ENC_F_CAPTURE_BEGIN) && one_stream)
        enc_core_capture_prepare(stream, per_thread); /* issues everything held; encore stops calling the driver */
    else if (cls == ENC_CLASS_LAUNCH) /* a launch shape the engine does not defer (cooperative, legacy API) */
        enc_core_opaque_launch(one_stream ? stream : NULL, one_stream ? per_thread : -1);
    else if (cls == ENC_CLASS_FLUSH_STREAM && one_stream && stream != ENC_MANY_STREAMS) {
        enc_core_flush_stream(stream, per_thread,
                              (flags & ENC_F_CAPTURE_BEGIN) ? ENC_FLUSH_CAPTURE : ENC_FLUSH_STREAM_CALL);
        if (flags & ENC_F_PROGRAM_GRAPH) enc_core_program_graph(stream, per_thread);
    } else if (cls != ENC_CLASS_PASS)
        enc_core_flush_all(ENC_FLUSH_ALL_CALL); /* flush-all, unknown, or a stream call without one stream */
    enc_flush_cause = 0;
    take_pending(cls, flags, stream, per_thread, one_stream);
    if (cls == ENC_CLASS_FLUSH_ALL) enc_core_wide_call_begin();
    if (flags & ENC_F_WAITS) enc_core_wait_begin(); /* last: the driver's call alone is timed */
    enc_thr.guard = ENC_GUARD_DRIVER;
    return 1;
}

int enc_hook_pre_func_set(int entry, const enc_func_set *c) {
    if (enc_thr.guard) return 0;
    enc_interpose_ensure_init();
    if (!(enc_entry_flags[entry] & ENC_F_FUNC_SET) || !enc_hot.active) return enc_hook_pre(entry, ENC_NO_STREAM, 0);
    enc_thr.guard = ENC_GUARD_OWN;
    enc_stats_count_call(enc_entry_class[entry]);
    enc_flush_cause = entry + 1;
    enc_core_func_set_begin(c);
    enc_flush_cause = 0;
    enc_thr.guard = ENC_GUARD_DRIVER;
    return 1;
}

static CUresult post(int entry, CUstream stream, int per_thread, CUresult result);

/* After the driver call: encore's own code again, until the wrapper returns to the program. */
CUresult enc_hook_post(int entry, CUstream stream, int per_thread, CUresult result) {
    enc_thr.guard = ENC_GUARD_OWN;
    result = post(entry, stream, per_thread, result);
    enc_thr.guard = 0;
    return result;
}

static CUresult post(int entry, CUstream stream, int per_thread, CUresult result) {
    if (__builtin_expect(pending_result != CUDA_SUCCESS, 0)) {
        if (result == CUDA_SUCCESS) result = pending_result;
        pending_result = CUDA_SUCCESS;
    }
    if (enc_entry_class[entry] == ENC_CLASS_FLUSH_ALL) enc_core_wide_call_end();
    if (__builtin_expect(result != CUDA_SUCCESS, 0) && (enc_entry_flags[entry] & ENC_F_INIT))
        enc_core_driver_init_failed(result);
    if (!enc_hot.active) return result;
    uint32_t flags = enc_entry_flags[entry];
    if (flags & ENC_F_WAITS) enc_core_wait_end();
    if (flags & ENC_F_POLLS) enc_core_polled();
    if (flags & ENC_F_CAPTURE_BEGIN) enc_core_capture_begin(stream, per_thread, result);
    if (flags & ENC_F_CAPTURE_END) enc_core_capture_end(stream, per_thread, result);
    if ((flags & ENC_F_STREAM_DESTROY) && stream != ENC_NO_STREAM && stream != ENC_MANY_STREAMS)
        enc_core_stream_destroyed(stream, per_thread, result);
    if ((flags & ENC_F_STREAM_ATTRS) && result == CUDA_SUCCESS) enc_core_stream_attrs_changed();
    if (flags & ENC_F_INIT) enc_core_driver_initialized(result);
    if ((flags & ENC_F_CONTEXT_GONE) && entry == ENC_E_cuCtxDestroy)
        enc_core_context_destroyed((CUcontext)hook_object, result);
    else if (flags & ENC_F_CONTEXT_GONE)
        enc_core_primary_context_after((CUdevice)hook_object, entry == ENC_E_cuDevicePrimaryCtxReset, result);
    if (flags & ENC_F_FUNC_SET) enc_core_func_set_end(result);
    enc_core_note_result(result);
    enc_core_act_on_requests(); /* no lock of encore's is held here */
    return result;
}

int enc_hook_pre_obj(int entry, CUstream stream, int per_thread, uintptr_t object) {
    if (enc_thr.guard) return 0;
    hook_object = object;
    return enc_hook_pre(entry, stream, per_thread);
}

CUresult enc_hook_post_obj(int entry, CUstream stream, int per_thread, CUresult result, uintptr_t object) {
    hook_object = object; /* calls made meanwhile (inside the driver) may have set it */
    return enc_hook_post(entry, stream, per_thread, result);
}

void enc_hook_event(CUevent ev) {
    if (enc_thr.guard || !__atomic_load_n(&enc_n_ev_holders, __ATOMIC_RELAXED)) return;
    enc_thr.guard = 1;
    if (enc_hot.active) enc_core_event_observe(ev);
    enc_thr.guard = 0;
}

int enc_hook_pre_op(int entry, CUstream stream, int per_thread, const enc_op *op) {
    if (enc_thr.guard) return 0;
    enc_interpose_ensure_init();
    if (!enc_hot.active || !(enc_entry_flags[entry] & ENC_F_NODE)) return enc_hook_pre(entry, stream, per_thread);
    enc_thr.guard = 1;
    int cls = enc_entry_class[entry];
    enc_stats_count_call(cls);
    enc_flush_cause = entry + 1;
    int r = enc_core_op(op, stream, per_thread);
    if (r == 0) enc_core_flush_stream(stream, per_thread, ENC_FLUSH_STREAM_CALL); /* as any stream call */
    enc_flush_cause = 0;
    if (r == 2) {
        enc_core_act_on_requests();
        enc_thr.guard = 0;
        return 2;
    }
    take_pending(cls, 0, stream, per_thread, 1);
    if (enc_entry_flags[entry] & ENC_F_WAITS) enc_core_wait_begin(); /* last: the driver's call alone is timed */
    enc_thr.guard = ENC_GUARD_DRIVER;
    return r == 1 ? 3 : 1;
}

CUresult enc_hook_post_op(int entry, CUstream stream, int per_thread, CUresult result, int own) {
    if (own == 3 && result != CUDA_SUCCESS && enc_hot.active) {
        enc_thr.guard = 1;
        enc_core_op_failed(stream, per_thread);
        enc_thr.guard = 0;
    }
    return enc_hook_post(entry, stream, per_thread, result);
}

int enc_hook_launch_rests_ex(const CUlaunchConfig *config) {
    if (!config) return 0;
    for (unsigned i = 0; config->attrs && i < config->numAttrs; i++) /* a launch that records an event: the full path */
        if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ||
            config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT)
            return 0;
    return enc_core_launch_rests(config->hStream);
}

CUresult enc_hook_launch_ex(int entry, int per_thread, void *real, const CUlaunchConfig *config, CUfunction f,
                            void **params, void **extra) {
    (void)entry;
    if (!config) return ((PFN_cuLaunchKernelEx_v11060)real)(config, f, params, extra);
    for (unsigned i = 0; config->attrs && i < config->numAttrs; i++) /* a launch that records an event */
        if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT)
            enc_hook_event(config->attrs[i].value.programmaticEvent.event);
        else if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT)
            enc_hook_event(config->attrs[i].value.launchCompletionEvent.event);
    enc_launch l = {.shape = ENC_SHAPE_EX,
                    .per_thread = per_thread,
                    .real = real,
                    .f = f,
                    .grid = {config->gridDimX, config->gridDimY, config->gridDimZ},
                    .block = {config->blockDimX, config->blockDimY, config->blockDimZ},
                    .smem = config->sharedMemBytes,
                    .stream = config->hStream,
                    .params = params,
                    .extra = extra,
                    .config = config};
    return enc_core_launch(&l);
}
