/* encore: the launch path, flush points and lifecycle events: what the
 * hooks call (core/path/engine.h).
 *
 * A launch goes one of these ways (enc_core_launch, then launch_on):
 *   - straight through, as without encore: no stream state, the program is
 *     capturing, the stream is not of the current context (launch_elsewhere),
 *     the stream has attributes a graph does not carry
 *     (enc_stream_check_attrs), or a launch encore cannot re-issue (the
 *     sequence ends first);
 *   - issued and only counted: a stream whose launches come too far apart
 *     (ENCORE_MAX_GAP);
 *   - issued first, then recorded: the first launch of a kernel;
 *   - recorded, then held: it begins a graph's sequence (start_holding), or
 *     continues the held launches' walk of the trie (continue_holding);
 *   - recorded and issued eagerly: anything else, or the held launches
 *     diverged from every graph (they are released first).
 *
 * Locks: one mutex per stream state, uncontended for a single-threaded
 * program (flushes from other threads and the deadline thread take it too).
 * The launch path allocates nothing and makes no system call. */
#define _GNU_SOURCE
#include <pthread.h>

#include "base/driver.h"
#include "base/guard.h"
#include "base/log.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/path/engine.h"
#include "core/path/path.h"
#include "core/path/selfcheck.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"
#include "policy/options.h"

static CUresult call_real(const enc_launch *l) {
    if (l->shape == ENC_SHAPE_EX) return ((PFN_cuLaunchKernelEx_v11060)l->real)(l->config, l->f, l->params, l->extra);
    return ((PFN_cuLaunchKernel_v4000)l->real)(l->f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                                               l->block[2], l->smem, l->stream, l->params, l->extra);
}

/* The launch goes to the driver now, as the program made it. */
static CUresult issue_now(const enc_launch *l, enum enc_eager_reason why) {
    ENC_COUNT_EAGER(why, 1);
    return AUDITED(call_real(l));
}

/* A launch that goes out as without encore (a resting stream, encore switched
 * off by the program or the self-check): one in ENC_SAMPLE_EVERY of a thread's
 * is timed, the driver's time for the eager launch that a replay saves (the
 * time estimate; a learning launch alone came a few times a thread in a
 * program that replays, and often cold). Two clock reads a sampled launch. */
CUresult enc_core_call_sampled(const enc_launch *l) {
    if (__builtin_expect(++enc_thr.eager_clock % ENC_SAMPLE_EVERY != 0, 1)) return AUDITED(call_real(l));
    uint64_t t0 = enc_now_ns();
    CUresult r = AUDITED(call_real(l));
    uint64_t ns = enc_now_ns() - t0;
    if (ns < ENC_SAMPLE_MAX_NS) enc_stats_launch_sample(ns);
    return r;
}

/* Attributes counted with no array to read them from: the driver refuses the launch, after what is held. */
static int recordable(const enc_layout *L, const enc_launch *l) {
    return L && L->ok &&
           !(l->config && (l->config->numAttrs > ENC_MAX_ATTRS || (l->config->numAttrs && !l->config->attrs)));
}

/* Legacy-stream implicit synchronisation: work on the legacy stream waits
 * for every blocking stream and the other way round, so before anything is
 * enqueued on one side, what is held on the other side must be issued. */
void enc_launch_legacy_order(enc_stream_state *st) {
    int held = __atomic_load_n(&enc_hot.n_held, __ATOMIC_RELAXED);
    if (held == 0 || (held == 1 && __atomic_load_n(&st->held, __ATOMIC_RELAXED))) return; /* only st itself */
    /* Other threads may be setting a state up meanwhile (state_query, under
     * its lock): these fields are read atomically, without it. */
    int kind = __atomic_load_n(&st->kind, __ATOMIC_RELAXED);
    CUcontext ctx = __atomic_load_n(&st->ctx, __ATOMIC_RELAXED);
    if (kind == ENC_STREAM_EXPLICIT && !__atomic_load_n(&st->blocking, __ATOMIC_RELAXED)) return;
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        enc_stream_state *o = enc_states[i];
        if (o == st || !__atomic_load_n(&o->held, __ATOMIC_RELAXED) ||
            __atomic_load_n(&o->ctx, __ATOMIC_RELAXED) != ctx)
            continue;
        int okind = __atomic_load_n(&o->kind, __ATOMIC_RELAXED);
        int relevant = kind == ENC_STREAM_LEGACY
                           ? (okind != ENC_STREAM_EXPLICIT || __atomic_load_n(&o->blocking, __ATOMIC_RELAXED))
                           : okind == ENC_STREAM_LEGACY;
        if (!relevant) continue;
        enc_mutex_lock(&o->mu);
        enc_release_at_flush_point(o, ENC_FLUSH_LEGACY_ORDER);
        enc_mutex_unlock(&o->mu);
    }
}

/* Only st itself holds, or nothing does (the usual case): no other stream to look at. */
static inline void legacy_order(enc_stream_state *st) {
    int held = __atomic_load_n(&enc_hot.n_held, __ATOMIC_RELAXED);
    if (held == 0 || (held == 1 && __atomic_load_n(&st->held, __ATOMIC_RELAXED))) return;
    enc_launch_legacy_order(st);
}

/* ---- the ways a launch goes ---------------------------------------------------------
 * Each function below that takes a stream state is entered with st->mu held
 * and returns with it released. */

/* Time one launch in ENC_SAMPLE_EVERY, a prime: a power of two would alias
 * with sequence lengths and always sample the same positions (say, only the
 * launches that end a sequence and launch its graph). Two clock reads per
 * timed launch, nothing more: no allocation, no system call. */
static uint64_t sample_start(enc_stream_state *st) {
    if (++st->sample_clock % ENC_SAMPLE_EVERY != 0) return 0;
    st->sample.on = 1;
    return enc_now_ns();
}

/* One timed sample (field: deferred, launch or record) into the report's means, unless it paid a
 * one-off (ENC_SAMPLE_MAX_NS). */
#define SAMPLE(field, ns)                      \
    do {                                       \
        uint64_t ns_ = (ns);                   \
        if (ns_ < ENC_SAMPLE_MAX_NS) {         \
            ENC_TSTAT_ADD(field##_ns, ns_);    \
            ENC_TSTAT_ADD(field##_samples, 1); \
        }                                      \
    } while (0)

/* The timed launch is done (st->mu still held): the time of the sequence ends
 * it caused (enc_sequence_end_at_launch) goes to release_ns, per end, and is
 * returned, to be left out of the launch's own time. */
static uint64_t sample_take_ends(enc_stream_state *st) {
    uint64_t ns = st->sample.ends_ns;
    if (st->sample.ends) {
        ENC_TSTAT_ADD(release_ns, ns);
        ENC_TSTAT_ADD(release_samples, st->sample.ends);
    }
    st->sample.on = 0;
    st->sample.ends = 0;
    st->sample.ends_ns = 0;
    return ns;
}

static void end_sequence_if_full(enc_stream_state *st) {
    int pause = enc_pause_due(st); /* where the host paused before (graph_end.c) */
    if (__builtin_expect(pause >= 0, 0)) {
        enc_sequence_end_at_pause(st, (uint32_t)pause);
        return;
    }
    uint32_t limit = __builtin_expect(enc_opt.hold_ramp != 0, 0) ? enc_sequence_limit(st)
                     : st->seq_cap                               ? st->seq_cap
                                                                 : (uint32_t)enc_opt.max_sequence;
    if (st->seq.n >= limit || (__builtin_expect(enc_opt.tail_cut != 0, 0) && enc_sequence_tail_due(st)))
        enc_sequence_end_at_launch(st, ENC_FLUSH_SEQUENCE_FULL);
}

/* The pending launch went to the driver (with result r) and is part of the
 * sequence now. A timed launch that was not held counts in release_ns only. */
static CUresult done_issued(enc_stream_state *st, CUresult r, uint64_t t0) {
    enc_record_commit(&st->seq);
    if (r != CUDA_SUCCESS) st->seq.poisoned = 1; /* never capture a sequence that failed */
    end_sequence_if_full(st);
    if (t0) sample_take_ends(st);
    enc_mutex_unlock(&st->mu);
    return r;
}

/* The pending launch is held (and part of the sequence already). deferred_ns:
 * what recording and holding it cost, the unlock included, without the end
 * of the previous sequence it may have caused (released, replayed, learnt). */
static inline __attribute__((always_inline)) CUresult done_held(enc_stream_state *st, uint64_t t0) {
    end_sequence_if_full(st);
    uint64_t ends_ns = t0 ? sample_take_ends(st) : 0;
    enc_mutex_unlock(&st->mu);
    if (t0) SAMPLE(deferred, enc_now_ns() - t0 - ends_ns);
    return CUDA_SUCCESS;
}

/* Work on a stream without a state (no context current, or no state left):
 * nothing is held on it, and only the legacy stream's implicit
 * synchronisation can order it after launches held on another stream. Work
 * on the legacy stream itself waits for every blocking stream: everything is
 * issued. Otherwise what the legacy streams hold is (the stream may be a
 * blocking one: without a state, encore does not know). */
static void order_without_state(CUstream stream, int per_thread, enum enc_flush_reason why) {
    if ((stream == NULL && !per_thread) || stream == CU_STREAM_LEGACY) {
        enc_core_flush_all(why);
        return;
    }
    if (!__atomic_load_n(&enc_hot.n_held, __ATOMIC_RELAXED)) return;
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        enc_stream_state *o = enc_states[i];
        if (!__atomic_load_n(&o->held, __ATOMIC_RELAXED)) continue;
        enc_mutex_lock(&o->mu);
        if (o->kind == ENC_STREAM_LEGACY) enc_release_at_flush_point(o, ENC_FLUSH_LEGACY_ORDER);
        enc_mutex_unlock(&o->mu);
    }
}

/* No stream state: exactly as without encore, that stream passes through. */
static CUresult pass_straight_through(const enc_launch *l) {
    order_without_state(l->stream, l->per_thread, ENC_FLUSH_OPAQUE_LAUNCH);
    ENC_COUNT_EAGER(ENC_EAGER_PASSIVE, 1);
    return call_real(l);
}

/* The program is capturing, or a launch encore cannot re-issue: the
 * sequence ends, and the launch goes out after it, in order. */
static CUresult end_sequence_and_pass_through(enc_stream_state *st, const enc_launch *l) {
    enc_sequence_end(st, ENC_FLUSH_OPAQUE_LAUNCH);
    enc_mutex_unlock(&st->mu);
    return issue_now(l, ENC_EAGER_OPAQUE);
}

/* ENCORE_MAX_GAP: this stream is neither held nor captured. Its launches are
 * only counted and timed, to notice when they come faster: no layout, no
 * copy, no hash. */
static CUresult count_and_pass_through(enc_stream_state *st, const enc_launch *l) {
    enc_sequence_open(st);
    st->seq.poisoned = 1; /* nothing recorded: never a capture candidate */
    return done_issued(st, issue_now(l, ENC_EAGER_LEFT_ALONE), 0);
}

/* First launch of this kernel: it cannot be part of a graph. Run it first
 * (the driver may load code lazily at its first launch, and its parameters
 * cannot be read before), then learn its layout and record it. */
static CUresult issue_first_launch(enc_stream_state *st, const enc_launch *l) {
    if (st->held) enc_release_on_divergence(st, l->f, NULL, 1);
    CUresult r = issue_now(l, ENC_EAGER_FIRST);
    const enc_layout *L = r == CUDA_SUCCESS ? enc_layout_for(l->f) : NULL;
    if (!recordable(L, l)) {
        enc_sequence_end(st, ENC_FLUSH_OPAQUE_LAUNCH);
        enc_mutex_unlock(&st->mu);
        return r;
    }
    st->sample_clock++; /* counted, never timed: it was not deferred */
    enc_sequence_record(st, l, L);
    return done_issued(st, r, 0);
}

/* The pending launch begins a graph's sequence: hold it. 0 if it does not
 * (or a per-thread stream cannot mark where the hold starts). */
int enc_launch_start_holding(enc_stream_state *st) {
    if (st->seq.n != 0 || st->store.ngraphs == 0 || st->sparse ||
        __atomic_load_n(&enc_hot.disable_requested, __ATOMIC_RELAXED))
        return 0;
    uint32_t c = enc_store_step(&st->store, ENC_TRIE_ROOT, st->seq.recs[0].sfp);
    if (c == ENC_NO_NODE || !enc_hold_admits(st, c) || !enc_launch_valid(st, &st->seq.recs[0]) ||
        (st->kind == ENC_STREAM_PER_THREAD && !enc_stream_hold_ok(st)))
        return 0;
    __atomic_store_n(&st->held, 1, __ATOMIC_RELAXED);
    st->node = c;
    st->hold_start = c;
    enc_record_commit(&st->seq);
    __atomic_store_n(&st->held_since, enc_now_ns(), __ATOMIC_RELAXED); /* read by the deadline thread unlocked */
    __atomic_fetch_add(&enc_hot.n_held, 1, __ATOMIC_RELAXED);
    enc_deadline_start();
    return 1;
}

/* Launches are held: hold this one too if it continues a graph's sequence
 * from where they are in the trie (and the driver would take it: else it
 * returns the driver's error, in order); else release them and issue it. */
static CUresult continue_holding(enc_stream_state *st, const enc_launch *l, const enc_layout *L, int recorded,
                                 uint64_t t0) {
    uint32_t c = recorded ? enc_store_step(&st->store, st->node, st->seq.recs[st->seq.n].sfp) : ENC_NO_NODE;
    if (c != ENC_NO_NODE && enc_launch_valid(st, &st->seq.recs[st->seq.n])) {
        st->node = c;
        enc_record_commit(&st->seq);
        if (enc_sequence_graph_end_due(st, c)) enc_sequence_end_at_graph_end(st);
        return done_held(st, t0);
    }
    /* diverged from every graph (or a graph ends before it), or refused */
    if (!recorded) {
        ENC_DEBUG("a hold of %u launches ends at %s: it could not be recorded", st->seq.n, L ? L->name : "?");
    } else if (c != ENC_NO_NODE) {
        const enc_rec *r = &st->seq.recs[st->seq.n];
        ENC_DEBUG("a hold of %u launches ends at %s (grid %u,%u,%u block %u,%u,%u smem %u): %s", st->seq.n,
                  L ? L->name : "?", r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2], r->smem,
                  enc_launch_refusal(st, r));
    }
    enc_release_on_divergence(st, l->f, L, recorded && c == ENC_NO_NODE);
    return done_issued(st, issue_now(l, ENC_EAGER_DIVERGED), t0);
}

static CUresult record_then_hold_or_issue(enc_stream_state *st, const enc_launch *l, const enc_layout *L) {
    if (__builtin_expect(st->early_node != 0, 0)) enc_graph_end_work(st); /* no call since a replay at its end */
    uint64_t t0 = sample_start(st);
    int recorded = enc_sequence_record(st, l, L);
    if (st->held) return continue_holding(st, l, L, recorded, t0);
    if (recorded && enc_launch_start_holding(st)) return done_held(st, t0);
    enc_tstats *ts = enc_tstats_get();
    if (!t0 && (!ts || ts->launch_samples >= 4)) /* each thread's first few are timed too */
        return done_issued(st, issue_now(l, ENC_EAGER_LEARNING), t0);
    /* timed: the driver's own time for one launch (the report's time saved per launch replayed) */
    uint64_t t1 = enc_now_ns();
    CUresult r = issue_now(l, ENC_EAGER_LEARNING);
    uint64_t ns = enc_now_ns() - t1;
    if (ns >= ENC_SAMPLE_MAX_NS) return done_issued(st, r, t0); /* a one-off: neither sample is taken */
    enc_stats_launch_sample(ns);
    if (t0) SAMPLE(record, t1 - t0); /* and encore's own time recording it (the report's recording cost) */
    return done_issued(st, r, t0);
}

/* Several devices: a kernel launch goes to a stream of the current context;
 * the driver refuses one to a stream of another device (a stream of another
 * context: CUDA_ERROR_INVALID_HANDLE). encore releases with the stream's own
 * context current, so such a launch, held, would run where the program's
 * did not: it is never held but passes through, after what is held, and
 * the driver answers. The legacy and per-thread streams are looked up in the
 * current context: always theirs. One thread-local query of the driver. */
static int launch_elsewhere(const enc_stream_state *st) {
    if (__atomic_load_n(&st->kind, __ATOMIC_RELAXED) != ENC_STREAM_EXPLICIT) return 0;
    CUcontext ctx = __atomic_load_n(&st->ctx, __ATOMIC_RELAXED), cur = NULL;
    if (!ctx) return 0;
    uint32_t gen = __atomic_load_n(&enc_hot.ctx_gen, __ATOMIC_ACQUIRE);
    if (enc_thr.cur_ctx_gen == gen) return enc_thr.cur_ctx != ctx; /* remembered (context.c) */
    if (enc_drv.ctxGetCurrent(&cur) != CUDA_SUCCESS) return 0;
    enc_thr.cur_ctx = cur;
    enc_thr.cur_ctx_gen = gen;
    return cur != ctx;
}

/* The stream rests (rest.c): the launch goes out as without encore, after what
 * other streams hold that it must follow, only counted. */
static CUresult pass_resting(enc_stream_state *st, const enc_launch *l) {
    enc_launch_legacy_order(st);
    ENC_TSTAT_ADD(launches_unrecorded, 1);
    ENC_COUNT_EAGER(ENC_EAGER_RESTING, 1);
    return enc_core_call_sampled(l);
}

/* The launch on st's stream: takes st->mu and releases it. */
static CUresult launch_on(enc_stream_state *st, const enc_launch *l) {
    if (enc_rest_take(st)) return pass_resting(st, l); /* no lock: nothing is open or held on a resting stream */
    legacy_order(st);
    enc_mutex_lock(&st->mu);
    if (__builtin_expect(st->join_pending, 0)) enc_stream_join_side(st);
    if (__atomic_load_n(&enc_hot.prog_capturing, __ATOMIC_RELAXED) > 0) return end_sequence_and_pass_through(st, l);
    if (__builtin_expect(launch_elsewhere(st), 0)) return end_sequence_and_pass_through(st, l);
    if (__builtin_expect(st->attr_gen != __atomic_load_n(&enc_hot.attr_gen, __ATOMIC_RELAXED), 0))
        enc_stream_check_attrs(st);
    if (__builtin_expect(st->attrs_differ, 0)) return end_sequence_and_pass_through(st, l);
    if (enc_rest_note_work(st, 1)) {
        enc_mutex_unlock(&st->mu);
        return pass_resting(st, l);
    }
    if (st->sparse && !st->held) return count_and_pass_through(st, l);
    const enc_layout *L = enc_layout_remembered(st->layouts, l->f);
    if (!L) return issue_first_launch(st, l);
    if (!recordable(L, l)) return end_sequence_and_pass_through(st, l);
    return record_then_hold_or_issue(st, l, L);
}

/* encore switched itself off (or ENCORE=0): counted, as every launch the program makes, and issued. */
static CUresult count_after_switch_off(const enc_launch *l) {
    enc_stats_touch();
    ENC_TSTAT_ADD(calls[ENC_CLASS_LAUNCH], 1);
    ENC_TSTAT_ADD(launches_seen, 1);
    ENC_COUNT_EAGER(ENC_EAGER_PASSIVE, 1);
    return call_real(l);
}

/* ---- the shortest way: a thread's launches to a stream that rests -----------------------
 * The explicit stream of this thread's most recent stream state (its first
 * way, base/thread.h), marked when a launch there rested. Its next launch
 * there is checked before the hook builds anything (engine.h), from the
 * thread's first cache line. */

int enc_core_launch_rests(CUstream stream) {
    struct enc_thread_stream *c = &enc_thr.streams[0];
    if (!c->rests || (void *)stream != c->key || enc_thr.guard || enc_audit_enter ||
        !__atomic_load_n(&enc_hot.active, __ATOMIC_RELAXED) || __atomic_load_n(&enc_hot.paused, __ATOMIC_RELAXED) ||
        __atomic_load_n(&enc_hot.n_held, __ATOMIC_RELAXED))
        return 0;
    enc_stream_state *st = c->st;
    if (__atomic_load_n(&st->gen, __ATOMIC_ACQUIRE) != c->gen || !enc_rest_take(st)) {
        c->rests = 0; /* retired, or the rest is over: the full path from here */
        return 0;
    }
    enc_tstats *t = enc_thr.tstats;
    if (t) {
        __atomic_store_n(&t->calls[ENC_CLASS_LAUNCH], t->calls[ENC_CLASS_LAUNCH] + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&t->launches_seen, t->launches_seen + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&t->launches_unrecorded, t->launches_unrecorded + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&t->launches_eager, t->launches_eager + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&t->eager_by[ENC_EAGER_RESTING], t->eager_by[ENC_EAGER_RESTING] + 1, __ATOMIC_RELAXED);
    }
    return 1;
}

void enc_core_launch_failed(CUresult r) {
    ENC_GUARDED {
        enc_core_note_result(r);
        enc_core_act_on_requests();
    }
}

static CUresult launch_guarded(const enc_launch *l);

/* The whole way runs guarded (ENC_GUARD_OWN): a signal handler's exit()
 * reached from anywhere on it takes no lock of encore's (core/path/init.c). */
CUresult enc_core_launch(const enc_launch *l) {
    if (enc_thr.guard) return call_real(l);
    enc_core_ensure_init();
    if (!enc_hot.active) {
        if (__atomic_load_n(&enc_hot.forked_child, __ATOMIC_RELAXED)) return call_real(l); /* no lock, no join */
        ENC_GUARDED enc_core_join_pending(); /* released before encore switched off */
        return __atomic_load_n(&enc_hot.switched_off, __ATOMIC_RELAXED) ? count_after_switch_off(l) : call_real(l);
    }
    enc_thr.guard = ENC_GUARD_OWN;
    CUresult r = launch_guarded(l);
    enc_thr.guard = 0;
    return r;
}

static void wait_episode_end(void);

static CUresult launch_guarded(const enc_launch *l) {
    if (__builtin_expect(enc_thr.wait_episode_ns != 0, 0)) wait_episode_end();
    if (__builtin_expect(__atomic_load_n(&enc_hot.paused, __ATOMIC_RELAXED), 0)) return enc_core_launch_paused(l);
    enc_tstats *t = enc_tstats_get();
    /* a thread's first launch marks the process's statistics touched: its own counters are in cache */
    if (__builtin_expect(!t || !t->calls[ENC_CLASS_LAUNCH], 0)) enc_stats_touch();
    if (t) {
        __atomic_store_n(&t->calls[ENC_CLASS_LAUNCH], t->calls[ENC_CLASS_LAUNCH] + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&t->launches_seen, t->launches_seen + 1, __ATOMIC_RELAXED);
    }
    enc_stream_state *st = enc_stream_for(l->stream, l->per_thread, 1); /* guards its own driver calls */
    /* A resting stream with nothing held anywhere (so nothing this launch must
     * follow: enc_launch_legacy_order): the shortest way to the driver. */
    if (st && !__atomic_load_n(&enc_hot.n_held, __ATOMIC_RELAXED) && enc_rest_take(st)) {
        if (t) {
            __atomic_store_n(&t->launches_unrecorded, t->launches_unrecorded + 1, __ATOMIC_RELAXED);
            __atomic_store_n(&t->launches_eager, t->launches_eager + 1, __ATOMIC_RELAXED);
            __atomic_store_n(&t->eager_by[ENC_EAGER_RESTING], t->eager_by[ENC_EAGER_RESTING] + 1, __ATOMIC_RELAXED);
        }
        enc_stream_note_rests(l->stream, st); /* explicit streams only: it checks the thread's way */
        CUresult r = enc_core_call_sampled(l);
        if (__builtin_expect(r != CUDA_SUCCESS, 0)) enc_core_launch_failed(r);
        return r;
    }
    CUresult r = st ? launch_on(st, l) : pass_straight_through(l);
    if (__builtin_expect(r != CUDA_SUCCESS, 0)) enc_core_note_result(r);
    if (__builtin_expect(__atomic_load_n(&enc_hot.disable_requested, __ATOMIC_RELAXED), 0))
        enc_core_act_on_requests(); /* no lock held here */
    return r;
}

void enc_core_opaque_launch(CUstream stream, int per_thread) {
    ENC_TSTAT_ADD(launches_seen, 1);
    ENC_COUNT_EAGER(ENC_EAGER_OPAQUE, 1);
    if (per_thread < 0)
        enc_core_flush_all(ENC_FLUSH_OPAQUE_LAUNCH);
    else
        enc_core_flush_stream(stream, per_thread, ENC_FLUSH_OPAQUE_LAUNCH);
}

/* ---- flush points ------------------------------------------------------------------- */

/* ENCORE_HOLD_RAMP, ENCORE_TAIL_CUT: a flush point starts the stream's ramp
 * again and ends its count of launches between flush points, also when
 * nothing is open there (the last sequence before it ended full). */
#define FLUSH_POINT_SHAPES (enc_opt.hold_ramp != 0 || enc_opt.tail_cut != 0)

void enc_core_flush_stream(CUstream stream, int per_thread, enum enc_flush_reason why) {
    if (!enc_hot.active) return;
    /* nothing open or held anywhere; a replay at a graph's end may wait for this call (graph_end.c) */
    int quiet = __atomic_load_n(&enc_hot.n_open, __ATOMIC_RELAXED) == 0 &&
                __atomic_load_n(&enc_hot.n_join_pending, __ATOMIC_RELAXED) == 0;
    if (quiet && __atomic_load_n(&enc_hot.n_early, __ATOMIC_RELAXED) == 0) {
        if (__builtin_expect(FLUSH_POINT_SHAPES, 0)) { /* nothing open; a stream without a state counts nothing */
            enc_stream_state *st = enc_stream_for(stream, per_thread, 0);
            if (st) enc_sequence_flush_point(st);
        }
        return;
    }
    enc_stream_state *st = enc_stream_for(stream, per_thread, !quiet);
    if (!st) {
        if (!quiet) order_without_state(stream, per_thread, why);
        return;
    }
    enc_launch_legacy_order(st);
    enc_mutex_lock(&st->mu);
    enc_stream_join_side(st);
    enc_sequence_end(st, why);
    enc_mutex_unlock(&st->mu);
}

void enc_core_program_graph(CUstream stream, int per_thread) {
    if (!enc_hot.active) return;
    ENC_TSTAT_ADD(program_graph_launches, 1);
    enc_stream_state *st = enc_opt.hold_rule ? enc_stream_for(stream, per_thread, 0) : NULL;
    if (!st || __atomic_load_n(&st->rest_left, __ATOMIC_RELAXED) > 0) return; /* resting: no lock */
    enc_mutex_lock(&st->mu);
    enc_rest_program_graph(st);
    enc_mutex_unlock(&st->mu);
}

void enc_core_flush_all(enum enc_flush_reason why) {
    if (__atomic_load_n(&enc_hot.n_open, __ATOMIC_RELAXED) == 0 &&
        __atomic_load_n(&enc_hot.n_join_pending, __ATOMIC_RELAXED) == 0 &&
        __atomic_load_n(&enc_hot.n_early, __ATOMIC_RELAXED) == 0) {
        if (__builtin_expect(FLUSH_POINT_SHAPES, 0)) { /* nothing open */
            int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
            for (int i = 0; i < n; i++) enc_sequence_flush_point(enc_states[i]);
        }
        return;
    }
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        enc_stream_state *st = enc_states[i];
        if (!__atomic_load_n(&st->open, __ATOMIC_RELAXED) && !__atomic_load_n(&st->early_node, __ATOMIC_RELAXED)) {
            if (__builtin_expect(FLUSH_POINT_SHAPES, 0)) enc_sequence_flush_point(st);
            continue;
        }
        enc_mutex_lock(&st->mu);
        enc_sequence_end(st, why);
        enc_mutex_unlock(&st->mu);
    }
    /* The call may order work after this thread's per-thread streams (a
     * blocking copy or memset runs on it): after what was released elsewhere too. */
    enc_stream_join_own_sides();
}

void enc_core_join_pending(void) { ENC_GUARDED enc_stream_join_own_sides(); }

/* ---- lifecycle events --------------------------------------------------------------- */

void enc_core_stream_destroy(CUstream stream, int per_thread) {
    if (stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) {
        enc_core_flush_stream(stream, per_thread, ENC_FLUSH_STREAM_CALL);
        return;
    }
    enc_stream_state *st = enc_stream_for(stream, per_thread, 0);
    if (st) enc_stream_retire(st);
}

void enc_core_stream_attrs_changed(void) { __atomic_fetch_add(&enc_hot.attr_gen, 1, __ATOMIC_RELEASE); }

/* ---- the host's waits for the GPU (ENC_F_WAITS) --------------------------------------- */

/* A wait episode: the waiting calls a thread makes between two of its
 * launches (a copy to the host and a synchronize, say: whichever of them
 * finds the GPU behind waits, the other does not), one sample for
 * ENCORE_HOLD_RAMP=2 when the thread launches again. */
static __thread uint64_t wait_t0 __attribute__((tls_model("initial-exec"))); /* 0: no wait being timed on this thread */

void enc_core_wait_begin(void) { wait_t0 = enc_now_ns(); }

/* The thread's own launches at its last wait, plus 1 (0: it never waited). */
static __thread uint64_t launches_at_wait __attribute__((tls_model("initial-exec")));
/* 1: the episode is a poll's (enc_core_polled), not a wait's: nothing for the ramp. */
static __thread int episode_polled __attribute__((tls_model("initial-exec")));

static uint64_t own_launches(void) {
    enc_tstats *t = enc_tstats_get();
    return t ? __atomic_load_n(&t->calls[ENC_CLASS_LAUNCH], __ATOMIC_RELAXED) : 0;
}

void enc_core_wait_end(void) {
    if (!wait_t0) return;
    uint64_t ns = enc_now_ns() - wait_t0;
    wait_t0 = 0;
    enc_stats_touch();
    ENC_TSTAT_ADD(sync_wait_ns, ns);
    ENC_TSTAT_ADD(sync_waits, 1);
    enc_thr.wait_episode_ns += ns ? ns : 1;
    launches_at_wait = own_launches() + 1;
}

/* A query of the GPU's progress (cuEventQuery, cuStreamQuery), whatever its answer. A thread
 * that has not waited in its last ENC_POLL_STEPS_AFTER launches (it polls instead: it waits for
 * nothing, or spins on a query) has its steps end at its next launch, as a wait would end them:
 * the program makes its queries at the same points of its steps whether encore is active or
 * passing through, where their answers may differ. A thread that waits keeps its waits' steps. */
#define ENC_POLL_STEPS_AFTER 4096u
void enc_core_polled(void) {
    uint64_t n = own_launches();
    if (launches_at_wait && n + 1 - launches_at_wait < ENC_POLL_STEPS_AFTER) return;
    if (!enc_thr.wait_episode_ns) episode_polled = 1;
    enc_thr.wait_episode_ns |= 1;
}

/* The thread launches again after waiting (or polling): a step ends (the self-check), and the
 * ramp counts the wait, unless encore is switched off (a benchmark's passive block). */
static void wait_episode_end(void) {
    if (!episode_polled && !__atomic_load_n(&enc_hot.paused, __ATOMIC_RELAXED))
        enc_sequence_note_wait(enc_thr.wait_episode_ns);
    enc_thr.wait_episode_ns = 0;
    episode_polled = 0;
    enc_selfcheck_step();
}
