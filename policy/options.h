/* encore: the one table of ENCORE_* options.
 *
 * Each row: field, environment variable, type, default (as a string, parsed
 * by the same code as the environment), minimum, maximum, one-line help.
 * options.c parses every row once at start-up, validates it, warns about bad
 * values (naming the variable, the value and the default used) and prints the
 * effective configuration on request. README's options table is checked
 * against this table by a test. The two sequence lengths' old variable names
 * (ENCORE_MAX_CHUNK, ENCORE_MIN_CHUNK) still work, with a warning. */
#ifndef ENCORE_OPTIONS_H
#define ENCORE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum enc_opt_type {
    ENC_OPT_BOOL,     /* 1/0, on/off, true/false, yes/no */
    ENC_OPT_INT,      /* integer in [min, max] */
    ENC_OPT_DURATION, /* microseconds; accepts units us, ms, s */
    ENC_OPT_STRING,   /* free text (paths, patterns), at most ENC_OPT_STRLEN-1 bytes */
    ENC_OPT_LEVEL     /* log level: error, warn, info, debug, trace (or 0..4) */
};

#define ENC_OPT_STRLEN 512

/* One row per line, in columns (clang-format leaves the table alone). */
/* clang-format off */
/*  X(field,          env name,                   type,             default,  min, max,      help) */
#define ENC_OPTIONS(X)                                                                                   \
    X(enabled,        "ENCORE",                   ENC_OPT_BOOL,     "1",      0, 1,           "master switch; 0 passes every call through, still counting launches for the report") \
    X(min_repeats,    "ENCORE_MIN_REPEATS",       ENC_OPT_INT,      "3",      1, 1000000,     "times a launch sequence must be seen before it is captured") \
    X(max_sequence,     "ENCORE_MAX_SEQUENCE",      ENC_OPT_INT,      "128",    2, 4096,        "longest launch sequence held in one graph; longer runs are cut into several sequences (old name: ENCORE_MAX_CHUNK)") \
    X(hold_budget,      "ENCORE_HOLD_BUDGET",       ENC_OPT_DURATION, "30us",   0, 10000000,    "host time a held sequence should take at most: on a stream whose launches come slower, sequences are cut shorter (a power of two, at least 8 launches) so that the GPU is not kept waiting; 0: always ENCORE_MAX_SEQUENCE") \
    X(hold_ramp,        "ENCORE_HOLD_RAMP",         ENC_OPT_INT,      "0",      0, 2,           "(trial) on a stream whose sequences ENCORE_HOLD_BUDGET cuts, the first sequences after a flush point (a synchronize, say) are shorter: a quarter of the cut (at least 2 launches), doubling back to it, so that the GPU, idle there, starts sooner; 1: always, 2: while the host waits for the GPU in synchronizing calls (8 us a call on average), 0: never") \
    X(tail_cut,         "ENCORE_TAIL_CUT",          ENC_OPT_INT,      "0",      0, 64,          "(trial) where the host waits for the GPU when it synchronizes (as for ENCORE_HOLD_RAMP=2) and a stream's flush points come every N launches, its last this many launches before the flush point are a sequence of their own, so that the GPU runs the rest while the host issues them, and less is left to wait for; 0: off") \
    X(hold_rule,      "ENCORE_HOLD_RULE",         ENC_OPT_BOOL,     "1",      0, 1,           "stop holding launches at a sequence start where holds keep ending without a replay (4 in a row, or fewer than half of the last 8; try again after 8, 16, ... up to 4096 sequences there), stop capturing where 4 graphs never replayed, and let a stream rest whose last 16384 launches replayed nothing and whose sequences mostly never came before, or whose last 4 windows lost host time: its next 16K, 64K, ... up to 4M launches pass through unrecorded, then 4096 are tried again") \
    X(event_nodes,      "ENCORE_EVENT_NODES",       ENC_OPT_BOOL,     "1",      0, 1,           "event records and waits join held sequences and become their graphs' event nodes; 0: they end the stream's sequence and are issued as calls (as after events_not_held), to tell whether a program's graphs run slower for their event nodes (a jitted JAX step's graphs, 3 kernels and 2 event operations, ran at two speeds on the H200)") \
    X(graph_end,        "ENCORE_GRAPH_END",         ENC_OPT_BOOL,     "0",      0, 1,           "(trial) held launches that complete a graph whose sequence ended at a call of the program (a synchronize, an event wait) and that no longer graph continues are replayed at once, not at that call: the GPU runs them while the host works toward it; if work comes on the stream before the call, that graph waits for its end again (a score: -4 a wrong guess, +1 a call at its end); 0: off, at the call (no gain shown on the H200, and JAX's jitted step guessed wrong at every try)") \
    X(pause_end,        "ENCORE_PAUSE_END",         ENC_OPT_BOOL,     "0",      0, 1,           "(trial) where the flush deadline releases held launches (the host paused inside a sequence: a decoding step's cache update, say), the sequence ends there; a place (launches since the last flush point) cut so twice ends sequences at once when they reach it again, what they hold replayed or issued, so that the GPU runs it during the pause; if work comes within a quarter of ENCORE_FLUSH_DEADLINE instead, the place waits for its pause again (a score: -4 a wrong guess, +1 a pause or a call there); 0: off (no wall-time gain shown on the H200: HF generate 0.990 [0.964, 1.022])") \
    X(device_patch,     "ENCORE_DEVICE_PATCH",      ENC_OPT_BOOL,     "0",      0, 1,           "(experimental, off; results changed on an H200 in earlier forms: docs/driver-rules.md) graphs of kernel launches only (with their attributes; no copies, memsets or events; 64 at most) are captured with encore's updater kernel first and their launches device-updatable: a replay writes changed argument bytes into the graph's ring in page-locked memory and the updater applies them on the GPU (no grids), instead of a host call a node; on the H200 it gained where the GPU waits for the host (native-random 0.65 of eager against 0.81) and lost where it does not (training step 1.09, generate 1.12)") \
    X(cut_backoff,      "ENCORE_CUT_BACKOFF",       ENC_OPT_INT,      "0",      0, 1,           "(trial) each time the flush deadline's cap on a stream's sequences comes down again within 256 sequences of doubling back (a slow stretch: holds cut now and then), it doubles back only after twice as many launches of quick full sequences in a row as the time before (32, 64, ... 1024), until 4096 sequences pass without a cap; 1: on, 0: off") \
    X(min_sequence,     "ENCORE_MIN_SEQUENCE",      ENC_OPT_INT,      "2",      1, 4096,        "shortest launch sequence worth a graph (old name: ENCORE_MIN_CHUNK)") \
    X(max_graphs,     "ENCORE_MAX_GRAPHS",        ENC_OPT_INT,      "1024",   1, 1000000,     "graphs kept at most; the least recently used is evicted") \
    X(flush_deadline, "ENCORE_FLUSH_DEADLINE",    ENC_OPT_DURATION, "200us",  1, 10000000,    "held launches are issued after this long even if no CUDA call comes") \
    X(patch,          "ENCORE_PATCH",             ENC_OPT_BOOL,     "1",      0, 1,           "when launches come in a captured sequence's structure but with other kernel arguments (a step counter, a new buffer), patch those into the graph (one driver call per changed launch) and replay it instead of running the sequence eagerly") \
    X(self_check,     "ENCORE_SELF_CHECK",        ENC_OPT_INT,      "1",      0, 2,           "in a program that synchronizes every step, time its steps with encore active and passing through, in alternating blocks (A P P A, four times: 128 steps), once graphs have replayed for ENCORE_SELF_CHECK_AFTER and then every 256, 512, ... up to 16384 steps: where active is slower, launches pass through until the next check; 1: off once the program uses its own switch (encoreSetActive), 2: on in the program's active blocks too (benchmarks), 0: never") \
    X(self_check_after, "ENCORE_SELF_CHECK_AFTER", ENC_OPT_DURATION, "1s",  0, 10000000,    "graphs replay this long, and for 64 steps at least, before the first self-check (ENCORE_SELF_CHECK): a short run (a demo, a quick benchmark) is not checked, so its passive blocks do not hide its gain, while a loop that runs longer than this is checked early in its life; 0: after 64 steps") \
    X(max_gap,        "ENCORE_MAX_GAP",           ENC_OPT_DURATION, "100us",  1, 10000000,    "a stream whose launches come further apart than this on average is not held back (its host work, not launching, sets the pace)") \
    X(include,        "ENCORE_INCLUDE",           ENC_OPT_STRING,   "",       0, 0,           "only sequences whose kernels all match one of these comma-separated name patterns (fnmatch; a C++ kernel by its mangled name or as the report shows it: at::native::*) are captured") \
    X(exclude,        "ENCORE_EXCLUDE",           ENC_OPT_STRING,   "",       0, 0,           "sequences containing a kernel matching one of these comma-separated patterns (as for ENCORE_INCLUDE: nccl*) are never captured") \
    X(report,         "ENCORE_REPORT",            ENC_OPT_BOOL,     "0",      0, 1,           "print the hit-rate report at exit") \
    X(report_file,    "ENCORE_REPORT_FILE",       ENC_OPT_STRING,   "",       0, 0,           "write the report to this file (appended) instead of stderr; implies ENCORE_REPORT=1 (%p is replaced by the process id)") \
    X(log_path,       "ENCORE_LOG",               ENC_OPT_STRING,   "",       0, 0,           "write JSON-lines events and a final summary to this file (%p is replaced by the process id)") \
    X(log_level,      "ENCORE_LOG_LEVEL",         ENC_OPT_LEVEL,    "warn",   0, 4,           "stderr verbosity: error, warn, info, debug, trace") \
    X(print_config,   "ENCORE_PRINT_CONFIG",      ENC_OPT_BOOL,     "0",      0, 1,           "print the effective configuration at start-up") \
    X(stats,          "ENCORE_STATS",             ENC_OPT_BOOL,     "0",      0, 1,           "print per-class hook call counts at exit (implies the report)") \
    X(wrap_pass,      "ENCORE_WRAP_PASS",         ENC_OPT_BOOL,     "0",      0, 1,           "also wrap pure pass-through entry points (queries, context switches) so ENCORE_STATS counts them; by default cuGetProcAddress and dlsym hand out the driver's own pointers for these") \
    X(trial,          "ENCORE_TRIAL",             ENC_OPT_STRING,   "",       0, 0,           "(benchmarks) settings for a benchmark's trial blocks, ENCORE_NAME=value separated by ';' (numeric options only): while the program's switch asks for trial blocks (encoreSetActive(2)) they replace the effective values, so that a setting is compared with the defaults in one process") \
    X(nvtx,           "ENCORE_NVTX",              ENC_OPT_BOOL,     "0",      0, 1,           "mark each replayed graph, capture and eager fallback (with its reason) with an NVTX range, for Nsight Systems; costs one branch when off")
/* clang-format on */

typedef struct enc_options {
#define ENC_OPT_FIELD(field, env, type, def, min, max, help) ENC_OPT_FIELD_##type(field)
#define ENC_OPT_FIELD_ENC_OPT_BOOL(f) int f;
#define ENC_OPT_FIELD_ENC_OPT_INT(f) int64_t f;
#define ENC_OPT_FIELD_ENC_OPT_DURATION(f) int64_t f;
#define ENC_OPT_FIELD_ENC_OPT_STRING(f) char f[ENC_OPT_STRLEN];
#define ENC_OPT_FIELD_ENC_OPT_LEVEL(f) int f;
    ENC_OPTIONS(ENC_OPT_FIELD)
#undef ENC_OPT_FIELD
} enc_options;

/* The effective options. Valid after enc_options_init(); read-only afterwards, but for
 * ENCORE_TRIAL's numeric options while a benchmark switches its trial blocks (enc_options_trial). Aligned to a
 * cache line: the options a held launch reads (max_sequence, hold_ramp, tail_cut, hold_rule,
 * graph_end) come first in the table, and share its first line. */
extern enc_options enc_opt __attribute__((aligned(64)));

/* An option read by a thread of encore's own (the flush deadline's) while ENCORE_TRIAL's switch
 * may store it (enc_options_trial): read atomically, as the switch stores. */
static inline int64_t enc_opt_get_i64(const int64_t *field) { return __atomic_load_n(field, __ATOMIC_RELAXED); }

/* Parse every ENCORE_* variable from the environment (once; later calls do
 * nothing). Warns about bad values and unknown ENCORE_* names. */
void enc_options_init(void);

/* Parse from an explicit lookup function instead of getenv (for tests).
 * Resets every option to its default first. */
void enc_options_parse(const char *(*lookup)(const char *name, void *ctx), void *ctx);

/* Print the effective configuration (name=value  # help) to the log fd,
 * whatever ENCORE_LOG_LEVEL says. enc_options_init() does not call it; the
 * engine does when enc_opt.print_config is set. */
void enc_options_print(void);

/* Table access for tests and the README check. */
typedef struct enc_option_desc {
    const char *field;
    const char *env;
    enum enc_opt_type type;
    const char *def;
    int64_t min, max;
    const char *help;
    size_t offset; /* offsetof(enc_options, field) */
} enc_option_desc;
extern const enc_option_desc enc_option_table[];
extern const int enc_option_count;

/* Where an option's effective value came from. */
enum enc_opt_source {
    ENC_OPT_FROM_DEFAULT = 0, /* not set (or set to the empty string) */
    ENC_OPT_FROM_ENV,         /* set to a valid value */
    ENC_OPT_FROM_BAD_ENV      /* set to a bad value: warned, default used */
};
enum enc_opt_source enc_option_source(int index);

/* Effective value of row `index`: numeric rows (bool, int, duration in
 * microseconds, level) and string rows. */
int64_t enc_option_int(int index);
const char *enc_option_str(int index);

/* Effective value of row `index` as text, in the form the environment accepts
 * (durations with a unit, levels by name). Returns the length (snprintf-like). */
int enc_option_format(int index, char *buf, size_t cap);

/* Name of a log level 0..4 ("error" .. "trace"); "?" otherwise. */
const char *enc_log_level_name(int level);

/* ENCORE_TRIAL: on (1) stores its settings over the effective values, off (0)
 * puts the effective values back, -1 only asks; a repeated call changes nothing. Returns
 * how many settings it holds (0: none, the call did nothing). Its items are
 * parsed with the other options; a bad one is warned about, naming
 * ENCORE_TRIAL, and left out. The caller keeps other threads from acting on
 * the options while it switches (the engine flushes everything first). */
int enc_options_trial(int on);

/* Warn once about every ENCORE_* name in envp that is no option (suggesting
 * the closest one). enc_options_init() does this for environ; tests pass
 * their own array. Returns how many unknown names were found. */
int enc_options_check_environ(char *const *envp);

#endif
