/* encore: what encore saved and cost in host time, estimated from measured
 * inputs, in total and by stream (the report's first rows: docs/report.md).
 *
 * Saved: the eager launches replays avoided, at this process's measured cost
 * of one (the driver's time in sampled eager launches). Lost: the measured
 * time of graph launches and patches, of captures and instantiations, the
 * time launches were held in holds that did not replay (the GPU may have
 * idled), and encore's time recording launches (its sampled time recording
 * one, for every launch recorded). Read at the report, and by rest.c at the
 * end of each window of a stream's launches (enc_window_lost_time).
 *
 * The time recording one launch is the mean over both of its samples: a
 * sampled launch that went out eagerly (record_ns) and one that was held
 * (deferred_ns). Either alone can be a handful of samples taken while the
 * process was cold (a first sighting of a kernel, a page touched): one such
 * sample of 11 us, the only eager one in a process whose launches were held,
 * once made a 30% gain read as a loss (CuPy's solver on the H200). */
#define _GNU_SOURCE
#include <string.h>

#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"
#include "core/observe/stats.h"

static int64_t balance(uint64_t saved, uint64_t lost) { return (int64_t)saved - (int64_t)lost; }

/* The estimate from a stream's accounts `a` (enc_stream_state.acct, or their
 * change over a window) and the launches it recorded meanwhile. */
static void estimate(const uint64_t a[ENC_ACCT_COUNT], uint64_t recorded, uint64_t per_launch, uint64_t per_held,
                     uint64_t *saved, uint64_t *lost) {
    *saved = a[ENC_ACCT_REPLAYED] * per_launch;
    *lost = a[ENC_ACCT_REPLAY_NS] + a[ENC_ACCT_CAPTURE_NS] + a[ENC_ACCT_UNPAID_NS] + recorded * per_held;
}

/* st's estimate, at per_launch and per_held ns (the process's measures). */
static enc_stream_time stream_time(const enc_stream_state *st, int index, uint64_t per_launch, uint64_t per_held) {
    enc_stream_time t;
    memset(&t, 0, sizeof t);
    uint64_t a[ENC_ACCT_COUNT];
    for (int i = 0; i < ENC_ACCT_COUNT; i++) a[i] = __atomic_load_n(&st->acct[i], __ATOMIC_RELAXED);
    t.index = index;
    t.kind = __atomic_load_n(&st->kind, __ATOMIC_RELAXED);
    t.launches = __atomic_load_n(&st->sample_clock, __ATOMIC_RELAXED);
    t.replayed = a[ENC_ACCT_REPLAYED];
    estimate(a, t.launches, per_launch, per_held, &t.saved_ns, &t.lost_ns);
    t.balance_ns = balance(t.saved_ns, t.lost_ns);
    return t;
}

/* The streams that recorded launches, the ENC_STREAMS_SHOWN that recorded the most kept, most first. */
static void by_stream(enc_summary *s, uint64_t per_launch, uint64_t per_held) {
    s->n_streams = 0;
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        enc_stream_time t = stream_time(enc_states[i], i, per_launch, per_held);
        if (!t.launches) continue;
        int k = s->n_streams < ENC_STREAMS_SHOWN ? s->n_streams : ENC_STREAMS_SHOWN;
        s->n_streams++;
        while (k > 0 && s->streams[k - 1].launches < t.launches) { /* insertion, dropping the last if full */
            if (k < ENC_STREAMS_SHOWN) s->streams[k] = s->streams[k - 1];
            k--;
        }
        if (k < ENC_STREAMS_SHOWN) s->streams[k] = t;
    }
}

/* encore's time recording one launch: the mean over the sampled eager launches (record_*) and the
 * sampled held ones (deferred_*) together; 0 if none was sampled. */
static uint64_t per_recorded(uint64_t record_ns, uint64_t record_samples, uint64_t deferred_ns,
                             uint64_t deferred_samples) {
    uint64_t n = record_samples + deferred_samples;
    return n ? (record_ns + deferred_ns) / n : 0;
}

void enc_stats_time(enc_summary *s) {
    s->per_launch_mean_ns = s->launch_samples ? s->launch_ns / s->launch_samples : 0;
    s->per_launch_ns = enc_launch_median_ns(s->launch_hist);
    uint64_t per_held = per_recorded(s->record_ns, s->record_samples, s->deferred_ns, s->deferred_samples);
    uint64_t not_recorded = s->launches_unrecorded + s->launches_passive + s->eager_by[ENC_EAGER_FIRST] +
                            s->eager_by[ENC_EAGER_LEFT_ALONE] + s->eager_by[ENC_EAGER_OPAQUE];
    uint64_t recorded = s->launches_seen > not_recorded ? s->launches_seen - not_recorded : 0;
    s->recording_ns = recorded * per_held;
    s->time_saved_ns = s->launches_replayed * s->per_launch_ns;
    s->time_lost_ns = s->replay_ns + s->capture_ns + s->held_unpaid_ns + s->recording_ns;
    s->time_balance_ns = balance(s->time_saved_ns, s->time_lost_ns);
    by_stream(s, s->per_launch_ns, per_held);
}

int enc_window_lost_time(const enc_stream_state *st) {
    const enc_tstats *t = enc_tstats_get();
    if (!t || !t->launch_samples || !(t->record_samples + t->deferred_samples)) return 0;
    uint64_t per_launch = enc_launch_median_ns(t->launch_hist);
    uint64_t per_held = per_recorded(t->record_ns, t->record_samples, t->deferred_ns, t->deferred_samples);
    uint64_t d[ENC_ACCT_COUNT];
    for (int i = 0; i < ENC_ACCT_COUNT; i++) d[i] = st->acct[i] - st->win_acct0[i];
    uint64_t recorded = (uint32_t)(st->sample_clock - (uint32_t)st->win_acct0[ENC_ACCT_COUNT]);
    uint64_t saved, lost;
    estimate(d, recorded, per_launch, per_held, &saved, &lost);
    if (d[ENC_ACCT_CAPTURE_NS] && !d[ENC_ACCT_REPLAYED]) return 0; /* captured, not replayed yet: an investment */
    return saved < lost;
}
