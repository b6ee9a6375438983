/* encore: the one list of per-thread counters that are summed (ENC_TSTAT_COUNTERS).
 *
 * Each counter is one row X(name, label, whole, meaning), and that row makes
 * it everywhere it has to be: a uint64_t `name` in the per-thread block
 * (enc_tstats) and in the summary (enc_summary, stats.h), its sum over the
 * threads (enc_stats_snapshot, stats.c), and its row of the report's field
 * list (enc_report_fields, report.c): the JSON summary's key `name`, and a
 * table row when it has a label. To add a counter, add its row here and count
 * it with ENC_TSTAT_ADD(name, n).
 *   name     the field and the JSON key
 *   label    the table row's label (leading spaces: a row under the one
 *            above), or NULL: in the JSON summary only
 *   whole    ENC_NO_WHOLE, or ENC_WHOLE(count): the table row also shows
 *            the counter as a share of `count` (report_fields.h)
 *   meaning  one line for whoever reads the list (not used in the code)
 *
 * The list is cut into parts only so that the report keeps its order: each
 * part is expanded in report.c where its counters are written, between the
 * values that are not in this list. The JSON summary's keys and the table's
 * rows come out in the order of the rows here and of the field list there;
 * a new row goes in the part whose neighbours it should be shown with.
 * ENC_TSTAT_UNREPORTED holds the counters summed but not written on their own.
 * unit.report (tests/unit/test_report.c) checks that every other row has its
 * row in the report, under its own name.
 *
 * Not in this list, kept by hand because they are not one summed uint64_t:
 * the arrays (calls, divergences_by_kind, flushes, eager_by, learnt,
 * flushes_by_cause: report groups with keys and labels of their own in
 * report.c, and the flush points' top list; launch_hist, read only through
 * its median, per_launch_ns), the rare events counted once
 * for the process in globals of stats.c (graphs_captured, graphs_evicted,
 * capture_failures, oom_retries, disabled), the values the engine is asked for
 * (event_nodes_turned_back, events_not_held), and the derived ones, computed
 * at the snapshot (captured_never_replayed and self_check_permille in stats.c; per_launch_ns,
 * per_launch_mean_ns, recording_ns, time_* and the streams' time in core/streams/worth.c). */
#ifndef ENCORE_STATS_COUNTERS_H
#define ENCORE_STATS_COUNTERS_H

/* clang-format off */
/*  X(name,                      label,                                             whole,                     meaning) */
#define ENC_TSTAT_UNREPORTED(X) /* the report shows per_launch_ns and self_check_permille instead */ \
    X(launch_ns,                 NULL,                                              ENC_NO_WHOLE,              "the driver's time in sampled eager launches") \
    X(self_check_permille_sum,   NULL,                                              ENC_NO_WHOLE,              "the self-checks' active / passive x 1000, summed over the checks (self_checks)")
#define ENC_TSTAT_TIME(X) /* the time estimate's measured inputs (the JSON puts recording_ns after them) */ \
    X(launch_samples,            NULL,                                              ENC_NO_WHOLE,              "eager launches timed (sampled)") \
    X(replay_ns,                 NULL,                                              ENC_NO_WHOLE,              "patching and launching graphs (every replay)") \
    X(capture_ns,                NULL,                                              ENC_NO_WHOLE,              "capturing and instantiating (every capture, failed ones too)") \
    X(sync_wait_ns,              NULL,                                              ENC_NO_WHOLE,              "the host's time blocked in synchronizing calls (ENC_F_WAITS): the GPU was behind it there") \
    X(sync_waits,                NULL,                                              ENC_NO_WHOLE,              "the synchronizing calls sync_wait_ns timed")
#define ENC_TSTAT_RECORD_TIME(X) /* recording_ns's inputs */ \
    X(record_ns,                 NULL,                                              ENC_NO_WHOLE,              "encore's time recording sampled launches (the sampled ones alone)") \
    X(record_samples,            NULL,                                              ENC_NO_WHOLE,              "the launches record_ns timed")
#define ENC_TSTAT_LAUNCHES(X) /* then eager_by, replay_pct, graphs_captured */ \
    X(launches_seen,             "kernel launches seen",                            ENC_NO_WHOLE,              "every kernel launch the program made") \
    X(launches_replayed,         "  replayed through graphs",                       ENC_WHOLE(launches_seen),  "of those, issued as part of a graph") \
    X(launches_eager,            "  launched eagerly (one by one)",                 ENC_WHOLE(launches_seen),  "issued one by one (never held, or held then released); eager_by says why")
#define ENC_TSTAT_REPLAYED(X) /* then captured_never_replayed */ \
    X(graphs_replayed,           NULL,                                              ENC_NO_WHOLE,              "graphs that replayed at least once")
#define ENC_TSTAT_GRAPHS(X) /* then graphs_evicted ... learnt */ \
    X(captures_given_up,         "    given up (none replayed)",                    ENC_NO_WHOLE,              "times capturing at a start whose graphs never replayed was given up") \
    X(captures_refused,          "    captures refused meanwhile",                  ENC_NO_WHOLE,              "captures due there and not made meanwhile") \
    X(graph_launches,            "  graph launches (replays)",                      ENC_NO_WHOLE,              "replays") \
    X(graph_launches_patched,    "    with arguments patched in",                   ENC_NO_WHOLE,              "of those, with changed arguments patched into the graph first") \
    X(nodes_patched,             "      nodes patched",                             ENC_NO_WHOLE,              "nodes those patches wrote (patches per patched replay: / the above)") \
    X(nodes_patched_on_device,   "      of them on the GPU (ENCORE_DEVICE_PATCH)",   ENC_WHOLE(nodes_patched),  "of those nodes, patched by the graph's updater kernel on the GPU (core/graphs/devpatch.c)") \
    X(device_ring_full,          NULL,                                              ENC_NO_WHOLE,              "replays that went out eagerly instead: the GPU had not taken the graph's slot yet (ENCORE_DEVICE_PATCH)") \
    X(grids_patched,             "      of them given another grid",                ENC_WHOLE(nodes_patched),  "of those nodes, kernel nodes given another grid (four times an argument patch's cost on an H200)") \
    X(patch_ns,                  NULL,                                              ENC_NO_WHOLE,              "of replay_ns, the time writing those patches (a node's: / nodes_patched)") \
    X(graph_structures,          "  structures with graphs",                        ENC_NO_WHOLE,              "places (structures) that got a first graph: graphs per structure")
#define ENC_TSTAT_DIVERGENCES(X) /* then divergences_by_kind, its breakdown */ \
    X(divergences,               "divergences",                                     ENC_NO_WHOLE,              "held launches that left every captured sequence")
#define ENC_TSTAT_HOLDS(X) /* then flushes, flushes_by_call, calls */ \
    X(holds,                     "holds (held launches released)",                  ENC_NO_WHOLE,              "holds that ended (core/graphs/hold.c)") \
    X(holds_replayed,            "  ended in a replay",                             ENC_WHOLE(holds),          "of those, in a replay") \
    X(holds_at_graph_end,        "    at their graph's end",                         ENC_WHOLE(holds),          "of those, replayed as soon as their last launch came, not at the program's call after it (graph_end.c)") \
    X(holds_at_pause,            "      where the host pauses",                     ENC_WHOLE(holds),          "of those, at a graph's end where the host paused before (ENCORE_PAUSE_END), not when the next launch or the flush deadline came") \
    X(graph_ends_wrong,          "      work came after, not a call",               ENC_NO_WHOLE,              "times work was recorded on the stream after such a replay before any call of the program: that graph's holds wait for their end again") \
    X(held_unpaid_ns,            NULL,                                              ENC_NO_WHOLE,              "time launches were held in holds that did not replay") \
    X(holds_given_up,            "  given up where holds did not pay",              ENC_NO_WHOLE,              "times holding at a start was given up") \
    X(holds_resumed,             "  tried again later",                             ENC_NO_WHOLE,              "times it was tried again (back-off, or a new graph there)") \
    X(streams_left_alone,        "streams left alone (MAX_GAP)",                    ENC_NO_WHOLE,              "times a stream's launches came further apart than ENCORE_MAX_GAP") \
    X(streams_rested,            "streams resting (nothing repeated)",              ENC_NO_WHOLE,              "times a stream's launches replayed nothing and stopped being recorded (rest.c)") \
    X(streams_rested_losing,     "  because they lost time",                        ENC_NO_WHOLE,              "of streams_rested, because its windows lost time (rest.c)") \
    X(streams_rested_own_graphs, "  beside the program's own graphs",               ENC_NO_WHOLE,              "of streams_rested, decided at the program's own graph launch") \
    X(streams_rested_process,    "  new, where the process's streams did not pay",  ENC_NO_WHOLE,              "of streams_rested, new streams of a process whose streams did not pay") \
    X(program_graph_launches,    "the program's own graph launches",                ENC_NO_WHOLE,              "graphs the program launched itself (cuGraphLaunch)") \
    X(launches_unrecorded,       "  launches passed through meanwhile",             ENC_WHOLE(launches_seen),  "launches passed through while their stream rested") \
    X(switched_off,              "switched off by the program",                     ENC_NO_WHOLE,              "times the program switched encore off (encoreSetActive(0))") \
    X(launches_passive,          "  launches while off (program, check)",           ENC_WHOLE(launches_seen),  "launches made while it was switched off, by the program or the self-check (issued, counted)") \
    X(self_checks,               "self-checks (steps timed on and off)",            ENC_NO_WHOLE,              "checks ENCORE_SELF_CHECK ran (core/path/selfcheck.c)") \
    X(self_checks_aside,         "  slower on: launches passed through",            ENC_NO_WHOLE,              "of those, checks where steps took longer with encore active: launches passed through until the next")
#define ENC_TSTAT_HOST(X) /* then disabled; the table shows their averages (report_table.c deferred_row) */ \
    X(deferred_ns,               NULL,                                              ENC_NO_WHOLE,              "CPU time of recording and holding a held launch (sampled), without release_ns") \
    X(deferred_samples,          NULL,                                              ENC_NO_WHOLE,              "the held launches deferred_ns timed") \
    X(release_ns,                NULL,                                              ENC_NO_WHOLE,              "CPU time of sequence ends a sampled launch caused (release, replay, learning)") \
    X(release_samples,           NULL,                                              ENC_NO_WHOLE,              "those ends (full, or the anchor came again)")

/* Every part, in the order of the JSON summary (the unreported ones first). */
/* The launch path's first: after a thread's calls[] they share its block's first cache line (stats.h). */
#define ENC_TSTAT_COUNTERS(X) \
    ENC_TSTAT_LAUNCHES(X) ENC_TSTAT_UNREPORTED(X) ENC_TSTAT_TIME(X) ENC_TSTAT_RECORD_TIME(X) ENC_TSTAT_REPLAYED(X) \
    ENC_TSTAT_GRAPHS(X) ENC_TSTAT_DIVERGENCES(X) ENC_TSTAT_HOLDS(X) ENC_TSTAT_HOST(X)
/* clang-format on */

/* A counter's field, in enc_tstats and enc_summary. */
#define ENC_TSTAT_FIELD(name, label, whole, meaning) uint64_t name;

#endif
