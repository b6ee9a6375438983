/* encore: the self-check (ENCORE_SELF_CHECK).
 *
 * Whether replaying pays is a matter of time, and time is what encore can
 * measure, not model: holding launches idles the GPU while the host records
 * them, graphs save the host its launch calls and the GPU some gaps between
 * kernels, and which wins depends on the program, its kernels and the host.
 * On the H200 (2026-11-27, calls 30-32, bench_native --host-us) a loop whose
 * kernels ran about as long as its host took between launches ran 1.06-1.28
 * times slower with encore, its holds and replays all "paid" by the counts,
 * while the same loop with small kernels ran 0.85 as long.
 *
 * So in a program that synchronizes with the GPU every step (the host waits
 * in cuStreamSynchronize, a copy back, ...), encore times the steps of the
 * thread that waits, from one launch after a wait to the next (a thread
 * that polls with cuEventQuery or cuStreamQuery instead, from one launch
 * after a query to the next: launch.c, enc_core_polled): once graphs have
 * replayed on that thread for SC_FIRST steps and ENCORE_SELF_CHECK_AFTER
 * (1 s: a demo of 100 steps, checked after 64, had a third of its
 * remaining steps passed through), and then every 256, 512, ... up to 16384 steps, a
 * check runs four groups of four blocks, A P P A then P A A P (A: encore
 * active, P: passing launches through, as the program's own switch does),
 * each block one untimed step at the switch and SC_BLOCK timed ones. Per
 * group, active / passive is the mean of its A blocks' median steps over
 * the mean of its P blocks'. Where the middle of the four group ratios is
 * above SC_LOSE and at least three of them above 1, encore steps aside:
 * launches pass through until the next check, which may take it back.
 * Where every group so far, two at least, is at or below SC_GAIN (a clear
 * gain), the check ends there and the next comes 8 times later: the
 * passive blocks cost a gaining program its gain, 32 to 64 steps a check. A
 * program that uses encore's switch itself (encoreSetActive: the
 * benchmarks) owns it, and the self-check stays off; with ENCORE_SELF_CHECK=2
 * it goes on in the program's active blocks (its steps in the program's
 * passive blocks are not timed), so that a benchmark's active blocks show
 * what the checks cost and decide. */
#define _GNU_SOURCE
#include "base/log.h"
#include "core/graphs/graphs.h"
#include "core/observe/stats.h"
#include "core/path/engine.h"
#include "core/path/path.h"
#include "core/path/selfcheck.h"
#include "core/state/gate.h"
#include "policy/options.h"

#define SC_BLOCK 8u    /* timed steps a block, after one untimed step at the switch */
#define SC_BLOCKS 16u  /* four groups of four blocks */
#define SC_FIRST 64u   /* steps replaying on the thread before the first check */
#define SC_PERIOD 256u /* steps between the first check and the second, doubling */
#define SC_PERIOD_MAX 16384u
#define SC_LOSE_PERMILLE 1010u /* active / passive above 1.010: encore costs the program time */
#define SC_GAIN_PERMILLE 950u  /* every group at or below 0.950: a clear gain, decided after two groups */
#define SC_GAIN_PERIOD 8u      /* ... and the next check comes 8 times later, not twice */

int enc_program_switched; /* the program called encoreSetActive: the switch is its own */

static struct {
    int checking, aside, resume;
    uint32_t count, period; /* steps since the last check; between checks */
    uint32_t block, in_block;
    uint64_t last;        /* the last step boundary, ns */
    uint64_t replaying;   /* the first step at which graphs had replayed on the thread, ns */
    uint64_t t[SC_BLOCK]; /* the block's step times */
    uint64_t med[SC_BLOCKS];
} sc;
static int sc_owner; /* a thread's steps are timed: the first to wait */
static __thread int sc_mine __attribute__((tls_model("initial-exec"))); /* 1: this thread's, -1: another's */

/* Block b of a check: active (A) or passing through (P)? A P P A, P A A P, ... */
static int block_active(uint32_t b) {
    uint32_t pos = b % 4;
    return (b / 4) % 2 == 0 ? (pos == 0 || pos == 3) : (pos == 1 || pos == 2);
}

/* The median of v[0..n), n >= 1 (a block's steps, a check's groups: insertion sort, in place). */
static uint64_t median(uint64_t *v, uint32_t n) {
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Group g's active / passive, times 1000. */
static uint64_t group_ratio(const uint64_t *med, uint32_t g) {
    uint64_t a = 0, p = 0;
    for (uint32_t k = 0; k < 4; k++) *(block_active(4 * g + k) ? &a : &p) += med[4 * g + k];
    return p ? a * 1000 / p : 1000;
}

int enc_selfcheck_verdict(const uint64_t *med, uint32_t groups, uint32_t *ratio_permille) {
    uint64_t r[SC_BLOCKS / 4];
    uint32_t above = 0, below = 0;
    if (groups > SC_BLOCKS / 4) groups = SC_BLOCKS / 4;
    for (uint32_t g = 0; g < groups; g++) {
        r[g] = group_ratio(med, g);
        above += r[g] > 1000;
        below += r[g] <= SC_GAIN_PERMILLE;
    }
    uint32_t mid = (uint32_t)median(r, groups); /* the middle of the groups' ratios */
    if (ratio_permille) *ratio_permille = mid;
    if (below == groups) return ENC_CHECK_GAINS;
    if (groups == SC_BLOCKS / 4 && mid > SC_LOSE_PERMILLE && above >= 3) return ENC_CHECK_LOSES;
    return ENC_CHECK_UNDECIDED;
}

static void begin_block(void) {
    sc.in_block = 0;
    enc_core_pause_for_check(!block_active(sc.block));
}

/* After group `groups` (counting from 1): decided, or go on (0). */
static int decide(uint32_t groups) {
    uint32_t ratio;
    int v = enc_selfcheck_verdict(sc.med, groups, &ratio);
    if (groups < 2 || (v == ENC_CHECK_UNDECIDED && groups < SC_BLOCKS / 4)) return 0; /* two groups at least */
    int lose = v == ENC_CHECK_LOSES;
    sc.checking = 0;
    sc.aside = lose;
    sc.count = 0;
    uint32_t grow = v == ENC_CHECK_GAINS ? SC_GAIN_PERIOD : 2;
    sc.period = sc.period ? (sc.period * grow < SC_PERIOD_MAX ? sc.period * grow : SC_PERIOD_MAX)
                          : (v == ENC_CHECK_GAINS ? SC_PERIOD * SC_GAIN_PERIOD / 2 : SC_PERIOD);
    enc_core_pause_for_check(lose);
    ENC_TSTAT_ADD(self_checks, 1);
    ENC_TSTAT_ADD(self_check_permille_sum, ratio);
    if (lose) ENC_TSTAT_ADD(self_checks_aside, 1);
    ENC_DEBUG("self-check: steps took %.3f times as long with encore active as passing through: %s for the next "
              "%u steps (ENCORE_SELF_CHECK)",
              ratio / 1000.0, lose ? "launches pass through" : "active", sc.period);
    return 1;
}

/* Is the self-check on: ENCORE_SELF_CHECK 1 until the program switches encore itself, 2 always
 * (a benchmark's trial blocks may set it: ENCORE_TRIAL=ENCORE_SELF_CHECK=2). */
static int on(void) {
    return enc_opt.self_check == 2 ||
           (enc_opt.self_check == 1 && !__atomic_load_n(&enc_program_switched, __ATOMIC_RELAXED));
}

/* Off for now (a benchmark's block without ENCORE_SELF_CHECK=2): what it paused runs again, and
 * the check goes on where it was when it is on again (its pause put back then). The program's
 * thread calls this; in the benchmarks it is the thread whose steps are timed. */
void enc_selfcheck_switched(void) {
    if (on() || !sc.last) return;
    sc.last = 0;
    sc.resume = 1;
    enc_core_pause_for_check(0);
}

void enc_selfcheck_step(void) {
    if (!on()) return;
    if (!sc_mine) sc_mine = __atomic_exchange_n(&sc_owner, 1, __ATOMIC_ACQ_REL) ? -1 : 1;
    if (sc_mine < 0) return;
    if (__atomic_load_n(&enc_hot.paused, __ATOMIC_RELAXED) & ENC_PAUSED_BY_PROGRAM)
        return;      /* a benchmark's passive block */
    if (sc.resume) { /* on again: its pause as it was */
        sc.resume = 0;
        enc_core_pause_for_check(sc.checking ? !block_active(sc.block) : sc.aside);
    }
    uint64_t now = enc_now_ns(), dt = sc.last ? now - sc.last : 0;
    sc.last = now;
    if (!dt) return;
    if (!sc.checking) {
        if (!sc.aside) { /* not before graphs replay on this thread */
            enc_tstats *t = enc_tstats_get();
            if (!t || !t->graph_launches) return;
        }
        if (!sc.replaying) sc.replaying = now;
        if (++sc.count < (sc.period ? sc.period : SC_FIRST)) return;
        if (!sc.period && now - sc.replaying < (uint64_t)enc_opt.self_check_after * 1000u)
            return; /* the first check: not in a short run (ENCORE_SELF_CHECK_AFTER) */
        sc.checking = 1;
        sc.block = 0;
        begin_block();
        return;
    }
    if (sc.in_block++ == 0) return; /* the step the switch began: untimed */
    sc.t[sc.in_block - 2] = dt;
    if (sc.in_block < SC_BLOCK + 1) return;
    sc.med[sc.block] = median(sc.t, SC_BLOCK);
    if (++sc.block % 4 == 0 && decide(sc.block / 4)) return;
    begin_block();
}
