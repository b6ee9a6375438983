/* encore: matching held launches against graphs, and releasing them.
 *
 * While a stream holds, its launches walk the trie (keyed on structure).
 * When they are released, they are compared byte for byte with the graphs
 * ending at the trie node they reached; on a full match one graph launch
 * replaces them. With ENCORE_PATCH, a graph of the same structure whose
 * launches differ only in kernel arguments is patched (one
 * cuGraphExecKernelNodeSetParams per changed launch, well under an eager
 * launch's cost) and launched. Otherwise the held launches
 * are issued eagerly in their original order: the program sees exactly what
 * it would have seen without encore.
 *
 * Three things release what a stream holds: a flush point while the
 * sequence goes on (legacy-stream order, the deadline), the end of the
 * sequence, and a launch that continues no graph (a divergence). Everything
 * here runs with the stream's mutex held. */
#define _GNU_SOURCE
#include <string.h>

#include "base/driver.h"
#include "base/log.h"
#include "core/graphs/devpatch.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/state/gate.h"
#include "core/graphs/worth.h"
#include "core/observe/nvtx.h"
#include "policy/options.h"

/* ---- comparing launches -------------------------------------------------------------- */

static inline int same_structure(const enc_rec *a, const unsigned char *aa, const enc_rec *b, const unsigned char *ba) {
    if (a->sfp != b->sfp || a->f != b->f || a->smem != b->smem || a->nattrs != b->nattrs ||
        memcmp(a->block, b->block, sizeof a->block) || a->L->argbytes != b->L->argbytes)
        return 0;
    return a->nattrs == 0 || memcmp(aa + a->attr_off, ba + b->attr_off, a->nattrs * sizeof(CUlaunchAttribute)) == 0;
}

/* The arguments and the grid (fingerprint.h: the grid goes with the arguments). */
static inline int same_args(const enc_rec *a, const unsigned char *aa, const enc_rec *b, const unsigned char *ba) {
    return a->afp == b->afp && memcmp(a->grid, b->grid, sizeof a->grid) == 0 &&
           memcmp(aa + a->arg_off, ba + b->arg_off, a->L->argbytes) == 0;
}

/* May a launch with r's attributes have its arguments patched into the node
 * captured from it (same attributes: same_structure)? Two are known to
 * survive cuGraphExecKernelNodeSetParams (gpu_nodes_probe rule 14, H200,
 * 2026-11-26): programmatic stream serialization, the kind of the node's
 * edge (llama.cpp launches every kernel so), and a cluster shape (CUTLASS's
 * and cuBLAS's Hopper kernels). The others (priority, sync domain, access
 * policy...) were not probed, so launches with them are not patched. A
 * launch whose grid changed from the captured one's is not patched with a
 * cluster shape: the grid must stay a multiple of it, and what the driver
 * does with a patch that breaks that rule was not probed (an eager launch
 * is refused). */
static int attrs_patchable(const enc_rec *r, const unsigned char *arena, const enc_rec *captured) {
    const CUlaunchAttribute *a = (const CUlaunchAttribute *)(const void *)(arena + r->attr_off);
    for (uint32_t i = 0; i < r->nattrs; i++) {
        if (a[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) continue;
        if (a[i].id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION || memcmp(r->grid, captured->grid, sizeof r->grid))
            return 0;
    }
    return 1;
}

/* First argument that differs (for the report). */
static int first_diff_arg(const enc_rec *a, const unsigned char *aa, const enc_rec *b, const unsigned char *ba) {
    const enc_layout *L = a->L;
    for (uint32_t i = 0; i < L->nparams; i++)
        if (memcmp(aa + a->arg_off + L->off[i], ba + b->arg_off + L->off[i], enc_layout_size(L, i))) return (int)i;
    return -1;
}

/* How many of the held launches, from the first, equal g's (g->len == seq->n). */
static uint32_t common_prefix(const enc_seq *seq, const enc_graph *g) {
    uint32_t i = 0;
    while (i < seq->n && same_structure(&seq->recs[i], seq->arena, &g->recs[i], g->arena) &&
           same_args(&seq->recs[i], seq->arena, &g->recs[i], g->arena))
        i++;
    return i;
}

/* How close the nearest graph came, when none matched. */
typedef struct mismatch {
    enc_graph *closest; /* the graph that matched the most launches, or NULL */
    uint32_t pos;       /* the first launch that differs from it */
    int arg;            /* the first argument of that launch that differs, or -1 */
} mismatch;

/* A graph ending at trie node `node` equal to the held launches, or NULL. */
static enc_graph *exact_match(const enc_stream_state *st, uint32_t node) {
    const enc_seq *seq = &st->seq;
    uint64_t key = enc_args_key(seq->recs, seq->n);
    for (enc_graph *g = st->store.nodes[node].graphs; g; g = g->next_at_node)
        if (g->len == seq->n && g->args_key == key && common_prefix(seq, g) == seq->n) return g;
    return NULL;
}

/* How close the nearest graph ending at st->node came, when none replayed
 * (the divergence report): only then, since it reads every graph's records. */
static mismatch closest_graph(const enc_stream_state *st) {
    const enc_seq *seq = &st->seq;
    mismatch m = {.closest = NULL, .pos = 0, .arg = -1};
    for (enc_graph *g = st->store.nodes[st->node].graphs; g; g = g->next_at_node) {
        if (g->len != seq->n) continue;
        uint32_t i = common_prefix(seq, g);
        if (!m.closest || i > m.pos) {
            m.closest = g;
            m.pos = i;
        }
    }
    if (m.closest) m.arg = first_diff_arg(&seq->recs[m.pos], seq->arena, &m.closest->recs[m.pos], m.closest->arena);
    return m;
}

/* ---- patching changed arguments into a graph ----------------------------------------- */

/* A graph ending at st->node whose launches all have the held launches'
 * structure, differing only in kernel arguments (and only where no launch
 * attribute is set), in grids (only in a graph captured for its structure:
 * one captured for a sequence or a configuration keeps its grids, learn.c)
 * and in stream operations that can be patched (nodes.c: another event, copy
 * ends and size, memset destination and width), or
 * NULL: the one with fewest differences. Patching every launch still costs less than issuing
 * them: a ring of buffers that gives each iteration new addresses replays
 * one patched graph until a buffer set has come three times (learn.c). */
static enc_graph *patchable(const enc_stream_state *st, uint32_t node) {
    if (!enc_opt.patch) return NULL;
    const enc_seq *seq = &st->seq;
    enc_graph *best = NULL;
    uint32_t best_k = UINT32_MAX;
    for (enc_graph *g = st->store.nodes[node].graphs; g; g = g->next_at_node) {
        if (g->len != seq->n || !g->knodes || g->patch_refusals >= ENC_PATCH_REFUSALS) continue;
        uint32_t k = 0, i = 0;
        for (; i < seq->n && k < best_k; i++) { /* a graph with as many differences as the best cannot win */
            if (!same_structure(&seq->recs[i], seq->arena, &g->recs[i], g->arena)) break;
            if (same_args(&seq->recs[i], seq->arena, &g->recs[i], g->arena)) continue;
            /* a device-patched graph takes arguments only: a grid and arguments set on one node in one launch
             * were refused on the H200 (devpatch.c) */
            if ((!g->grid_free || g->dev) && memcmp(seq->recs[i].grid, g->recs[i].grid, sizeof seq->recs[i].grid))
                break;
            if (seq->recs[i].nattrs && !attrs_patchable(&seq->recs[i], seq->arena, &g->recs[i])) break;
            if (seq->recs[i].L->is_op && !enc_op_patchable(&seq->recs[i], seq->arena, &g->recs[i], g->arena)) break;
            k++;
        }
        if (i == seq->n && k < best_k) {
            best = g;
            best_k = k;
            if (k <= 1) break; /* none has fewer: 0 would have been an exact match */
        }
    }
    return best;
}

/* g's record i follows held launch h (of arena), now written into its node: its arguments, grid, fingerprint. */
static void follow(enc_graph *g, uint32_t i, const enc_rec *h, const unsigned char *arena) {
    memcpy(g->arena + g->recs[i].arg_off, arena + h->arg_off, h->L->argbytes);
    memcpy(g->recs[i].grid, h->grid, sizeof h->grid);
    g->recs[i].afp = h->afp;
}

/* Write the held launches' arguments (and ops) into g's graph where they
 * differ. g's recorded arguments follow every node patched, so g stays exact
 * even when a later node's patch fails. *op_failed: the refused patch was an
 * op's (nodes.c said so), not a kernel's; *written: the nodes patched; *grid:
 * the kernel nodes of them given another grid. */
static CUresult patch_nodes(const enc_stream_state *st, enc_graph *g, int *op_failed, uint32_t *written, int *grid) {
    const enc_seq *seq = &st->seq;
    void *ptrs[ENC_MAX_PARAMS];
    CUresult r = CUDA_SUCCESS;
    for (uint32_t i = 0; i < seq->n; i++) {
        const enc_rec *h = &seq->recs[i];
        if (same_args(h, seq->arena, &g->recs[i], g->arena)) continue;
        if (h->L->is_op) {
            r = enc_op_patch(g->exec, g->knodes[i].node, h, seq->arena, __atomic_load_n(&st->ctx, __ATOMIC_RELAXED));
            *op_failed = r != CUDA_SUCCESS;
        } else {
            CUDA_KERNEL_NODE_PARAMS_v1 kp = {.func = g->knodes[i].func,
                                             .gridDimX = h->grid[0],
                                             .gridDimY = h->grid[1],
                                             .gridDimZ = h->grid[2],
                                             .blockDimX = h->block[0],
                                             .blockDimY = h->block[1],
                                             .blockDimZ = h->block[2],
                                             .sharedMemBytes = h->smem,
                                             .kernelParams = enc_rec_params(h, seq->arena, ptrs),
                                             .extra = NULL};
            r = enc_drv.graphExecKernelNodeSetParams(g->exec, g->knodes[i].node, &kp);
        }
        if (r != CUDA_SUCCESS) break;
        (*written)++;
        if (!h->L->is_op && memcmp(g->recs[i].grid, h->grid, sizeof h->grid)) (*grid)++;
        follow(g, i, h, seq->arena);
    }
    g->args_key = enc_args_key(g->recs, g->len); /* once, for every node patched */
    return r;
}

/* The same into slot s of g's ring (ENCORE_DEVICE_PATCH, devpatch.c), at every replay of a device-patched graph,
 * exact ones too (a node once patched is set by every launch's slot): the updater applies them on the GPU when
 * the graph runs. g's records are brought up to date only once the launch went out (patched_dev). */
static CUresult patch_dev(const enc_stream_state *st, const enc_graph *g, enc_dev_slot *s, uint32_t *written) {
    const enc_seq *seq = &st->seq;
    for (uint32_t i = 0; i < seq->n; i++) {
        int k = enc_devpatch_add(g->dev, s, i, &seq->recs[i], seq->arena, &g->recs[i], g->arena);
        if (k < 0) return CUDA_ERROR_INVALID_VALUE; /* the slot is sized for every record: it cannot happen */
        *written += (uint32_t)k;
    }
    return CUDA_SUCCESS;
}

/* The device-patched launch went out: g's records take the held launches' arguments. */
static void patched_dev(const enc_stream_state *st, enc_graph *g) {
    const enc_seq *seq = &st->seq;
    for (uint32_t i = 0; i < seq->n; i++) follow(g, i, &seq->recs[i], seq->arena);
    g->args_key = enc_args_key(g->recs, g->len);
}

/* ---- issuing what is held -------------------------------------------------------------- */

/* Replay g for the held launches, patching their changed arguments into it
 * first when `patch`. Returns 1 if the graph launch went out; 0 if not, and
 * the caller issues the held launches eagerly: a failed graph launch drops g
 * (one warning). A refused patch is g's alone: the held launches go out
 * eagerly with their own results, the program's calls keep theirs, and
 * patching goes on (g itself is not patched again after ENC_PATCH_REFUSALS
 * refusals); one warning. */
static int replay(enc_stream_state *st, enc_graph *g, int patch) {
    int pushed, side;
    CUstream s = enc_stream_begin_issue(st, &pushed, &side);
    int op_failed = 0, grid = 0;
    uint32_t written = 0;
    uint64_t t0 = enc_now_ns(); /* with last_used below: the replay's cost (report's time) */
    enc_dev_slot *slot = NULL;
    if (g->dev && (enc_devpatch_broken() || !(slot = enc_devpatch_slot(g->dev)))) {
        enc_stream_end_issue(st, pushed, side);
        if (enc_devpatch_broken()) /* the GPU refused an update (devpatch.c): its graphs go */
            enc_store_drop_graph(&st->store, g, 0);
        else /* the GPU has not taken its slot yet: eagerly */
            ENC_TSTAT_ADD(device_ring_full, 1);
        return 0;
    }
    CUresult r = slot    ? patch_dev(st, g, slot, &written)
                 : patch ? patch_nodes(st, g, &op_failed, &written, &grid)
                         : CUDA_SUCCESS;
    if (written) { /* those before a refusal were written too */
        ENC_TSTAT_ADD(nodes_patched, written);
        if (slot) ENC_TSTAT_ADD(nodes_patched_on_device, written);
        if (grid) ENC_TSTAT_ADD(grids_patched, (uint64_t)grid);
        ENC_TSTAT_ADD(patch_ns, enc_now_ns() - t0);
    }
    if (r != CUDA_SUCCESS) {
        enc_stream_end_issue(st, pushed, side);
        g->patch_refusals++;
        if (!op_failed) /* an op's refusal was said by nodes.c */
            ENC_WARN_ONCE("patching changed arguments into a captured graph failed (CUDA error %d); that sequence "
                          "ran eagerly, and a graph refused %d times is no longer patched",
                          (int)r, ENC_PATCH_REFUSALS);
        return 0;
    }
    enc_nvtx_replay(g->id, st->seq.n);
    if (slot) enc_devpatch_launching(slot);
    r = AUDITED(enc_drv.graphLaunch(g->exec, s));
    if (slot) {
        enc_devpatch_launched(g->dev, slot, r == CUDA_SUCCESS);
        if (r == CUDA_SUCCESS && written) patched_dev(st, g);
    }
    enc_nvtx_end();
    enc_stream_end_issue(st, pushed, side);
    if (r != CUDA_SUCCESS) {
        if (enc_error_is_sticky(r)) /* the eager issue fails the same way: switch off (failure.c) */
            enc_request_disable(r);
        else
            ENC_WARN_ONCE("launching a captured graph failed (CUDA error %d); that sequence now runs eagerly", (int)r);
        enc_store_drop_graph(&st->store, g, 0);
        return 0;
    }
    if (g->hits++ == 0) {
        enc_capture_paid(&st->store, g->node);
        ENC_DEBUG("graph %llu replayed for the first time", (unsigned long long)g->id);
    }
    g->last_used = enc_now_ns();
    ENC_TSTAT_ADD(replay_ns, g->last_used - t0);
    ENC_ACCT_ADD(st, ENC_ACCT_REPLAY_NS, g->last_used - t0);
    ENC_ACCT_ADD(st, ENC_ACCT_REPLAYED, st->seq.n - st->seq.nops);
    st->seq.replayed_by_patch = patch ? (int)(written ? written : 1) : 0;
    st->seq.patched_grid = grid;
    enc_event_graph_hit(g, st->seq.n - st->seq.nops, patch);
    if (g->nops) enc_nodes_note_replay();
    return 1;
}

/* Every held launch is issued, in order, even after one fails: the driver
 * decides each (after a sticky error they all fail). A failure is noted for
 * the program (failure.c): switching off here, with st->mu held, would hang. */
static void issue_held_eagerly(enc_stream_state *st, const char *why, int flush_reason) {
    enc_nvtx_eager(st->seq.n, why, flush_reason);
    int pushed, side;
    CUstream s = enc_stream_begin_issue(st, &pushed, &side);
    for (uint32_t i = 0; i < st->seq.n; i++) {
        CUresult r = enc_stream_issue_rec(&st->seq.recs[i], st->seq.arena, s);
        if (r != CUDA_SUCCESS) enc_note_release_failure(st, &st->seq.recs[i], r);
    }
    enc_stream_end_issue(st, pushed, side);
    enc_nvtx_end();
    ENC_COUNT_EAGER(ENC_EAGER_RELEASED, st->seq.n - st->seq.nops);
}

enum replay_outcome {
    REPLAYED,       /* one graph launch went out */
    REPLAY_FAILED,  /* a graph matched, but patching or launching it failed */
    ARGS_DIFFERED,  /* no graph matched; the closest one's divergence was noted */
    NO_GRAPH_CLOSE, /* no graph ends where the held launches are, of their length */
};

/* Why held launches go out one by one (NVTX range names). */
static const char *eager_why(enum replay_outcome o, const char *otherwise) {
    return o == ARGS_DIFFERED ? "arguments differed" : o == REPLAY_FAILED ? "graph launch failed" : otherwise;
}

int enc_would_replay(const enc_stream_state *st) {
    uint32_t node = enc_store_path_end(&st->store, st->seq.recs, st->seq.n);
    if (node == ENC_NO_NODE || node == ENC_TRIE_ROOT || !st->store.nodes[node].graphs) return 0;
    return exact_match(st, node) != NULL || patchable(st, node) != NULL;
}

/* Replay the graph that matches what st holds, exactly or once patched. */
static enum replay_outcome replay_held(enc_stream_state *st) {
    enc_graph *g = exact_match(st, st->node);
    int patch = !g && (g = patchable(st, st->node)) != NULL;
    if (g) return replay(st, g, patch) ? REPLAYED : REPLAY_FAILED;
    mismatch m = closest_graph(st);
    if (m.closest && m.pos < st->seq.n) {
        enc_event_divergence(ENC_DIV_ARGS, m.closest->recs[m.pos].L, st->seq.recs[m.pos].L, m.arg, m.pos);
        return ARGS_DIFFERED;
    }
    return NO_GRAPH_CLOSE;
}

/* ---- the three releases ------------------------------------------------------------------ */

/* Returns 0 if st holds nothing; else st holds nothing any more (what it
 * held is in st->seq, to be issued by the caller). */
static int stop_holding(enc_stream_state *st) {
    if (!st->held) return 0;
    __atomic_store_n(&st->held, 0, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&enc_hot.n_held, 1, __ATOMIC_RELAXED);
    return 1;
}

static void count_flush(enum enc_flush_reason why) {
    ENC_TSTAT_ADD(flushes[why], 1);
    enc_stats_count_flush();
}

/* Issue what was held, at a flush point. Held launches that end where no
 * graph of their length does came short of one. Returns 1 if replayed. */
static int issue_at_flush_point(enc_stream_state *st, enum enc_flush_reason why) {
    count_flush(why);
    enum replay_outcome o = replay_held(st);
    if (o == REPLAYED) return 1;
    if (o == NO_GRAPH_CLOSE) enc_event_divergence(ENC_DIV_SHORT, NULL, NULL, -1, st->seq.n);
    issue_held_eagerly(st, eager_why(o, "ended early"), (int)why);
    return 0;
}

void enc_release_at_flush_point(enc_stream_state *st, enum enc_flush_reason why) {
    if (!stop_holding(st)) return;
    uint32_t held = st->seq.n;
    int replayed = issue_at_flush_point(st, why);
    if (why == ENC_FLUSH_DEADLINE && !replayed && st->deadline_cuts < UINT8_MAX) { /* sequence.c acts on it */
        st->deadline_cuts++;
        st->deadline_cut_len = held;
    }
    if (why == ENC_FLUSH_DEADLINE) enc_graph_end_deadline(st, replayed);
    enc_hold_outcome(st, replayed);
}

void enc_release_at_sequence_end(enc_stream_state *st, enum enc_flush_reason why) {
    if (!stop_holding(st)) return;
    int replayed = issue_at_flush_point(st, why);
    if (replayed) st->seq.fully_replayed = 1;
    enc_hold_outcome(st, replayed);
}

void enc_release_on_divergence(enc_stream_state *st, CUfunction f, const enc_layout *L, int note) {
    if (!st->held) return;
    const enc_trie_node *cur = &st->store.nodes[st->node];
    const char *why = "no graph matched";
    if (note && !cur->graphs) { /* no graph ends here: this launch is the divergence */
        const enc_trie_node *e = cur->first_child != ENC_NO_NODE ? &st->store.nodes[cur->first_child] : NULL;
        int kernel = !e || e->f != f;
        why = kernel ? "a different kernel came" : "launch config differed";
        enc_event_divergence(kernel ? ENC_DIV_KERNEL : ENC_DIV_CONFIG, e ? enc_layout_for(e->f) : NULL, L, -1,
                             st->seq.n);
    } else if (note) {
        ENC_DEBUG("a hold of %u launches ends at %s where a graph ends: the next launch continues none", st->seq.n,
                  L ? L->name : "?");
    }
    uint32_t len_here = cur->graphs ? cur->graphs->len : 0; /* (for the debug line below) */
    stop_holding(st);
    enum replay_outcome o = replay_held(st); /* a graph ending here may still match */
    if (o == NO_GRAPH_CLOSE && note && len_here)
        ENC_DEBUG("... and no graph ending there has its %u launches (the first has %u)", st->seq.n, len_here);
    int replayed = o == REPLAYED;
    if (!replayed) issue_held_eagerly(st, eager_why(o, why), -1);
    enc_hold_outcome(st, replayed);
}
