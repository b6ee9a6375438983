/* Programs where capturing or replaying does not pay (issue 28), one
 * behaviour per mode; every step prints a checksum, so work issued out of
 * order, twice or not at all changes the output.
 *
 *   opbyop     JAX op by op: each op waits for the event the op before it
 *              recorded (on the other of two streams), runs one kernel and
 *              records its own event; a step ends with a synchronisation.
 *              A graph of one kernel between event operations (or of event
 *              operations alone) saves nothing: none may be launched.
 *   opbyop-events  the same, with a third stream that only follows: after
 *              each op it waits for the op's event and records one of its
 *              own (event operations alone, no kernel): it must rest too.
 *   pairs      every step works on new buffers (as a caching allocator that
 *              hands out new tensors), and each step's body comes twice in a
 *              row: with ENCORE_PATCH=0 each body is captured after its
 *              second sighting and never comes again, so its graph never
 *              replays. Captures at that start must stop after a few.
 *   owngraphs  a program that runs its own graph (torch.compile's
 *              "reduce-overhead", CUDA-graph trees): each step copies its
 *              input with one eager kernel, launches the graph it captured
 *              once (8 kernels) and reads the result now and then. Nothing
 *              between the graph launches is worth holding: the stream
 *              steps aside. With `eager` > 1, that many kernels run eagerly
 *              before each graph launch, the same every step: worth a graph.
 *
 *   twice      a set-up sequence that runs twice (before a warm-up and
 *              before the timed loop, as benchmarks and training scripts
 *              do), then a loop: the set-up is never captured (a sequence
 *              is captured at its third sighting, ENCORE_MIN_REPEATS=3).
 *
 *   unsteady   a loop of 8 kernels (steps times), then sequences that begin
 *              with the loop's first kernel and go elsewhere each time (a
 *              warm-up, a phase change: holds there keep failing), among
 *              which the loop cut after 5 kernels comes three times, then
 *              the loop again. A sequence seen three times at a start whose
 *              holds keep failing is weak evidence: its graph would never
 *              replay. Run with ENCORE_PATCH=0 (the others never repeat).
 *
 *   prefixes   a loop of 8 kernels (steps times), each step read back by
 *              the host; between two runs of it, the host reads back after
 *              the loop's first 2 kernels twice and after its first 5
 *              twice (torch.compile's warm-up: flush points came after 1,
 *              2, 4, 5 or 8 of a graph's fills), a few loop steps between
 *              them. A flush point that cuts a graph's path short where it
 *              did not before is weak evidence: those prefixes are never
 *              captured, though they begin at a loop's entry.
 *   prefixes-six  the same with the loop's first 2 kernels read back six
 *              times, 3 loop steps after each: still not captured.
 *
 *   buckets    a serving loop whose requests take one of 8 paths after the
 *              same first kernel (a batch size's kernels, chosen by size),
 *              drawn at random: while paths are new, holds at that start
 *              fail and are given up, yet each path comes again and again
 *              and is worth its graph as soon as it has come three times.
 *
 *   comeback   a request's first kernel, then one of 32 paths; path 0 is
 *              the one that comes back. Rounds of four new paths (holds at
 *              the first kernel fail: given up) and then path 0, 8 << round
 *              times and 7 more: while holding there is given up, path 0's
 *              requests, which have their graph, run eagerly; seen so, the
 *              start is held again (the rest at a serving loop's entry
 *              whose holds failed on new batch sizes, H200 2026-11-27).
 *
 *   copies     a request: its rows copied in from page-locked host memory,
 *              one kernel, the answer copied back, read by the host. One
 *              kernel between two copies is three calls, and its graph
 *              saves two: it is worth capturing (copies count as work, event
 *              operations do not).
 *
 *   stall      a step of 32 kernels, then the result read back; in steps 12
 *              and 13 the host stalls for 20 ms after the 16th (a garbage
 *              collection, a warm-up's slow step): both holds are cut by the
 *              flush deadline, so the stream's sequences are held to 8
 *              launches. Once the host is quick again, the stream must go
 *              back to its step-long graph before it captures graphs of 8
 *              launches that would never replay after it did.
 *
 *   slowstretch  a step of 32 kernels, then the result read back; in steps
 *              10 to 49 the host stalls for 3 ms before about one launch in
 *              8 (a slow stretch of a process: the machine busy, a warm-up),
 *              so holds are cut by the flush deadline now and then, and the
 *              stream's sequences are held shorter, then longer again, again
 *              and again.
 *
 *   tail       a step of 6 kernels and a reduction, then 500 us of host work
 *              before the host reads the result (a copy to the host). Held
 *              until that copy, the step's graph would wait out the flush
 *              deadline every step; it replays at its last launch instead
 *              (ENCORE_GRAPH_END). With `eager` 1, from step 20 on the step
 *              goes on with 3 more kernels after the reduction before the
 *              copy: the replay at the reduction was a wrong guess there,
 *              and the longer step is learnt; with 2, in step 20 only (a
 *              one-off: the replays at the reduction go on).
 *
 *   pauses     a decoding loop (Hugging Face generate on the H200, call 88): a
 *              step of 48 kernels whose arguments change every step (the
 *              caching allocator moves every activation each token: patched
 *              graphs), with the host busy for 2 ms after the 13th and the
 *              37th (the cache update, the logits' processing), then the
 *              result read back. Held across a pause, launches wait out the
 *              flush deadline and the GPU idles.
 *
 *   cg         a solver's steps (the CUDA samples' conjugate gradient, as
 *              CuPy runs it): 20 iterations of 17 launches (a memset,
 *              kernels, a reduction) and the result read back. The first
 *              step begins with 3 launches more (a library's one-off
 *              analysis: cuSPARSE's partition of the matrix), which shifts
 *              where its sequences are cut: cut every 8 launches (the hold
 *              budget on a slow host; ENCORE_MAX_SEQUENCE=8 in the test), a
 *              loop of 17 rotates through 17 sequences, and the first step's
 *              come three times inside it and never again: later steps are
 *              cut at their first launch (the anchor).
 *
 *   cgalloc    cg as CuPy's first solve runs it: in its second iteration it
 *              allocates its temporaries (a free flushes everything, so the
 *              launch after it anchors the stream inside the loop), and the
 *              reductions' results rotate through three buffers (CuPy's pool
 *              hands them out in turn), so the loop repeats every 51
 *              launches. The first step's sequences, cut from that anchor,
 *              come three times in it; later steps are cut from their first
 *              launch, and the first step's never come again.
 *
 *   prog_worth MODE [steps] [eager] */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 256u
#define OPS 8
#define BUFS 64

static prog_kernels k;

static void opbyop(int steps, int follower) {
    CUstream s[2] = {prog_stream(CU_STREAM_NON_BLOCKING), prog_stream(CU_STREAM_NON_BLOCKING)};
    CUstream f = follower ? prog_stream(CU_STREAM_NON_BLOCKING) : NULL;
    CUevent ev[OPS], fev;
    for (int i = 0; i < OPS; i++) CK(drv.cuEventCreate(&ev[i], CU_EVENT_DISABLE_TIMING));
    CK(drv.cuEventCreate(&fev, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s[0], N, &x, &y, &r);
    CK(drv.cuEventRecord(ev[OPS - 1], s[0]));
    for (int it = 0; it < steps; it++) {
        for (int i = 0; i < OPS; i++) {
            CUstream st = s[i % 2];
            CK(drv.cuStreamWaitEvent(st, ev[(i + OPS - 1) % OPS], 0));
            if (i % 3 == 0)
                k_add(&k, st, y, x, N);
            else if (i % 3 == 1)
                k_axpy(&k, st, x, y, 3, N);
            else
                k_stamp(&k, st, y, N);
            CK(drv.cuEventRecord(ev[i], st));
            if (f) {
                CK(drv.cuStreamWaitEvent(f, ev[i], 0));
                CK(drv.cuEventRecord(fev, f));
            }
        }
        CK(drv.cuStreamWaitEvent(s[0], ev[OPS - 1], 0));
        k_reduce(&k, s[0], r, y, N);
        prog_print_reduce(s[0], r, "step", it);
    }
    CK(drv.cuStreamSynchronize(s[1]));
    if (f) CK(drv.cuStreamSynchronize(f));
    prog_finish(s[0], x, y, N);
}

static void pairs(int steps) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r, xs[BUFS], ys[BUFS];
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    prog_ring_buffers(&k, s, N, BUFS, 3, xs, ys);
    for (int it = 0; it < steps; it++) {
        CUdeviceptr a = xs[(it / 2) % BUFS], b = ys[(it / 2) % BUFS];
        k_add(&k, s, b, a, N);
        k_stamp(&k, s, b, N);
        k_mix(&k, s, a, 11, N);
        k_axpy(&k, s, a, b, 3, N);
        k_reduce(&k, s, r, b, N);
        prog_print_reduce(s, r, "step", it);
    }
    prog_finish(s, x, y, N);
}

static void owngraphs(int steps, int eager) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r, in = prog_alloc(N), z = prog_alloc(N);
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    k_fill(&k, s, in, 7, N);
    k_fill(&k, s, z, 9, N);
    CUgraph g;
    CUgraphExec ge;
    CK(drv.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (int i = 0; i < OPS / 2; i++) {
        k_axpy(&k, s, y, x, 3, N);
        k_stamp(&k, s, y, N);
    }
    k_reduce(&k, s, r, y, N);
    CK(drv.cuStreamEndCapture(s, &g));
    CK(drv.cuGraphInstantiate(&ge, g, 0));
    for (int it = 0; it < steps; it++) {
        for (int i = 1; i < eager; i++) /* the program's eager work before its graph */
            i % 2 ? k_stamp(&k, s, z, N) : k_axpy(&k, s, z, in, 5, N);
        k_add(&k, s, x, in, N); /* the step's input, into the graph's own buffer */
        CK(drv.cuGraphLaunch(ge, s));
        if (it % 64 == 0 || it == steps - 1) prog_print_reduce(s, r, "step", it);
    }
    CK(drv.cuGraphExecDestroy(ge));
    CK(drv.cuGraphDestroy(g));
    k_add(&k, s, y, z, N);
    prog_finish(s, x, y, N);
}

static void setup_then_loop(CUstream s, CUdeviceptr x, CUdeviceptr y, CUdeviceptr r, int steps) {
    k_fill(&k, s, x, 1, N); /* the set-up: fill, mix, fill, stamp */
    k_mix(&k, s, x, 3, N);
    k_fill(&k, s, y, 2, N);
    k_stamp(&k, s, y, N);
    for (int it = 0; it < steps; it++) {
        k_add(&k, s, y, x, N);
        k_axpy(&k, s, x, y, 3, N);
        k_stamp(&k, s, x, N);
        k_reduce(&k, s, r, x, N);
        prog_print_reduce(s, r, "step", it);
    }
}

static void twice(int steps) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    setup_then_loop(s, x, y, r, 5); /* warm-up */
    setup_then_loop(s, x, y, r, steps);
    prog_finish(s, x, y, N);
}

/* The loop body's kernel j (of 8). */
static void body_kernel(CUstream s, CUdeviceptr x, CUdeviceptr y, CUdeviceptr r, int j) {
    switch (j) {
    case 0: k_add(&k, s, y, x, N); break;
    case 1: k_stamp(&k, s, y, N); break;
    case 2: k_mix(&k, s, x, 3, N); break;
    case 3: k_axpy(&k, s, x, y, 3, N); break;
    case 4: k_stamp(&k, s, x, N); break;
    case 5: k_mix(&k, s, y, 5, N); break;
    case 6: k_axpy(&k, s, y, x, 2, N); break;
    default: k_reduce(&k, s, r, y, N); break;
    }
}

/* The first n of the loop's 8 launches, from its start (k_add), then the step's read-back. */
static void cut_body(CUstream s, CUdeviceptr x, CUdeviceptr y, CUdeviceptr r, int n, const char *what, int i) {
    for (int j = 0; j < n; j++) body_kernel(s, x, y, r, j);
    if (n < 8) k_reduce(&k, s, r, x, N);
    prog_print_reduce(s, r, what, i);
}

/* The loop's first n kernels, then the host reads x back: a flush point inside the loop's path. */
static void read_after(CUstream s, CUdeviceptr x, CUdeviceptr y, CUdeviceptr r, int n, int i) {
    uint32_t h[4];
    for (int j = 0; j < n; j++) body_kernel(s, x, y, r, j);
    CK(drv.cuStreamSynchronize(s));
    CK(drv.cuMemcpyDtoH(h, x, sizeof h));
    printf("prefix %d of %d: x %08x\n", i, n, h[0]);
}

static void prefixes(int steps, int six) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    int it = 0;
    for (int i = 0; i < steps; i++) cut_body(s, x, y, r, 8, "loop", it++);
    for (int i = 0; i < (six ? 6 : 4); i++) {
        read_after(s, x, y, r, six || i < 2 ? 2 : 5, i);
        for (int j = 0; j < 3; j++) cut_body(s, x, y, r, 8, "between", it++);
    }
    for (int i = 0; i < steps; i++) cut_body(s, x, y, r, 8, "again", it++);
    prog_finish(s, x, y, N);
}

static void unsteady(int steps) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r, z = prog_alloc(N);
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    k_fill(&k, s, z, 4, N);
    for (int it = 0; it < steps; it++) cut_body(s, x, y, r, 8, "loop", it);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (int j = 0; j < 60; j++) { /* from the loop's start, elsewhere: a new salt every time */
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        k_add(&k, s, y, x, N);
        k_mix(&k, s, z, (uint32_t)(rng >> 33), N);
        k_reduce(&k, s, r, z, N);
        prog_print_reduce(s, r, "other", j);
        if (j % 20 == 19) cut_body(s, x, y, r, 5, "cut", j); /* three times, never again */
    }
    for (int it = 0; it < steps; it++) cut_body(s, x, y, r, 8, "again", it);
    prog_finish(s, x, y, N);
}

/* A request: the first kernel, then path `path`'s five kernels (one of 2^5), then the read-back. */
static void request(CUstream s, CUdeviceptr x, CUdeviceptr y, CUdeviceptr r, uint32_t path, int it) {
    k_add(&k, s, y, x, N);
    for (uint32_t b = 0; b < 5; b++) {
        if (path >> b & 1u)
            k_mix(&k, s, x, 3 + b, N);
        else
            k_stamp(&k, s, x, N);
    }
    k_axpy(&k, s, y, x, 2, N);
    k_reduce(&k, s, r, y, N);
    prog_print_reduce(s, r, "request", it);
}

static void comeback(int rounds) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    int it = 0;
    for (int i = 0; i < 3; i++) request(s, x, y, r, 0, it++); /* path 0 captured */
    uint32_t fresh = 1;
    for (int c = 0; c < rounds && fresh + 4 <= 32; c++) {
        for (int i = 0; i < 4; i++) request(s, x, y, r, fresh++, it++);      /* new paths: holds fail */
        for (int i = 0; i < (8 << c) + 7; i++) request(s, x, y, r, 0, it++); /* path 0 again */
    }
    prog_finish(s, x, y, N);
}

static void buckets(int steps) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    uint64_t rng = 42;
    for (int it = 0; it < steps; it++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        request(s, x, y, r, (uint32_t)(rng >> 33) % 32u, it);
    }
    prog_finish(s, x, y, N);
}

static void copies(int steps) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    uint32_t *in, *out;
    CK(drv.cuMemHostAlloc((void **)&in, N * sizeof *in, 0));
    CK(drv.cuMemHostAlloc((void **)&out, N * sizeof *out, 0));
    for (int it = 0; it < steps; it++) {
        for (uint32_t i = 0; i < N; i++) in[i] = (uint32_t)it * 2654435761u + i;
        CK(drv.cuMemcpyHtoDAsync(x, in, N * sizeof *in, s));
        k_axpy(&k, s, y, x, 3, N);
        CK(drv.cuMemcpyDtoHAsync(out, y, N * sizeof *out, s));
        CK(drv.cuStreamSynchronize(s));
        printf("request %3d answer %016llx\n", it, (unsigned long long)prog_hash_buf(PROG_HASH_INIT, out, N));
    }
    CK(drv.cuMemFreeHost(in));
    CK(drv.cuMemFreeHost(out));
    prog_finish(s, x, y, N);
}

/* stall (stretch 0) and slowstretch (1): a step of 32 kernels and the result read back, the host
 * stalling as the mode says. */
static void stalls(int steps, int stretch) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    uint64_t rng = 7;
    for (int it = 0; it < steps; it++) {
        for (uint32_t j = 0; j < 32; j++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            if (stretch && it >= 10 && it < 50 && (rng >> 33) % 8 == 0) usleep(3000); /* stalls here and there */
            if (!stretch && j == 16 && (it == 12 || it == 13)) usleep(20000);
            if (j % 4 == 0)
                k_add(&k, s, y, x, N);
            else
                k_mix(&k, s, x, j, N);
        }
        k_reduce(&k, s, r, y, N);
        prog_print_reduce(s, r, "step", it);
    }
    prog_finish(s, x, y, N);
}

static void pauses(int steps) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    for (int it = 0; it < steps; it++) {
        for (uint32_t j = 0; j < 48; j++) {
            if (j == 13 || j == 37) usleep(2000);
            if (j % 4 == 0)
                k_add(&k, s, y, x, N);
            else
                k_mix(&k, s, x, j + 100 * (uint32_t)it, N); /* every step's arguments are new */
        }
        k_reduce(&k, s, r, y, N);
        prog_print_reduce(s, r, "step", it);
    }
    prog_finish(s, x, y, N);
}

static void tail(int steps, int grows) { /* 1: from step 20 on; 2: in step 20 only */
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    for (int it = 0; it < steps; it++) {
        for (uint32_t j = 0; j < 6; j++) {
            if (j % 3 == 0)
                k_add(&k, s, y, x, N);
            else
                k_mix(&k, s, x, j, N);
        }
        k_reduce(&k, s, r, y, N);
        if ((grows == 1 && it >= 20) || (grows == 2 && it == 20))
            for (uint32_t j = 0; j < 3; j++) k_mix(&k, s, x, 7 + j, N);
        usleep(500);
        prog_print_reduce(s, r, "step", it);
    }
    prog_finish(s, x, y, N);
}

static void cg(int steps, int alloc) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, rs[4];
    prog_hot_buffers(&k, s, N, &x, &y, &rs[0]);
    rs[1] = rs[2] = rs[3] = rs[0];
    uint32_t rot = alloc ? 4 : 1; /* iterations before the temporaries come round again */
    for (int it = 0; it < steps; it++) {
        if (it == 0)
            for (uint32_t j = 0; j < 3; j++) k_mix(&k, s, y, 200 + j, N); /* the one-off analysis */
        if (alloc)
            for (uint32_t j = 0; j < 3; j++) k_mix(&k, s, x, 300 + j, N); /* x = 0, r = b, the first dot */
        for (uint32_t i = 0; i < 20; i++) {
            if (alloc && it == 0 && i == 8) { /* the first solve's temporaries */
                for (int b = 1; b < 4; b++) rs[b] = prog_alloc(4);
                CUdeviceptr scratch = prog_alloc(N);
                CK(drv.cuMemFree(scratch)); /* a call that flushes everything */
            }
            CUdeviceptr r = rs[i % rot];
            uint32_t salt = 100 * (i % rot);
            for (uint32_t j = 0; j < 17; j++) {
                if (j == 0)
                    CK(drv.cuMemsetD32Async(r, 0, 1, s));
                else if (j % 5 == 1)
                    k_axpy(&k, s, y, x, j, N);
                else if (j % 5 == 3)
                    k_add(&k, s, x, y, N);
                else if (j == 16)
                    k_reduce(&k, s, r, y, N);
                else
                    k_mix(&k, s, y, j + salt, N);
            }
        }
        prog_print_reduce(s, rs[19 % rot], "step", it);
    }
    prog_finish(s, x, y, N);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "opbyop";
    int steps = argc > 2 ? atoi(argv[2]) : 40;
    prog_init();
    prog_kernels_load(&k, 0);
    if (!strcmp(mode, "opbyop") || !strcmp(mode, "opbyop-events"))
        opbyop(steps, !strcmp(mode, "opbyop-events"));
    else if (!strcmp(mode, "pairs"))
        pairs(steps);
    else if (!strcmp(mode, "twice"))
        twice(steps);
    else if (!strcmp(mode, "comeback"))
        comeback(steps);
    else if (!strcmp(mode, "buckets"))
        buckets(steps);
    else if (!strcmp(mode, "unsteady"))
        unsteady(steps);
    else if (!strcmp(mode, "prefixes") || !strcmp(mode, "prefixes-six"))
        prefixes(steps, !strcmp(mode, "prefixes-six"));
    else if (!strcmp(mode, "copies"))
        copies(steps);
    else if (!strcmp(mode, "pauses"))
        pauses(steps);
    else if (!strcmp(mode, "tail"))
        tail(steps, argc > 3 ? atoi(argv[3]) : 0);
    else if (!strcmp(mode, "slowstretch"))
        stalls(steps, 1);
    else if (!strcmp(mode, "stall"))
        stalls(steps, 0);
    else if (!strcmp(mode, "cg") || !strcmp(mode, "cgalloc"))
        cg(steps, !strcmp(mode, "cgalloc"));
    else if (!strcmp(mode, "owngraphs"))
        owngraphs(steps, argc > 3 ? atoi(argv[3]) : 1);
    else {
        fprintf(stderr, "prog_worth: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
