/* encore: learning: candidates and capture.
 *
 * When a sequence ends, its hash is counted as a candidate; a sequence seen
 * ENCORE_MIN_REPEATS times is captured from its recorded copies (never by
 * running the program's work twice) on encore's own non-blocking stream in
 * relaxed mode, instantiated (with node priorities when its launches set
 * CU_LAUNCH_ATTRIBUTE_PRIORITY) and added to the stream's store. With
 * ENCORE_PATCH, the sequence's structure alone is counted too (a structural
 * candidate), so that a sequence whose arguments change (a step counter)
 * gets a graph whose kernel nodes can be patched, grids included (a length
 * that grows every step). A sequence replayed through such a graph with other
 * grids patched in counts its configuration (structure and grids): one that
 * comes back gets a graph of its own, which keeps its grids (replay.c
 * patchable), as the old engine had with the grid in a launch's structure. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/driver.h"
#include "base/guard.h"
#include "base/log.h"
#include "core/graphs/chain.h"
#include "core/graphs/devpatch.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/state/gate.h"
#include "core/graphs/worth.h"
#include "core/observe/names.h"
#include "core/observe/nvtx.h"
#include "policy/options.h"

#define CAND_PROBES 8          /* slots tried from a hash's home slot */
#define MAX_PRIVATE_STREAMS 64 /* contexts with a capture stream of encore's */

/* ---- candidates ------------------------------------------------------------------ */

/* avoid: a candidate never taken as the victim (the one just counted). */
static enc_candidate *cand_find(enc_candidate *table, uint64_t hash, int create, const enc_candidate *avoid) {
    uint32_t base = (uint32_t)hash & (ENC_CAND_CAP - 1);
    enc_candidate *victim = NULL;
    for (uint32_t i = 0; i < CAND_PROBES; i++) {
        enc_candidate *c = &table[(base + i) & (ENC_CAND_CAP - 1)];
        if (c->count && c->hash == hash) return c;
        if (!c->count) {
            if (!victim || victim->count) victim = c; /* the first free slot */
        } else if (c->state == ENC_CAND_COUNTING && c != avoid &&
                   (!victim || (victim->count && c->count < victim->count))) {
            victim = c; /* else the least-counted counting one */
        }
    }
    if (!create || !victim) return NULL;
    victim->hash = hash;
    victim->count = 0;
    victim->spanned = 0;
    victim->state = ENC_CAND_COUNTING;
    return victim;
}

enc_candidate *enc_cand_find(enc_candidate *table, uint64_t hash, int create) {
    return cand_find(table, hash, create, NULL);
}

/* ---- ENCORE_INCLUDE and ENCORE_EXCLUDE ---------------------------------------------- */

static int sequence_allowed(const enc_seq *seq) {
    if (!enc_opt.include[0] && !enc_opt.exclude[0]) return 1;
    for (uint32_t i = 0; i < seq->n; i++) {
        if (seq->recs[i].L->is_op) continue; /* the patterns name kernels */
        const char *name = seq->recs[i].L->name;
        if (enc_opt.include[0] && !enc_name_matches(enc_opt.include, name)) return 0;
        if (enc_opt.exclude[0] && enc_name_matches(enc_opt.exclude, name)) return 0;
    }
    return 1;
}

/* ---- launch priorities ---------------------------------------------------------- */

static int has_priority_attr(const enc_rec *r, const unsigned char *arena) {
    const CUlaunchAttribute *a = (const CUlaunchAttribute *)(const void *)(arena + r->attr_off);
    for (uint32_t i = 0; i < r->nattrs; i++)
        if (a[i].id == CU_LAUNCH_ATTRIBUTE_PRIORITY) return 1;
    return 0;
}

/* Launches of seq that set CU_LAUNCH_ATTRIBUTE_PRIORITY. None: the graph is
 * instantiated plainly and runs at the priority of the stream it is launched
 * into, as they would. Some: with CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY,
 * so that those nodes keep theirs; the other nodes then run at the priority
 * of the stream they were captured on (encore's), which is right only while
 * the program's stream has that priority too (enc_stream_priority_like_capture
 * here, enc_stream_check_attrs later: see mixed_prio). */
static uint32_t launches_with_priority(const enc_seq *seq) {
    uint32_t with = 0;
    for (uint32_t i = 0; i < seq->n; i++) with += (uint32_t)has_priority_attr(&seq->recs[i], seq->arena);
    return with;
}

/* ---- the program's context-wide calls ---------------------------------------------- */

/* One capture at a time (they share the private stream), and none while a
 * context-wide call of the program runs: the driver fails cuCtxSynchronize
 * while any stream of the context captures, in every capture mode. */
static pthread_rwlock_t capture_rw = PTHREAD_RWLOCK_INITIALIZER;
static __thread int in_wide_call __attribute__((tls_model("initial-exec")));

void enc_core_wide_call_begin(void) {
    if (!in_wide_call++) pthread_rwlock_rdlock(&capture_rw);
}

void enc_core_wide_call_end(void) {
    if (in_wide_call && !--in_wide_call) pthread_rwlock_unlock(&capture_rw);
}

/* ---- capture ----------------------------------------------------------------------- */

/* Per context: encore's capture stream, and the placeholder event its event
 * nodes are captured with (never recorded by the program, never destroyed
 * while its context lives: an event node can always go back to it). */
static struct {
    CUcontext ctx;
    CUstream s;
    CUevent ev;
} priv[MAX_PRIVATE_STREAMS];
static int npriv;
static pthread_mutex_t priv_mu = PTHREAD_MUTEX_INITIALIZER;

/* ctx's entry (created, its stream with it, if need be), or -1. With priv_mu held. */
static int private_entry(CUcontext ctx) {
    for (int i = 0; i < npriv; i++)
        if (priv[i].ctx == ctx) return i;
    CUstream s;
    if (npriv >= MAX_PRIVATE_STREAMS || enc_drv.streamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) return -1;
    priv[npriv].ctx = ctx;
    priv[npriv].s = s;
    priv[npriv].ev = NULL;
    return npriv++;
}

static CUstream private_stream(CUcontext ctx) {
    pthread_mutex_lock(&priv_mu);
    int i = private_entry(ctx);
    CUstream s = i >= 0 ? priv[i].s : NULL;
    pthread_mutex_unlock(&priv_mu);
    return s;
}

/* ctx's placeholder event (ctx current), or NULL. */
static CUevent placeholder_event(CUcontext ctx) {
    pthread_mutex_lock(&priv_mu);
    int i = private_entry(ctx);
    if (i >= 0 && !priv[i].ev && enc_drv.eventCreate(&priv[i].ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        priv[i].ev = NULL;
    CUevent ev = i >= 0 ? priv[i].ev : NULL;
    pthread_mutex_unlock(&priv_mu);
    return ev;
}

void enc_learn_context_gone(CUcontext ctx) {
    pthread_mutex_lock(&priv_mu);
    for (int i = 0; i < npriv; i++)
        if (priv[i].ctx == ctx) priv[i--] = priv[--npriv]; /* destroyed with its context (NULL: none named) */
    pthread_mutex_unlock(&priv_mu);
    enc_devpatch_context_gone(ctx);
}
CUstream enc_learn_capture_stream(CUcontext ctx) { return private_stream(ctx); }

/* A graph-to-be holding its own copy of the sequence's records, or NULL. */
static enc_graph *copy_sequence(const enc_seq *seq) {
    enc_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->recs = malloc(seq->n * sizeof(enc_rec));
    g->arena = malloc(seq->arena_used ? seq->arena_used : 1);
    if (!g->recs || !g->arena) {
        enc_graph_free(g);
        return NULL;
    }
    memcpy(g->recs, seq->recs, seq->n * sizeof(enc_rec));
    memcpy(g->arena, seq->arena, seq->arena_used);
    g->len = seq->n;
    g->nops = seq->nops;
    g->ends_at_call = seq->ended_by_call;
    g->args_key = enc_args_key(g->recs, g->len);
    return g;
}

/* Capture g's launches on encore's private stream of st's context, and
 * instantiate the graph. Returns NULL, or what failed (its CUDA error in
 * *err). *t_captured: when the capture ended. With capture_rw held. */
/* One capture of g's launches on `priv` (dev: device-patched, devpatch.c) and its instantiation; *cg: the
 * captured graph (the caller destroys it). Returns NULL, or what failed (its CUDA error in *err). */
static const char *capture_once(enc_graph *g, CUstream priv, CUevent ph, enc_devgraph *dev, unsigned long long flags,
                                CUgraph *cg, CUresult *err, uint64_t *t_captured) {
    const char *what = NULL;
    CUresult r = enc_drv.streamBeginCapture(priv, CU_STREAM_CAPTURE_MODE_RELAXED);
    if (r != CUDA_SUCCESS) {
        *err = r;
        return "cuStreamBeginCapture";
    }
    if (dev) r = enc_devpatch_capture(dev, g, priv);
    for (uint32_t i = 0; !dev && i < g->len && r == CUDA_SUCCESS; i++)
        r = g->recs[i].L->is_op ? enc_op_issue(&g->recs[i], g->arena, priv, 1, ph)
                                : enc_stream_issue_rec(&g->recs[i], g->arena, priv);
    CUresult re = enc_drv.streamEndCapture(priv, cg);
    if (r != CUDA_SUCCESS)
        what = "a launch during capture";
    else if (re != CUDA_SUCCESS) {
        what = "cuStreamEndCapture";
        r = re;
    }
    *t_captured = enc_now_ns();
    if (!what && (r = enc_drv.graphInstantiate(&g->exec, *cg, flags)) != CUDA_SUCCESS) {
        what = "cuGraphInstantiate";
        g->exec = NULL;
    }
    *err = r;
    return what;
}

/* Capture g's launches on encore's private stream of st's context, and
 * instantiate the graph. Returns NULL, or what failed (its CUDA error in
 * *err). *t_captured: when the capture ended. With capture_rw held. */
static const char *capture_graph(const enc_stream_state *st, enc_graph *g, unsigned long long flags, CUresult *err,
                                 uint64_t *t_captured) {
    const char *what = NULL;
    CUresult r = CUDA_SUCCESS;
    CUgraph cg = NULL;
    *t_captured = enc_now_ns();
    ENC_GUARDED {
        int pushed = enc_stream_enter_ctx(st);
        CUstream priv = private_stream(st->ctx);
        /* Event nodes name the placeholder in the graph and the program's events in its exec: the
         * program may destroy its events, and the driver patches no record node whose event is gone. */
        CUevent ph = enc_graph_has_event_op(g) && enc_op_events_patchable() ? placeholder_event(st->ctx) : NULL;
        /* ENCORE_DEVICE_PATCH: the updater first, the launches device-updatable (devpatch.c) */
        enc_devgraph *dev = priv && enc_devpatch_wanted(g, st->ctx) ? enc_devpatch_new(g, st->ctx) : NULL;
        g->ctx = st->ctx;
        if (!priv) {
            what = "creating encore's capture stream";
            r = CUDA_ERROR_UNKNOWN;
        } else if ((what = capture_once(g, priv, ph, dev, flags, &cg, &r, t_captured)) != NULL && dev) {
            enc_devpatch_refused(g, r); /* that kind is captured as before from now on, this graph too */
            enc_devpatch_free(dev, 1);
            dev = NULL;
            if (cg) enc_drv.graphDestroy(cg);
            cg = NULL;
            what = capture_once(g, priv, ph, NULL, flags, &cg, &r, t_captured);
        }
        if (!what && dev) { /* patched through its ring: knodes only say it is patchable */
            if ((g->knodes = calloc(g->len, sizeof *g->knodes)) != NULL)
                for (uint32_t i = 0; i < g->len; i++) g->knodes[i].func = g->recs[i].f;
            g->dev = dev; /* the updater reads its ring at every launch, patched or not: kept as long as the exec */
            dev = NULL;
        } else if (!what && enc_opt.patch && (g->knodes = enc_chain_nodes(cg, g->recs, g->arena, g->len)) != NULL) {
            g->graph = cg; /* kept: its node handles name the nodes to patch */
            cg = NULL;
        }
        if (!what && ph && (what = enc_graph_name_events(g, ph)) != NULL) r = CUDA_ERROR_UNKNOWN;
        if (cg) enc_drv.graphDestroy(cg);
        enc_stream_leave_ctx(pushed);
    }
    *err = r;
    return what;
}

/* Add a captured graph to st's store, for candidate c. */
static void keep_graph(enc_stream_state *st, enc_candidate *c, enc_graph *g, uint64_t capture_ns,
                       uint64_t instantiate_ns) {
    g->node = enc_store_insert(&st->store, g->recs, g->len);
    if (g->node == ENC_NO_NODE) {
        enc_graph_free(g);
        return;
    }
    g->cand_hash = c->hash;
    enc_store_add_graph(&st->store, g);
    c->state = ENC_CAND_CAPTURED;
    enc_capture_note(&st->store, g->node);
    g->id = enc_event_graph_captured(g->len, g->recs, capture_ns, instantiate_ns);
}

/* Captures that keep failing are a failure of encore's (the driver refuses
 * something in how it captures), and each costs a capture and perhaps an
 * instantiation: after CAPTURE_FAIL_STREAK failures in a row, encore captures
 * no new graph (those it has replay on), or, if none ever succeeded, switches
 * itself off. */
#define CAPTURE_FAIL_STREAK 16
_Static_assert(CAPTURE_FAIL_STREAK == 16, "capture_failed's messages say 16");
static unsigned capture_fail_streak, captures_ok; /* atomic */
static int captures_stopped;                      /* atomic */

static void capture_failed(const char *what, CUresult r) {
    enc_event_capture_failed(what, r);
    if (__atomic_add_fetch(&capture_fail_streak, 1, __ATOMIC_RELAXED) != CAPTURE_FAIL_STREAK) return;
    /* at once: switching off waits for an entry point that holds no lock, and a capture may come first */
    __atomic_store_n(&captures_stopped, 1, __ATOMIC_RELAXED);
    if (!__atomic_load_n(&captures_ok, __ATOMIC_RELAXED)) {
        enc_request_disable_why("16 of encore's captures in a row failed and none ever succeeded");
        return;
    }
    enc_log(ENC_LOG_WARN,
            "16 of encore's captures in a row failed (the last in %s, CUDA error %d); encore captures "
            "no new graphs from now on (those it has still replay)",
            what, (int)r);
}

/* What a graph is captured for: the sequence as it is (its arguments may
 * still be patched), its configuration (kernels, launch shapes and grids:
 * arguments patched, grids kept) or its structure alone (arguments and grids
 * patched). The last two need the graph's kernel nodes. */
enum capture_for { FOR_SEQUENCE, FOR_CONFIG, FOR_STRUCTURE };

/* Capture st's sequence into a graph for candidate c. With st->mu held. */
static void capture(enc_stream_state *st, enc_candidate *c, enum capture_for what_for) {
    int structural = what_for != FOR_SEQUENCE;
    if (__atomic_load_n(&enc_hot.prog_capturing, __ATOMIC_RELAXED) > 0) return; /* try again next time */
    if (__atomic_load_n(&captures_stopped, __ATOMIC_RELAXED)) return;
    if (!sequence_allowed(&st->seq)) {
        c->state = ENC_CAND_NEVER;
        return;
    }
    uint32_t with_prio = launches_with_priority(&st->seq);
    int mixed_prio = with_prio > 0 && with_prio < st->seq.n;
    unsigned long long flags = with_prio ? CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY : 0;
    if (mixed_prio && !enc_stream_priority_like_capture(st)) {
        c->state = ENC_CAND_NEVER;
        ENC_DEBUG("a repeating sequence sets launch priorities on some launches only, on a stream whose priority "
                  "differs from encore's capture stream's: it runs eagerly");
        return;
    }
    if (!enc_capture_admits(st)) return; /* graphs of its structure did not replay */
    if (st->cap_unsettled) {             /* the flush deadline moved the stream's cut points a moment ago (types.h) */
        ENC_TSTAT_ADD(captures_refused, 1);
        return;
    }
    if (!enc_reclaim_graph_room(st)) return; /* try again next time */
    enc_graph *g = copy_sequence(&st->seq);
    if (!g) return;
    /* If a context-wide call of the program is in flight, try again the next
     * time the sequence comes. */
    if (pthread_rwlock_trywrlock(&capture_rw) != 0) {
        enc_graph_free(g);
        return;
    }
    ENC_DEBUG("capturing a sequence of %u launches, ended by %s, at its sighting %u", st->seq.n,
              enc_flush_reason_name(st->seq.end_why), c->count);
    uint64_t t0 = enc_now_ns(), t1;
    CUresult r;
    enc_nvtx_capture(st->seq.n);
    const char *what = capture_graph(st, g, flags, &r, &t1);
    enc_nvtx_end();
    pthread_rwlock_unlock(&capture_rw);
    uint64_t t2 = enc_now_ns();
    ENC_TSTAT_ADD(capture_ns, t2 - t0);
    ENC_ACCT_ADD(st, ENC_ACCT_CAPTURE_NS, t2 - t0);
    if (what) {
        c->state = ENC_CAND_NEVER; /* never again for this sequence */
        capture_failed(what, r);
        enc_graph_free(g);
    } else if (structural && !g->knodes) {
        /* captured for patching, but its nodes cannot be told apart: holding
         * launches back for a graph that can only match by chance does not pay */
        c->state = ENC_CAND_NEVER;
        ENC_DEBUG("a repeating launch structure cannot be patched "
                  "(its graph nodes could not be matched to its launches)");
        enc_graph_free(g);
    } else {
        if (mixed_prio) st->mixed_prio = 1;
        __atomic_store_n(&capture_fail_streak, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&captures_ok, 1, __ATOMIC_RELAXED);
        g->grid_free = what_for == FOR_STRUCTURE;
        keep_graph(st, c, g, t1 - t0, t2 - t1);
    }
}

/* What learning made of a sequence, for the report (stats.h, "learnt"). */
static void learnt(enum enc_learn_outcome o) { ENC_TSTAT_ADD(learnt[o], 1); }

/* The outcome of counting candidate c (exact) and sc (structural, may be NULL). */
static enum enc_learn_outcome outcome(const enc_candidate *c, const enc_candidate *sc, int sc_tried) {
    if (!c || (sc_tried && !sc)) return ENC_LEARN_NO_SLOT;
    if (c->state == ENC_CAND_NEVER || (sc && sc->count > 1 && sc->state == ENC_CAND_NEVER)) return ENC_LEARN_GIVEN_UP;
    if (c->count > 1 || c->state == ENC_CAND_CAPTURED) return ENC_LEARN_AGAIN;
    if (sc && (sc->count > 1 || sc->state == ENC_CAND_CAPTURED)) return ENC_LEARN_STRUCTURE;
    return ENC_LEARN_NEW;
}

/* The sequence's nodes that do work: kernels, copies and memsets (each an
 * eager call of a few microseconds), not event records and waits. A graph of
 * fewer than two saves no call: one kernel between event operations (JAX op
 * by op). A copy in, one kernel and a copy back are three calls, and their
 * graph saves two (counting kernels alone, the H200's changing-batch server
 * left 1,826 sequences a process uncaptured as "fewer than two kernels"). */
static uint32_t work_nodes(const enc_seq *seq) {
    uint32_t w = 0;
    for (uint32_t i = 0; i < seq->n; i++) {
        w += !(seq->recs[i].L->is_op && enc_op_is_event((uint32_t)(uintptr_t)seq->recs[i].f));
    }
    return w;
}

/* One more sighting of candidate c, if it is still counting: is it due for
 * a graph? Where the sequence begins decides how many it takes
 * (enc_capture_due), or, for a sequence replayed through a patched graph,
 * its ENCORE_MIN_REPEATS-th does; as hold.c counts them, those of one flush
 * interval count less. */
static int sighting_due(const enc_stream_state *st, enc_candidate *c, int by_start) {
    if (!c || c->state != ENC_CAND_COUNTING) return 0;
    enc_cand_sighted(st, c);
    return by_start ? enc_capture_due(st, c) : enc_capture_enough(c, (uint32_t)enc_opt.min_repeats);
}

/* A sequence replayed through a graph of its structure, patched. Patches
 * cost: 0.6 us a kernel node given other arguments and 2.5 us one given
 * another grid (tests/bench/patch_cost, H200, call 22), where a graph of its
 * own replays with none. So it is counted twice:
 *   - as the exact sequence: seen ENCORE_MIN_REPEATS times, it gets a graph
 *     of its own (which keeps its grids and may have its arguments patched);
 *     a ring of buffers each seen once or twice captures none;
 *   - where other grids were patched in (a serving loop's batch size, a
 *     length that comes back), as its configuration (kernels, launch shapes,
 *     grids): seen ENCORE_MIN_REPEATS times, it gets a graph that keeps its
 *     grids, patched only in its arguments, while the structure's graph goes
 *     on taking the grids that never come back (a length that grows every
 *     step captures nothing more).
 * On the H200, in one run (call 26), both at their third sighting: the
 * changing-batch server at 0.747 of eager, against 0.799 under the old engine
 * (the grid in a launch's structure) and 0.837 with graphs only once their
 * patches had cost a capture (about 7 sightings); HF generate at 0.841,
 * against 0.876 and 0.848. The exact sequence after 64 nodes patched (the
 * rule before) left HF generate at 0.916 against the old engine's 0.857
 * (call 27; docs/bench/2026-11-27-h200-patch-cost.md). */
static void learn_from_patches(enc_stream_state *st) {
    const enc_seq *seq = &st->seq;
    enc_candidate *c = enc_cand_find(st->store.cands, seq->hash, 1);
    if (sighting_due(st, c, 0)) {
        capture(st, c, FOR_SEQUENCE);
        return;
    }
    if (!seq->patched_grid) return;
    enc_candidate *cc = cand_find(st->store.cands, seq->chash ^ ENC_CONFIG_SALT, 1, c);
    if (sighting_due(st, cc, 0)) capture(st, cc, FOR_CONFIG);
}

void enc_learn_sequence(enc_stream_state *st) {
    const enc_seq *seq = &st->seq;
    int never = st->sparse                                      ? ENC_LEARN_LEFT_ALONE
                : seq->poisoned                                 ? ENC_LEARN_UNRECORDED
                : seq->n < (uint32_t)enc_opt.min_sequence       ? ENC_LEARN_SHORT
                : seq->n - seq->nops < 2 && work_nodes(seq) < 2 ? ENC_LEARN_UNDER_TWO
                                                                : -1;
    if (never >= 0) { /* not a candidate (a replayed one is not counted as learning) */
        if (!seq->fully_replayed) learnt((enum enc_learn_outcome)never);
        if (never == ENC_LEARN_SHORT || never == ENC_LEARN_UNDER_TWO) st->win_small++; /* rest.c */
        return;
    }
    if (seq->fully_replayed) {
        enc_hold_start_replayed(st);
        enc_rest_note_sequence(st, 1);
        if (seq->replayed_by_patch) learn_from_patches(st);
        return;
    }
    enc_candidate *c = enc_cand_find(st->store.cands, seq->hash, 1);
    int recurring = c && (c->count || c->state != ENC_CAND_COUNTING); /* a new candidate has count 0 */
    if (sighting_due(st, c, 1)) capture(st, c, FOR_SEQUENCE);
    /* The same structure with other arguments (a step counter, say) is worth
     * a graph too when the arguments can be patched in: count it apart (never
     * in the place of the exact count just made), and capture the sequence as
     * it is now. Not when it was just captured exactly: a structural count
     * kept then would never be freed and would crowd out other candidates. */
    enc_candidate *sc = NULL;
    int sc_tried = enc_opt.patch && !(c && c->state == ENC_CAND_CAPTURED);
    if (sc_tried) {
        sc = cand_find(st->store.cands, seq->shash ^ ENC_STRUCT_SALT, 1, c);
        recurring |= sc && (sc->count || sc->state != ENC_CAND_COUNTING); /* its structure came before */
        if (sighting_due(st, sc, 1)) capture(st, sc, FOR_STRUCTURE);
    }
    learnt(outcome(c, sc, sc_tried));
    enc_hold_start_seen(st, (c && c->state == ENC_CAND_CAPTURED) || (sc && sc->state == ENC_CAND_CAPTURED));
    enc_rest_note_sequence(st, recurring);
}
