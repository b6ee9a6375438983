/* encore: recording a launch into a sequence.
 *
 * A recorded launch keeps what it takes to issue it again later: function,
 * configuration, a copy of its argument bytes and launch attributes (in the
 * sequence's arena), and two fingerprints: its structure (function, grid,
 * block, shared memory, argument size, attributes) and its argument bytes.
 * Padding between parameters is zeroed, so equal launches hash equally. The
 * sequence hashes fold in each launch as it becomes part of the sequence.
 *
 * Nothing here allocates per launch: the arena grows, rarely, by doubling. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/log.h"
#include "core/state/fingerprint.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"

#define ARENA_INITIAL_BYTES 16384 /* grows by doubling */

static inline size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* The structure-only sequence hash, one launch further. */
static inline uint64_t shash_step(uint64_t h, uint64_t sfp) { return (h ^ sfp) * ENC_GOLDEN_64 + 1; }

int enc_record_init(enc_seq *seq, uint32_t max_launches) {
    seq->recs = calloc(max_launches, sizeof(enc_rec));
    seq->arena_cap = ARENA_INITIAL_BYTES;
    seq->arena = malloc(seq->arena_cap);
    return seq->recs && seq->arena ? 0 : -1;
}

static __attribute__((noinline)) int arena_grow(enc_seq *seq, size_t bytes) {
    size_t cap = seq->arena_cap;
    while (cap < seq->arena_used + bytes) cap *= 2;
    unsigned char *a = realloc(seq->arena, cap); /* rare: amortised over the stream's life */
    if (!a) return -1;
    seq->arena = a;
    seq->arena_cap = cap;
    return 0;
}

static inline int arena_reserve(enc_seq *seq, size_t bytes) {
    return seq->arena_used + bytes <= seq->arena_cap ? 0 : arena_grow(seq, bytes);
}

/* Said once a process, at ENCORE_LOG_LEVEL=info: launches with it will not replay. */
static void unknown_attr(CUlaunchAttributeID id) {
    static int told;
    if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
        enc_log(ENC_LOG_INFO,
                "a launch attribute with id %d, which encore does not re-issue: launches with it "
                "run eagerly, as the program made them (later ids are not said)",
                (int)id);
}

/* Copy the launch attributes, each value zero-padded, so that equal
 * attributes hash equally. -1 for those encore cannot re-issue, and for any
 * it does not know (default-deny: an attribute added after these headers may
 * name an event or hand something back, as a device-updatable node does: the
 * launch goes to the driver as the program made it). */
static __attribute__((noinline)) int copy_attrs(const CUlaunchConfig *cfg, CUlaunchAttribute *out) {
    for (unsigned i = 0; i < cfg->numAttrs; i++) {
        const CUlaunchAttribute *a = &cfg->attrs[i];
        memset(&out[i], 0, sizeof out[i]);
        out[i].id = a->id;
        switch ((int)a->id) { /* int: ids that older headers do not name are cases too */
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
            out[i].value.clusterDim.x = a->value.clusterDim.x;
            out[i].value.clusterDim.y = a->value.clusterDim.y;
            out[i].value.clusterDim.z = a->value.clusterDim.z;
            break;
        case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
        case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
            out[i].value.priority = a->value.priority; /* all four are one int */
            break;
        case CU_LAUNCH_ATTRIBUTE_IGNORE:
        case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        case 11: /* CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION (named in newer headers than 12.4's) */
        case 14: /* CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT */
        case 16: /* CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING */
            out[i].value = a->value; /* values a graph node keeps as they are */
            break;
        case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
        case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT: return -1; /* events and grid-wide sync: run eagerly */
        default: /* 13 (a device-updatable node: its handle is handed back) and any id not known here */
            unknown_attr(a->id);
            return -1;
        }
    }
    return 0;
}

/* One parameter's bytes: the common sizes as plain moves, not a call. */
static inline void copy_param(unsigned char *dst, const void *src, uint32_t size) {
    switch (size) {
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, size);
    }
}

/* Arguments given one pointer per parameter: copy each, zero the padding.
 * Parameters in ascending order (all that the driver reports, in practice)
 * go in one pass, each gap zeroed on the way. */
static int copy_params(void **params, const enc_layout *L, unsigned char *args) {
    uint32_t end = 0;
    if (L->ascending) {
        for (uint32_t i = 0; i < L->nparams; i++) {
            uint32_t off = L->off[i], size = enc_layout_size(L, i);
            if (!params[i]) return -1;
            if (off > end) memset(args + end, 0, off - end);
            copy_param(args + off, params[i], size);
            end = off + size;
        }
        return 0;
    }
    for (uint32_t i = 0; i < L->nparams; i++) {
        if (!params[i]) return -1;
        memcpy(args + L->off[i], params[i], enc_layout_size(L, i));
    }
    for (uint32_t i = 0; i < L->nparams; i++) {
        if (L->off[i] > end) memset(args + end, 0, L->off[i] - end);
        end = L->off[i] + enc_layout_size(L, i);
    }
    return 0;
}

/* Arguments given as one packed buffer (CU_LAUNCH_PARAM_BUFFER_POINTER). The
 * buffer may be shorter than the parameters: the driver takes the bytes it
 * is given and leaves the rest undefined, and NCCL passes only the part of its
 * 4 KB argument struct its kernel reads. The rest is recorded as zeros (the
 * re-issued launch passes whole parameters; the kernel reads none of them). */
static __attribute__((noinline)) int copy_extra(void **extra, const enc_layout *L, unsigned char *args) {
    const void *buf = NULL;
    size_t size = 0;
    for (void **e = extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
        if (*e == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buf = e[1];
        else if (*e == CU_LAUNCH_PARAM_BUFFER_SIZE && e[1])
            size = *(size_t *)e[1];
        else
            return -1; /* a key encore does not know, or no size: the driver answers */
    }
    if (!buf || (!size && L->argbytes)) return -1;
    if (size >= L->argbytes) {
        memcpy(args, buf, L->argbytes);
    } else {
        memcpy(args, buf, size);
        memset(args + size, 0, L->argbytes - size);
    }
    return 0;
}

static int copy_args(const enc_launch *l, const enc_layout *L, unsigned char *args) {
    /* both forms at once: the driver refuses it (cuLaunchKernel's documentation), so it is not recorded
     * as the launch the parameters alone would make: it goes to the driver, which answers */
    if (l->params) return __builtin_expect(l->extra != NULL, 0) ? -1 : copy_params(l->params, L, args);
    if (l->extra) return copy_extra(l->extra, L, args);
    return L->nparams ? -1 : 0;
}

/* Why a launch could not be recorded (enc_record_launch's negative codes). */
enum { REC_ATTR_COUNT = -1, REC_NO_MEMORY = -2, REC_ARGS = -3, REC_ATTR = -4 };
const char *enc_record_why(int code) {
    switch (code) {
    case REC_ATTR_COUNT: return "more launch attributes than encore keeps";
    case REC_NO_MEMORY: return "out of memory";
    case REC_ARGS:
        return "its arguments could not be read (a missing parameter pointer, an empty or unknown packed form)";
    case REC_ATTR:
        return "a launch attribute encore cannot re-issue (cooperative, programmatic or completion event, "
               "device-updatable, or one it does not know)";
    default: return "unknown";
    }
}

int enc_record_launch(enc_seq *seq, const enc_launch *l, const enc_layout *L) {
    uint32_t nattrs = l->config ? l->config->numAttrs : 0;
    if (nattrs > ENC_MAX_ATTRS) return REC_ATTR_COUNT;
    size_t attr_bytes = nattrs * sizeof(CUlaunchAttribute);
    size_t need = align8(L->argbytes) + attr_bytes;
    if (arena_reserve(seq, need) != 0) return REC_NO_MEMORY;
    unsigned char *args = seq->arena + seq->arena_used;
    if (copy_args(l, L, args) != 0) return REC_ARGS;
    CUlaunchAttribute *attrs = (CUlaunchAttribute *)(void *)(args + align8(L->argbytes));
    if (nattrs && copy_attrs(l->config, attrs) != 0) return REC_ATTR;

    enc_rec *r = &seq->recs[seq->n];
    r->f = l->f;
    r->L = L;
    memcpy(r->grid, l->grid, sizeof r->grid);
    memcpy(r->block, l->block, sizeof r->block);
    r->smem = l->smem;
    r->nattrs = nattrs;
    r->arg_off = (uint32_t)seq->arena_used;
    r->attr_off = (uint32_t)((unsigned char *)attrs - seq->arena);
    uint64_t sfp = enc_structural_fp((const void *)l->f, l->block, l->smem, L->argbytes, nattrs);
    if (nattrs) sfp = XXH3_64bits_withSeed(attrs, attr_bytes, sfp);
    r->sfp = sfp;
    r->afp = enc_fp_args(args, L->argbytes, l->grid);
    seq->arena_used += need;
    return 0;
}

void enc_record_hash(enc_seq *seq) {
    uint64_t hash = 0, shash = 0, chash = 0;
    for (uint32_t i = 0; i < seq->n; i++) {
        const enc_rec *r = &seq->recs[i];
        uint64_t pair[2] = {r->sfp, r->afp};
        hash = XXH3_64bits_withSeed(pair, sizeof pair, hash);
        shash = shash_step(shash, r->sfp);
        chash = shash_step(chash, r->sfp ^ enc_fp_grid(r->grid));
    }
    seq->hash = hash;
    seq->shash = shash;
    seq->chash = chash;
}

void enc_record_reset(enc_seq *seq) {
    seq->n = 0;
    seq->nops = 0;
    seq->arena_used = 0;
    seq->poisoned = 0;
    seq->fully_replayed = 0;
    seq->ended_by_call = 0;
    seq->pause_cut = 0;
    seq->end_why = 0;
    seq->replayed_by_patch = 0;
    seq->patched_grid = 0;
    seq->hash = 0;
    seq->shash = 0;
    seq->chash = 0;
}

enc_detached_rec enc_record_detach_pending(enc_seq *seq) {
    enc_detached_rec p = {.rec = seq->recs[seq->n]};
    p.off = p.rec.arg_off;
    p.len = seq->arena_used - p.off;
    seq->arena_used = p.off;
    return p;
}

void enc_record_attach_pending(enc_seq *seq, const enc_detached_rec *p) {
    memmove(seq->arena, seq->arena + p->off, p->len);
    enc_rec r = p->rec;
    r.arg_off -= (uint32_t)p->off;
    r.attr_off -= (uint32_t)p->off;
    seq->recs[seq->n] = r;
    seq->arena_used = p->len;
}
