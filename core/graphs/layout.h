/* encore: kernels' parameter layouts, cached per function (layout.c). */
#ifndef ENCORE_LAYOUT_H
#define ENCORE_LAYOUT_H

#include <cuda.h>

#include "core/state/types.h"

/* Layouts, and the cache itself, are read only with a stream state's mutex
 * held (or the cache's own lock): that is what lets a retired layout be freed
 * once every state's mutex has been taken after its retirement (reclaim.c). */
/* A zeroed layout with room for n parameters, aligned to a cache line (types.h: its launch fields
 * and first offsets then take one), or NULL; free() frees it. */
enc_layout *enc_layout_new(uint32_t n);
const enc_layout *enc_layout_cached(CUfunction f); /* NULL if not looked up yet */
/* enc_layout_cached, remembered per function in m (a stream's, read and written with its
 * mutex held): a function's layout changes only when it is retired, and whoever retires
 * layouts forgets what every stream remembers (enc_layout_forget_remembered) when it takes
 * each state's mutex after retiring them, before freeing them. */
static inline const enc_layout *enc_layout_remembered(enc_layout_memo *m, CUfunction f) {
    enc_layout_memo *e = &m[((uintptr_t)f * ENC_GOLDEN_64) >> (64 - ENC_LAYOUT_MEMO_BITS)];
    if (e->f == f) return e->L;
    const enc_layout *L = enc_layout_cached(f);
    if (L) {
        e->f = f;
        e->L = L;
    }
    return L;
}
static inline void enc_layout_forget_remembered(enc_layout_memo *m) {
    for (int i = 0; i < 1 << ENC_LAYOUT_MEMO_BITS; i++) m[i] = (enc_layout_memo){NULL, NULL};
}
const enc_layout *enc_layout_for(CUfunction f); /* looks it up (driver calls) if needed */
/* Take the layouts `pick` chooses out of the cache: they are marked retired
 * and returned as a list (linked by retired_next), NULL if none. Launches may
 * still hold them: free them (enc_layouts_free) only after every stream
 * state's mutex was taken once since, and the next retirement only after
 * that (the cache is double-buffered: the one before is reused). */
typedef int (*enc_layout_pick)(const enc_layout *L, const void *arg);
enc_layout *enc_layouts_retire(enc_layout_pick pick, const void *arg);
enc_layout *enc_layouts_reset(void); /* retires them all */
void enc_layouts_free(enc_layout *retired);
/* A changed attribute of f (a CUkernel if kernel; NULL: any) concerns the layouts of the same code. */
unsigned enc_layouts_mark_code(CUfunction f, int kernel); /* layouts of f's code get a new stamp, returned */
void enc_layouts_distrust(unsigned stamp);                /* those layouts' launches are never held again */

#endif
