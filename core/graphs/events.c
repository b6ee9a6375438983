/* encore: rare events, each counted once and forwarded to the report and
 * the JSON event log from one place.
 *
 * The engine calls one function per event; each keeps the statistics
 * (core/observe/stats.h) and writes the event (core/observe/report.h), so that the counts,
 * the report's lists and the event log cannot disagree. */
#define _GNU_SOURCE
#include "base/log.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/state/gate.h"
#include "core/graphs/worth.h"
#include "core/observe/report.h"

uint64_t enc_event_graph_captured(uint32_t len, const enc_rec *recs, uint64_t capture_ns, uint64_t instantiate_ns) {
    uint64_t id =
        enc_stats_new_seq(len, recs[0].L->name, len > 1 ? recs[1].L->name : NULL, len > 2 ? recs[2].L->name : NULL);
    enc_stats_graph_captured();
    enc_report_event_capture(id, len, recs[0].L->name, (double)capture_ns / 1e3, (double)instantiate_ns / 1e3);
    ENC_DEBUG("captured a sequence of %u launches starting with %s (graph %llu) in %llu us", len, recs[0].L->name,
              (unsigned long long)id, (unsigned long long)((capture_ns + instantiate_ns) / 1000));
    return id;
}

void enc_event_capture_failed(const char *what, CUresult r) {
    enc_stats_capture_failed();
    enc_report_event_capture_failure(0, what, (int)r);
    ENC_WARN_ONCE("capturing a launch sequence failed in %s (CUDA error %d); such sequences run eagerly", what, (int)r);
}

void enc_event_divergence(enum enc_divergence_kind kind, const enc_layout *expected, const enc_layout *got, int arg,
                          uint32_t pos) {
    const char *expected_name = expected ? expected->name : NULL, *got_name = got ? got->name : NULL;
    ENC_TSTAT_ADD(divergences, 1);
    ENC_TSTAT_ADD(divergences_by_kind[kind], 1);
    enc_stats_divergence(kind, expected_name, got_name, arg, pos);
    enc_div_info d = {
        .kind = kind, .expected = expected_name, .got = got_name, .arg_index = arg, .position = pos, .count = 1};
    enc_report_event_divergence(&d);
    ENC_DEBUG("divergence (%d) at launch %u: expected %s, got %s, argument %d", (int)kind, pos,
              expected_name ? expected_name : "-", got_name ? got_name : "-", arg);
}

void enc_event_graph_evicted(const enc_graph *g) {
    enc_stats_graph_evicted();
    enc_stats_seq_evicted(g->id);
    enc_report_event_evict(g->id, g->hits);
}

void enc_event_graph_hit(const enc_graph *g, uint32_t n, int patched) {
    enc_stats_seq_hit(g->id, g->hits);
    ENC_TSTAT_ADD(graph_launches, 1);
    if (patched) ENC_TSTAT_ADD(graph_launches_patched, 1);
    ENC_TSTAT_ADD(launches_replayed, n);
}

void enc_event_hold_given_up(const enc_layout *L, uint32_t replayed, uint32_t holds, uint32_t skip) {
    const char *name = L ? L->name : NULL;
    enc_report_event_hold("hold_given_up", name, replayed, holds, skip, NULL);
    ENC_DEBUG("holding at sequences starting with %s given up (%u of the last %u holds replayed); the next %u run "
              "eagerly",
              name ? name : "-", replayed, holds, skip);
}

void enc_event_hold_resumed(const enc_layout *L, const char *why) {
    const char *name = L ? L->name : NULL;
    enc_report_event_hold("hold_resumed", name, 0, 0, 0, why);
    ENC_DEBUG("holding at sequences starting with %s tried again (%s)", name ? name : "-", why);
}

void enc_event_capture_given_up(const enc_layout *L, uint32_t unpaid, uint32_t caps, uint32_t skip) {
    const char *name = L ? L->name : NULL;
    enc_report_event_hold("capture_given_up", name, caps - unpaid, caps, skip, NULL);
    ENC_DEBUG("capturing at sequences starting with %s given up (%u of its %u graphs never replayed); the next %u "
              "captures due there are refused",
              name ? name : "-", unpaid, caps, skip);
}

void enc_event_disabled(const char *why) {
    enc_log(ENC_LOG_WARN, "%s; encore switches itself off and passes every call through from now on", why);
    enc_stats_set_disabled();
}
