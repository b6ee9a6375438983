/* encore: the cuGetProcAddress wrappers.
 *
 * cudart asks the driver's cuGetProcAddress for "cuGetProcAddress" itself
 * and then fetches every other entry point through the answer. We answer
 * with our wrapper, and for every other name hand out the wrapper of the
 * exact variant the driver chose: the pointer depends on the requested CUDA
 * version (cuCtxSynchronize at 13000 takes a CUcontext, at 12000 nothing)
 * and on the per-thread-default-stream flag (_ptsz/_ptds variants).
 *
 * We pick the variant from cudaTypedefs.h (newest version not above the
 * request); for a request newer than our headers we verify the pick (the
 * driver must return the same pointer for the headers' version). A pointer we cannot match to
 * a known signature (a driver newer than our headers) gets a trampoline that
 * flushes everything before calling it: default-deny. A pure pass-through
 * entry point (policy class PASS, no flags) is handed out as the driver's own
 * pointer: nothing to do there, so nothing to pay (ENCORE_WRAP_PASS=1 wraps
 * it too).
 *
 * One name the driver never has is answered here: "encoreSetActive", the
 * program's own switch (core/path/switch.c), CUresult fn(int active), for
 * benchmarks that alternate blocks with encore active and passing through
 * in one process. It is handed out whatever version or flags are asked for;
 * no symbol is exported for it. */
#define _GNU_SOURCE
#include <string.h>

#include "base/driver.h"
#include "core/path/engine.h"
#include "base/log.h"
#include "interpose/hooks.h"
#include "hooks_gen.h"

static CUresult real_gpa(void *real, int with_status, const char *sym, void **pfn, int ver, cuuint64_t flags,
                         CUdriverProcAddressQueryResult *status) {
    if (with_status) return ((PFN_cuGetProcAddress_v12000)real)(sym, pfn, ver, flags, status);
    return ((PFN_cuGetProcAddress_v11030)real)(sym, pfn, ver, flags);
}

static int variant_for_gpa(int with_status) {
    return enc_find_variant("cuGetProcAddress", with_status ? 12000 : 11030, 0);
}

/* Try candidate variant `v` for a pointer the driver returned for (sym, ver,
 * flags): the driver must give the same pointer for the variant's own
 * version. */
static int verify_variant(void *gpa, int with_status, const char *sym, int v, int ver, cuuint64_t flags, void *p) {
    /* Up to the headers' own version, the headers list every variant and the
     * pick is exact. Above it, the driver may have a newer variant: accept
     * the pick only if the driver answers the same for the headers' version. */
    if (ver <= ENC_HEADER_CUDA_VERSION) return 1;
    void *q = NULL;
    cuuint64_t f = enc_variants[v].per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                              : (flags & ~(cuuint64_t)CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    CUdriverProcAddressQueryResult st;
    CUresult r = CUDA_SUCCESS;
    ENC_GUARDED r = real_gpa(gpa, with_status, sym, &q, ENC_HEADER_CUDA_VERSION, f, &st);
    return r == CUDA_SUCCESS && q == p;
}

static void *wrap_proc(void *gpa, int with_status, const char *sym, int ver, cuuint64_t flags, void *p) {
    if (enc_is_ours(p)) return p; /* a driver whose own references bind to our exports */
    if (strcmp(sym, "cuGetProcAddress") == 0) {
        int v = variant_for_gpa(ver >= 12000);
        if (v < 0) return p;
        void *expected = NULL;
        __atomic_compare_exchange_n(&enc_real_variant[v], &expected, p, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
        return enc_variants[v].wrapper;
    }
    int want_pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    int cands[2] = {enc_find_variant(sym, ver, want_pt), want_pt ? enc_find_variant(sym, ver, 0) : -1};
    for (int c = 0; c < 2; c++) {
        int v = cands[c];
        if (v < 0 || !verify_variant(gpa, with_status, sym, v, ver, flags, p)) continue;
        void *expected = NULL;
        if (!__atomic_compare_exchange_n(&enc_real_variant[v], &expected, p, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED) &&
            expected != p) {
            ENC_WARN_ONCE("cuGetProcAddress(\"%s\") returned two different pointers for %s; "
                          "calls through the second flush everything",
                          sym, enc_variants[v].pfn);
            break;
        }
        return enc_hand_out_real(enc_variants[v].entry) ? p : enc_variants[v].wrapper;
    }
    void *t = enc_trampoline_for(p, sym);
    if (t) return t;
    enc_core_disable("no trampoline left for an entry point the CUDA headers do not describe");
    return p;
}

#define ENC_SWITCH_NAME "encoreSetActive"

static CUresult hand_out_switch(void **pfn, CUdriverProcAddressQueryResult *status) {
    CUresult (*fn)(int) = enc_core_set_active;
    if (!pfn) return CUDA_ERROR_INVALID_VALUE;
    memcpy(pfn, &fn, sizeof *pfn);
    if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

static CUresult gpa_common(void *real, int with_status, const char *sym, void **pfn, int ver, cuuint64_t flags,
                           CUdriverProcAddressQueryResult *status) {
    if (sym && sym[0] == 'e' && strcmp(sym, ENC_SWITCH_NAME) == 0)
        return hand_out_switch(pfn, with_status ? status : NULL);
    if (!real) {
        if (pfn) *pfn = NULL;
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    CUresult r = real_gpa(real, with_status, sym, pfn, ver, flags, status);
    if (r != CUDA_SUCCESS || !pfn || !*pfn || !sym || enc_thr.guard) return r;
    enc_interpose_ensure_init();
    if (!enc_hot.active && !enc_hot.counting_only) return r; /* switched off: the driver's own pointers */
    ENC_GUARDED *pfn = wrap_proc(real, with_status, sym, ver, flags, *pfn);
    return r;
}

/* PFN_cuGetProcAddress_v11030: handed to callers that asked for version < 12000. */
CUresult enc_special_cuGetProcAddress_v11030(const char *symbol, void **pfn, int ver, cuuint64_t flags) {
    int v = variant_for_gpa(0);
    return gpa_common(v >= 0 ? enc_real_variant[v] : NULL, 0, symbol, pfn, ver, flags, NULL);
}

CUresult enc_special_cuGetProcAddress_v12000(const char *symbol, void **pfn, int ver, cuuint64_t flags,
                                             CUdriverProcAddressQueryResult *status) {
    int v = variant_for_gpa(1);
    return gpa_common(v >= 0 ? enc_real_variant[v] : NULL, 1, symbol, pfn, ver, flags, status);
}

/* The exported ABI names. */
CUresult enc_special_export_cuGetProcAddress(const char *symbol, void **pfn, int ver, cuuint64_t flags) {
    return gpa_common(ENC_REAL_EXPORT(enc_find_export("cuGetProcAddress")), 0, symbol, pfn, ver, flags, NULL);
}

CUresult enc_special_export_cuGetProcAddress_v2(const char *symbol, void **pfn, int ver, cuuint64_t flags,
                                                CUdriverProcAddressQueryResult *status) {
    return gpa_common(ENC_REAL_EXPORT(enc_find_export("cuGetProcAddress_v2")), 1, symbol, pfn, ver, flags, status);
}

ENC_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver, cuuint64_t flags)
    __attribute__((alias("enc_special_export_cuGetProcAddress")));
ENC_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult *status)
    __attribute__((alias("enc_special_export_cuGetProcAddress_v2")));
