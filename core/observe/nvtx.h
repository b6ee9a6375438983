/* encore: NVTX ranges around encore's own work (ENCORE_NVTX=1), so that
 * Nsight Systems shows, beside the program's kernels, each replayed graph
 * ("encore: sequence 3, 100 launches"), each capture and each eager
 * fallback with its reason. The NVTX v3 headers of the CUDA toolkit are
 * header-only (no link dependency); a profiler attaches through
 * NVTX_INJECTION64_PATH. Off, each call point costs one branch.
 *
 * Every begin is followed by enc_nvtx_end() on the same thread. */
#ifndef ENCORE_NVTX_H
#define ENCORE_NVTX_H

#include <stdint.h>

extern int enc_nvtx_on; /* set once at start-up (enc_nvtx_init), read-only afterwards */

/* At start-up, before encore goes active: loads the NVTX tool if
 * ENCORE_NVTX=1 (so that no launch path does it). */
void enc_nvtx_init(void);

void enc_nvtx_replay_begin_(uint32_t seq, uint32_t launches);
void enc_nvtx_capture_begin_(uint32_t launches);
void enc_nvtx_eager_begin_(uint32_t launches, const char *why, int flush_reason);
void enc_nvtx_end_(void);

/* A flush point's reason in words (enum enc_flush_reason), as the eager ranges and the trace
 * (ENCORE_LOG_LEVEL=trace, core/streams/sequence.c) give it; NULL for no reason. */
const char *enc_flush_reason_name(int flush_reason);

/* A replayed graph: sequence id, launches it stands for. */
static inline void enc_nvtx_replay(uint32_t seq, uint32_t launches) {
    if (__builtin_expect(enc_nvtx_on, 0)) enc_nvtx_replay_begin_(seq, launches);
}
/* A capture (and instantiation) of a sequence of `launches` launches. */
static inline void enc_nvtx_capture(uint32_t launches) {
    if (__builtin_expect(enc_nvtx_on, 0)) enc_nvtx_capture_begin_(launches);
}
/* Held launches issued one by one: why (text), and the flush point that
 * ended the hold (enum enc_flush_reason, or -1). */
static inline void enc_nvtx_eager(uint32_t launches, const char *why, int flush_reason) {
    if (__builtin_expect(enc_nvtx_on, 0)) enc_nvtx_eager_begin_(launches, why, flush_reason);
}
static inline void enc_nvtx_end(void) {
    if (__builtin_expect(enc_nvtx_on, 0)) enc_nvtx_end_();
}

#endif
