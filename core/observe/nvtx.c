/* encore: NVTX ranges (ENCORE_NVTX=1); see nvtx.h.
 *
 * Range names are formatted into a stack buffer (no allocation) and pushed
 * with nvtxRangePushA on the calling thread, popped by enc_nvtx_end. Without
 * an NVTX tool attached the NVTX calls return at once. A build against CUDA
 * headers without nvtx3/ (pip's CUDA runtime headers) warns once instead. */
#include "core/observe/nvtx.h"

#include "base/enums.h"
#include "base/log.h"
#include "policy/options.h"

#include <stdio.h>
#include <stdlib.h>

#if defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#define ENC_HAVE_NVTX 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop
#endif
#endif

int enc_nvtx_on;

static const char *const flush_names[] = {
    "a call on the stream",        "a device-wide call",    "legacy stream order",
    "the flush deadline",          "the sequence was full", "a program capture",
    "a launch encore cannot copy", "process exit",          "a pause of the host",
};
_Static_assert(sizeof flush_names / sizeof flush_names[0] == ENC_FLUSH_REASON_COUNT, "a name for each flush reason");

const char *enc_flush_reason_name(int flush_reason) {
    return flush_reason >= 0 && flush_reason < ENC_FLUSH_REASON_COUNT ? flush_names[flush_reason] : NULL;
}

void enc_nvtx_init(void) {
    if (!enc_opt.nvtx) return;
#ifdef ENC_HAVE_NVTX
    nvtxInitialize(NULL); /* loads the tool (NVTX_INJECTION64_PATH) now, not in a launch */
    __atomic_store_n(&enc_nvtx_on, 1, __ATOMIC_RELAXED);
    if (!getenv("NVTX_INJECTION64_PATH"))
        enc_log(ENC_LOG_INFO, "ENCORE_NVTX=1, but no NVTX tool is attached (NVTX_INJECTION64_PATH is unset): "
                              "run the program under nsys profile to see the ranges");
#else
    enc_log(ENC_LOG_WARN, "ENCORE_NVTX=1, but this build of encore has no NVTX headers (nvtx3/nvToolsExt.h); "
                          "no ranges are marked");
#endif
}

#ifdef ENC_HAVE_NVTX
static void push(const char *text) { nvtxRangePushA(text); }
void enc_nvtx_end_(void) { nvtxRangePop(); }
#else
static void push(const char *text) { (void)text; }
void enc_nvtx_end_(void) {}
#endif

void enc_nvtx_replay_begin_(uint32_t seq, uint32_t launches) {
    char b[96];
    snprintf(b, sizeof b, "encore: sequence %u, %u launches", (unsigned)seq, (unsigned)launches);
    push(b);
}

void enc_nvtx_capture_begin_(uint32_t launches) {
    char b[96];
    snprintf(b, sizeof b, "encore: capture, %u launches", (unsigned)launches);
    push(b);
}

void enc_nvtx_eager_begin_(uint32_t launches, const char *why, int flush_reason) {
    char b[192];
    const char *name = enc_flush_reason_name(flush_reason);
    if (name)
        snprintf(b, sizeof b, "encore: eager, %u launches: %s (%s)", (unsigned)launches, why, name);
    else
        snprintf(b, sizeof b, "encore: eager, %u launches: %s", (unsigned)launches, why);
    push(b);
}
