/* Randomized differential test: random CUDA programs from a seed, race-free
 * by construction, so their output is deterministic without encore and any
 * difference with encore is an encore bug.
 *
 *   prog_fuzz --seeds A-B [--min-threads T] [--max-threads T] [--seeds-env VAR[/DIV]]
 *             [--verbose] [--max-ops K] [--drop I,J,...] [--count-ops] [--ops=extended] [--faults]
 *             [--memory] [--ops=errors] [--devices=N]
 *             [--graph-events] [--forks]
 *
 * For every seed S in A..B, one after the other in this process, it generates
 * a program, runs it and prints
 *     seed S digest <16 hex digits>
 * a hash of every value the host observed and of the final device memory.
 *   --verbose      print the generated program first, as a listing with operation numbers
 *   --max-ops K    run only operations numbered below K (each thread runs a prefix of its
 *                  operations: still race-free)
 *   --drop I,J     skip these operations (only accesses may be dropped: launches, copies,
 *                  memsets; removing an access cannot create a race)
 *   --count-ops    print "ops N droppable I,J,..." for the first seed and run nothing
 *   --seeds-env VAR[/DIV]  if the environment has VAR=C, run C/DIV seeds from A instead
 *   --ops=extended also generate the operations of issue 10 (see "Extended
 *                  operations" below); without it the programs are exactly
 *                  those of earlier versions (a seed's program never changes)
 *   --faults       with --ops=extended: one single-thread program in ten ends
 *                  with a sticky fault (below)
 *   --memory       host memory that stops being page-locked and stream-ordered
 *                  frees (issue 26; see "Memory" below): the plans are the
 *                  seed's usual ones, only how some operations run changes
 *   --graph-events with --ops=extended: the program's own graphs with event
 *                  nodes (issue 26, below); without it a seed's program is
 *                  the same as before the flag existed
 *   --forks        (issue 26) every thread also forks once or twice while the
 *                  other threads hold work; the child calls cuStreamSynchronize
 *                  on a stream of the thread, launches there, calls
 *                  cuCtxSynchronize and exits; the parent hashes how it ended
 *                  (a child that hangs is ended by a 300 ms timer). The
 *                  positions come from a source of their own: the other
 *                  operations are the seed's usual ones (its digest differs
 *                  only by the fork operations' own hashing)
 *   --devices=N    spread the streams over N devices (the simulator's
 *                  SIMCUDA_DEVICES; see "Several devices" below); with N = 1
 *                  (the default) the programs are exactly those without it
 *   --ops=errors   also generate loops with operations the driver refuses
 *                  (see "Refused operations" below); without it the programs
 *                  are exactly those of earlier versions
 * run_diff.py --fuzz --shrink uses --max-ops and --drop to shrink a failing seed.
 *
 * What a program is made of:
 *   1-3 host threads (each owns its streams and buffers; threads share nothing
 *   but the device), 2-4 streams: blocking, non-blocking, the legacy default
 *   stream (at most one, with handle 0 or CU_STREAM_LEGACY), a thread's
 *   per-thread default stream (handle CU_STREAM_PER_THREAD, or handle 0 with
 *   the _ptsz entry points).
 *   Buffers: each is owned by one stream at a time; only its owner touches it.
 *   Ownership moves with an event recorded on the old owner and waited for on
 *   the new one.
 *   Bodies: fixed launch sequences of a stream (same kernels, configurations
 *   and arguments every time), issued again and again, mostly followed by a
 *   copy back and a synchronisation: what encore captures and replays. Other
 *   launches have random arguments.
 *   Also: async and blocking copies, async and blocking memsets, events
 *   between streams, stream/event/context synchronisation and polling, host
 *   reads (a copy to the host is hashed once the host has synchronised with
 *   it), cuMemFree + cuMemAlloc of a buffer.
 *   Blocking (legacy-stream) operations on a buffer are generated only where
 *   they are ordered with its owner: the owner is the legacy stream, a
 *   blocking stream, or has nothing pending.
 *
 * Extended operations (--ops=extended):
 *   Program captures: the thread captures a graph on one of its streams (not
 *   the legacy one) in global (single-thread programs only: other threads'
 *   synchronisation would invalidate it), thread-local or relaxed mode,
 *   forking its own side stream in with an event and joining it back: some
 *   launches on the capturing stream, some on the side stream (on a buffer of
 *   their own), some after the join; then it instantiates the graph,
 *   launches it 1-3 times on the stream, and destroys it. All buffers touched
 *   are owned by the capturing stream. In programs with several threads the
 *   capturing stream is non-blocking (legacy-stream work of another thread
 *   would be an implicit dependency on a capturing blocking stream).
 *   Attribute changes: cuFuncSetAttribute of a kernel's maximum dynamic
 *   shared memory (never below what any launch asks) or shared-memory
 *   carveout.
 *   Module unload and reload: each thread then launches from its own copy of
 *   the kernels' module; the thread unloads it and loads libprogkernels.so or
 *   libprogkernels_alt.so (other arithmetic) in its place.
 *   Sticky faults (--faults; single-thread programs, one seed in ten): the program ends
 *   with one: the context is synchronised, a kernel faults on a stream, the
 *   stream is synchronised (its error is hashed), one of the stream's bodies
 *   is launched again (every launch's return code is hashed: the sticky
 *   error) and the stream synchronised again; then the primary context is
 *   reset and the next seed starts over.
 *   Program graphs with event nodes (--graph-events, issue 26): in four
 *   loops of a body in five, after each body instance on stream s (before its
 *   copy back and synchronisation), buffer b (the body's first destination)
 *   moves to another stream s2 of the thread through a graph the program
 *   builds (cuGraphAddKernelNode, cuGraphAddEvent{Wait,Record}Node),
 *   instantiates, launches once and destroys: either s records the thread's
 *   graph event and a graph launched on s2 waits for it (a wait node), then
 *   runs 1-2 kernels on b; or a graph launched on s runs the kernels on b,
 *   then records the event (a record node), and s2 waits for it (one way for
 *   the whole loop). Once the loop's sequence is learnt, encore holds s's
 *   record with the body; the graph's nodes are resolved at its launch. The
 *   thread's graph event is made once for the process (events destroyed with
 *   every seed soon stop encore holding records: core/graphs/nodes.c). These draws
 *   come from the seed's usual source: with the flag, the rest of a program
 *   changes too.
 *
 * Memory (--memory, issue 26; one device): every thread has a page of host
 * memory of its own (a slab). Before each program every thread's slab is
 * registered (cuMemHostRegister), in one program in two unregistered again,
 * and the primary context is reset (which ends a registration left): every
 * program runs with the slabs pageable, at addresses that were page-locked.
 * Of the async host-to-device copies from pageable memory (picked by a hash
 * of the seed and the operation's number, not by the plan's random source),
 * half go through the thread's slab and a quarter through a buffer
 * allocated for the copy (the size of a device buffer), which the host
 * overwrites right after the call (legal for pageable memory: the driver
 * staged it; the buffer is then freed); half of the cuMemFree + cuMemAlloc
 * of a buffer are cuMemFreeAsync + cuMemAllocAsync on the buffer's stream
 * instead. (The simulator's device memory is host memory: malloc may hand
 * out an address that a stream-ordered free gave back, which a stale device
 * range would call device memory.) The plan, its listing and
 * --drop are unchanged; the digests are not those of a run without it.
 *
 * Several devices (--devices=N, issue 15; not with --ops=extended): each
 * stream belongs to one device (drawn from a random source of its own, so
 * the operations are a seed's usual ones), its buffers are allocated there,
 * and every device's primary context has the kernels loaded and peer access
 * to every other device. Before each operation on a stream the thread makes
 * that stream's device current (a device switch between most operations);
 * blocking copies and memsets then run on that device's legacy stream, which
 * orders only with the blocking streams of the same device: the generator
 * counts them as waited for only there. Events are created per device and
 * recorded on a stream of their own device; a stream waits for an event of
 * any device. Ownership of a buffer moves between devices like between
 * streams (kernels read and write peer memory). A context synchronisation
 * synchronises every device. cuMemFree + cuMemAlloc only where the stream
 * is on the buffer's device (cuMemFree waits for that device only).
 *
 * Refused operations (--ops=errors, issue 26): now and then (drawn from a
 * random source of its own, which nothing else reads, so every other
 * operation is the seed's usual one) a thread runs a loop on one of its
 * streams and a buffer that stream owns (not mapped, no blocking memset
 * pending): 6-10 times mix, OP, stamp, then a synchronisation of the stream.
 * OP is a cuMemsetD32Async (or cuMemsetD16Async) of the buffer to a value
 * new each time, or, with several devices, a cuEventRecord of the thread's
 * own event of the stream's device; once, from the fifth time on, OP is one
 * the driver refuses: the memset 2 (1) bytes into the buffer
 * (CUDA_ERROR_INVALID_VALUE), the record of the thread's event of another
 * device (CUDA_ERROR_INVALID_HANDLE). Every OP's and the synchronisation's
 * return code is hashed. The stream synchronises at the end, so nothing else
 * the generator tracks changes. */
#include "prog.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---------------------------------------------------------------- random */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rnd(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint32_t below(rng *r, uint32_t n)
{
    return n ? (uint32_t)(rnd(r) % n) : 0;
}

static int chance(rng *r, unsigned percent)
{
    return below(r, 100) < percent;
}

/* ---------------------------------------------------------------- the program */

#define MAX_THREADS 3
#define MAX_STREAMS 4
#define MAX_BUFS 12
#define MAX_BODIES 8
#define MAX_BODY_LEN 8
#define MAX_DEVICES 4

static int ndevices = 1; /* --devices */
static int memory_ops;    /* --memory */
#define SLAB_BYTES 8192   /* a slab: the largest copy (1024 words), page-aligned */
static uint32_t *slab[MAX_THREADS]; /* per thread */

static int errors_ops;    /* --ops=errors */
static int graph_events;  /* --graph-events (with --ops=extended) */
/* --graph-events: each thread's event for its graphs' event nodes, made once for the process: an event
 * destroyed with every seed would soon stop encore holding records and waits (core/graphs/nodes.c, "churn") */
static CUevent evg[MAX_THREADS];
static int forks_on;      /* --forks */

enum skind { SK_BLOCKING, SK_NON_BLOCKING, SK_LEGACY, SK_PER_THREAD, SK_PTSZ };
static const char *const skind_name[] = {"blocking", "non-blocking", "legacy default", "per-thread default",
                                         "per-thread default"};

typedef struct fstream {
    enum skind kind;
    int thread;
    int null_handle; /* legacy: handle 0 instead of CU_STREAM_LEGACY */
    int dev;         /* --devices: its device (0 otherwise) */
    CUstream h;
} fstream;

typedef struct fbuf {
    uint32_t words;
    int home;
    int mapped;      /* page-locked host memory mapped into the device (cuMemHostAlloc DEVICEMAP) */
    CUdeviceptr d;
    uint32_t *host;  /* mapped: the host's view */
} fbuf;

enum kid { K_FILL, K_MIX, K_ADD, K_AXPY, K_COPY, K_STAMP, K_PACKED, K_REDUCE, K_NOP, K_COUNT };
static const char *const kname[] = {"fill", "mix", "add", "axpy", "copy", "stamp", "packed", "reduce", "nop"};

enum lform { LF_PARAMS, LF_EX, LF_EXTRA };

typedef struct flaunch {
    enum kid k;
    enum lform form;
    int dst, src;     /* buffer indices (-1: none) */
    uint32_t a, n;    /* scalar (value, salt, factor) and element count */
    uint64_t b;       /* packed: the 64-bit argument */
    unsigned grid, block, shmem;
    int nattrs, prio; /* LF_EX: 0-2 attributes (priority, ignore); one attribute of
                       * priority 0 is programmatic stream serialization instead
                       * (llama.cpp's form: captured, a programmatic edge) */
} flaunch;

static int launch_programmatic(const flaunch *l)
{
    return l->form == LF_EX && l->nattrs == 1 && l->prio == 0;
}

enum opk {
    OP_LAUNCH,
    OP_H2D_ASYNC,
    OP_D2H_ASYNC,
    OP_D2D_ASYNC,
    OP_MEMSET_ASYNC,
    OP_D2H_SYNC,
    OP_H2D_SYNC,
    OP_MEMSET_SYNC,
    OP_TRANSFER,
    OP_EVENT_DEP,
    OP_STREAM_SYNC,
    OP_STREAM_QUERY,
    OP_EVENT_SYNC,
    OP_EVENT_QUERY,
    OP_CTX_SYNC,
    OP_FREE_REALLOC,
    OP_MAPPED_READ,
    /* --ops=extended */
    OP_CAPTURE,
    OP_FUNC_ATTR,
    OP_MODULE_RELOAD,
    OP_FAULT,
    /* --ops=errors */
    OP_ERR_LOOP,
    OP_GRAPH_EVENTS, /* --graph-events */
    OP_FORK,
};

#define MAX_CAP_LEN 7

typedef struct fop {
    enum opk kind;
    int id;
    int stream, stream2; /* stream2: OP_TRANSFER/OP_EVENT_DEP destination */
    int buf, buf2;
    int body, body_pos;  /* OP_LAUNCH from a body: which one (else -1) */
    flaunch l;
    uint32_t count, value;
    uint32_t *host;      /* H2D source / D2H destination (owned by the plan) */
    int pinned;          /* async copies: through page-locked host memory (truly asynchronous) */
    uint32_t *pin;       /* that memory, while the plan runs */
    /* OP_CAPTURE: launches ncap[0] on the stream, ncap[1] on the side stream,
     * ncap[2] on the stream after the join, in cap[]; mode; count = graph
     * launches. OP_FUNC_ATTR: l.k, value (count: which attribute).
     * OP_MODULE_RELOAD: value (1: the alt module). OP_FAULT: body (-1: none).
     * OP_ERR_LOOP: mode (0: memset D32, 1: memset D16, 2: record), ncap[0]
     * times, refused at ncap[1]; cap[0] and cap[1] the launches around OP,
     * count and value: the memset's words and first value.
     * OP_GRAPH_EVENTS: buf moves from stream to stream2; mode 1: a record
     * node (else a wait node); the graph's kernels ncap[0], in cap[]. */
    int mode;
    int ncap[3];
    flaunch cap[MAX_CAP_LEN];
} fop;

typedef struct fthread {
    fop *ops;
    int nops, cap;
} fthread;

typedef struct fbody {
    int stream;
    int len;
    flaunch l[MAX_BODY_LEN];
} fbody;

typedef struct plan {
    uint64_t seed;
    int extended;
    int nthreads, nstreams, nbufs, nbodies, total_ops;
    fstream st[MAX_STREAMS];
    fbuf b[MAX_BUFS];
    uint32_t *init[MAX_BUFS];
    fbody body[MAX_BODIES];
    fthread th[MAX_THREADS];
} plan;

static int droppable(enum opk k)
{
    switch (k) {
    case OP_LAUNCH:
    case OP_H2D_ASYNC:
    case OP_D2H_ASYNC:
    case OP_D2D_ASYNC:
    case OP_MEMSET_ASYNC:
    case OP_D2H_SYNC:
    case OP_H2D_SYNC:
    case OP_MEMSET_SYNC:
    case OP_MAPPED_READ:
    case OP_CAPTURE:
    case OP_FUNC_ATTR:
    case OP_ERR_LOOP:
        return 1;
    default:
        return 0;
    }
}

static uint32_t *host_words(uint32_t n)
{
    uint32_t *p = calloc(n ? n : 1, sizeof *p);
    if (!p)
        prog_die("out of memory");
    return p;
}

/* ---------------------------------------------------------------- generation */

typedef struct gen {
    rng r;
    plan *p;
    int owner[MAX_BUFS];
    int dirty[MAX_STREAMS];   /* work issued since the host last synchronised with the stream */
    int legacy_pending[MAX_BUFS]; /* a blocking memset (legacy stream) not yet waited for */
    int next_id;
    int extended;             /* --ops=extended */
    rng er;                   /* --ops=errors: its own random source */
    int nerr;                 /* --ops=errors: operations it added */
} gen;

static fop *push(gen *g, int t, enum opk kind)
{
    fthread *th = &g->p->th[t];
    if (th->nops == th->cap) {
        th->cap = th->cap ? th->cap * 2 : 64;
        th->ops = realloc(th->ops, (size_t)th->cap * sizeof *th->ops);
        if (!th->ops)
            prog_die("out of memory");
    }
    fop *op = &th->ops[th->nops++];
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->id = -1; /* numbered after generation, thread by thread */
    op->stream = op->stream2 = op->buf = op->buf2 = op->body = -1;
    return op;
}

/* Buffers of thread t's stream s that s owns now. */
static int owned_by(gen *g, int s, int *out)
{
    int n = 0;
    for (int b = 0; b < g->p->nbufs; b++)
        if (g->owner[b] == s)
            out[n++] = b;
    return n;
}

static void gen_launch(gen *g, flaunch *l, const int *bufs, int nb)
{
    rng *r = &g->r;
    static const enum kid pool[] = {K_FILL, K_MIX, K_MIX, K_ADD, K_ADD, K_AXPY, K_COPY, K_STAMP, K_STAMP,
                                    K_PACKED, K_REDUCE, K_NOP};
    memset(l, 0, sizeof *l);
    l->k = pool[below(r, sizeof pool / sizeof pool[0])];
    l->dst = bufs[below(r, (uint32_t)nb)];
    l->src = -1;
    uint32_t words = g->p->b[l->dst].words;
    if (l->k == K_ADD || l->k == K_AXPY || l->k == K_COPY || l->k == K_REDUCE) {
        l->src = bufs[below(r, (uint32_t)nb)];
        if (l->k == K_REDUCE && l->src == l->dst) {
            if (nb < 2)
                l->k = K_MIX, l->src = -1;
            else
                while (l->src == l->dst)
                    l->src = bufs[below(r, (uint32_t)nb)];
        }
        if (l->src >= 0 && g->p->b[l->src].words < words)
            words = g->p->b[l->src].words;
    }
    if (l->k == K_NOP)
        l->dst = -1;
    l->n = chance(r, 80) ? words : 1 + below(r, words);
    l->a = (uint32_t)rnd(r);
    l->b = rnd(r);
    static const unsigned blocks[] = {32, 64, 64, 128};
    l->block = blocks[below(r, 4)];
    unsigned need = (l->n + l->block - 1) / l->block;
    int c = (int)below(r, 10);
    l->grid = c < 7 ? need : c < 9 ? (need > 1 ? need / 2 : 1) : need + 1;
    if (l->k == K_REDUCE || l->k == K_NOP)
        l->grid = 1, l->block = 1;
    static const unsigned shm[] = {0, 0, 0, 0, 64, 1024};
    l->shmem = shm[below(r, 6)];
    c = (int)below(r, 10);
    l->form = c < 6 ? LF_PARAMS : c < 8 ? LF_EX : LF_EXTRA;
    if (l->k == K_NOP && l->form == LF_EXTRA)
        l->form = LF_PARAMS;
    if (l->form == LF_EX) {
        l->nattrs = (int)below(r, 3);
        l->prio = (int)below(r, 2);
    }
}

/* Moves buffer b to stream s (event recorded on the old owner, waited for on s). */
static void gen_transfer(gen *g, int t, int b, int s)
{
    fop *op = push(g, t, OP_TRANSFER);
    op->buf = b;
    op->stream = g->owner[b];
    op->stream2 = s;
    g->owner[b] = s;
    g->dirty[s] = 1;
}

/* The host waited for device dev's legacy stream (-1: every device's):
 * blocking memsets issued there are done. */
static void legacy_done(gen *g, int t, int dev)
{
    for (int b = 0; b < g->p->nbufs; b++)
        if (g->p->st[g->p->b[b].home].thread == t && (dev < 0 || g->legacy_pending[b] == dev + 1))
            g->legacy_pending[b] = 0;
}

static void gen_sync_stream(gen *g, int t, int s)
{
    static const enum opk kinds[] = {OP_STREAM_SYNC, OP_STREAM_SYNC, OP_STREAM_SYNC, OP_STREAM_QUERY, OP_EVENT_SYNC,
                                     OP_EVENT_QUERY};
    fop *op = push(g, t, kinds[below(&g->r, 6)]);
    op->stream = s;
    g->dirty[s] = 0;
    if (g->p->st[s].kind == SK_LEGACY)
        legacy_done(g, t, g->p->st[s].dev);
}

/* Host reads of the mapped buffers of stream s that the host may read now:
 * s has nothing pending and no blocking memset is outstanding. */
static void gen_mapped_reads(gen *g, int t, int s, unsigned percent)
{
    for (int b = 0; b < g->p->nbufs; b++)
        if (g->p->b[b].mapped && g->owner[b] == s && !g->dirty[s] && !g->legacy_pending[b] && chance(&g->r, percent)) {
            fop *op = push(g, t, OP_MAPPED_READ);
            op->stream = s;
            op->buf = b;
            op->count = g->p->b[b].words;
        }
}

/* Ordered with the legacy stream both ways: the legacy stream itself and
 * every stream that is not non-blocking (per-thread default streams too). */
static int implicitly_ordered(const fstream *st)
{
    return st->kind != SK_NON_BLOCKING;
}

static void gen_d2h_async(gen *g, int t, int s, int b)
{
    fop *op = push(g, t, OP_D2H_ASYNC);
    op->stream = s;
    op->buf = b;
    op->count = chance(&g->r, 70) ? g->p->b[b].words : 1 + below(&g->r, g->p->b[b].words);
    op->host = host_words(op->count);
    op->pinned = chance(&g->r, 50);
    g->dirty[s] = 1;
}

/* Buffer b moves from s to another stream of thread t through a program
 * graph with an event node (see "Program graphs with event nodes"). */
static void gen_graph_events(gen *g, int t, int s, int b, int mode)
{
    rng *r = &g->r;
    plan *p = g->p;
    int others[MAX_STREAMS], no = 0;
    for (int i = 0; i < p->nstreams; i++)
        if (p->st[i].thread == t && i != s)
            others[no++] = i;
    if (!no || b < 0 || g->owner[b] != s)
        return;
    fop *op = push(g, t, OP_GRAPH_EVENTS);
    op->stream = s;
    op->stream2 = others[below(r, (uint32_t)no)];
    op->buf = b;
    op->mode = mode;
    op->ncap[0] = 1 + (int)below(r, 2);
    for (int i = 0; i < op->ncap[0]; i++) {
        flaunch *l = &op->cap[i];
        memset(l, 0, sizeof *l);
        l->k = chance(r, 50) ? K_MIX : K_STAMP;
        l->dst = b;
        l->src = -1;
        l->n = p->b[b].words;
        l->a = (uint32_t)rnd(r);
        l->block = 64;
        l->grid = (l->n + 63) / 64;
    }
    g->owner[b] = op->stream2;
    g->dirty[s] = g->dirty[op->stream2] = 1;
}

/* One body instance on its stream: its buffers brought home first, then
 * (graph_mode >= 0: --graph-events) its first destination moved to another
 * stream through a program graph with an event node, then mostly a copy
 * back and a synchronisation (the flush point that ends the sequence, as at
 * the end of a training step). */
static void gen_body(gen *g, int t, const fbody *bd, int graph_mode)
{
    plan *p = g->p;
    rng *r = &g->r;
    for (int i = 0; i < bd->len; i++) {
        int need[2] = {bd->l[i].dst, bd->l[i].src};
        for (int j = 0; j < 2; j++)
            if (need[j] >= 0 && g->owner[need[j]] != bd->stream)
                gen_transfer(g, t, need[j], bd->stream);
    }
    for (int i = 0; i < bd->len; i++) {
        fop *op = push(g, t, OP_LAUNCH);
        op->stream = bd->stream;
        op->l = bd->l[i];
        op->body = (int)(bd - p->body);
        op->body_pos = i;
    }
    g->dirty[bd->stream] = 1;
    if (graph_mode >= 0)
        gen_graph_events(g, t, bd->stream, bd->l[0].dst, graph_mode);
    if (chance(r, 80)) {
        int b = bd->l[0].dst >= 0 ? bd->l[0].dst : 0;
        if (g->owner[b] == bd->stream && chance(r, 70))
            gen_d2h_async(g, t, bd->stream, b);
        gen_sync_stream(g, t, bd->stream);
        gen_mapped_reads(g, t, bd->stream, 60);
    }
}

/* A program capture on stream s with a fork to the thread's side stream
 * (see "Extended operations"). */
static void gen_capture(gen *g, int t, int s, const int *bufs, int nb)
{
    rng *r = &g->r;
    plan *p = g->p;
    const fstream *st = &p->st[s];
    if (st->kind == SK_LEGACY || !nb || (p->nthreads > 1 && st->kind != SK_NON_BLOCKING))
        return;
    fop *op = push(g, t, OP_CAPTURE);
    op->stream = s;
    op->mode = p->nthreads == 1 ? (int)below(r, 3) : 1 + (int)below(r, 2);
    /* the side stream's launches get the last buffer alone (nop launches when there is one buffer) */
    int side = nb > 1 ? bufs[nb - 1] : -1, nmain = nb > 1 ? nb - 1 : nb;
    op->ncap[0] = 1 + (int)below(r, 3);
    op->ncap[1] = (int)below(r, 3);
    op->ncap[2] = 1 + (int)below(r, 2);
    int k = 0;
    for (int i = 0; i < op->ncap[0]; i++)
        gen_launch(g, &op->cap[k++], bufs, nmain);
    for (int i = 0; i < op->ncap[1]; i++) {
        if (side >= 0) {
            gen_launch(g, &op->cap[k], &side, 1);
        } else {
            memset(&op->cap[k], 0, sizeof op->cap[k]);
            op->cap[k].k = K_NOP;
            op->cap[k].dst = op->cap[k].src = -1;
            op->cap[k].grid = op->cap[k].block = 1;
        }
        k++;
    }
    for (int i = 0; i < op->ncap[2]; i++)
        gen_launch(g, &op->cap[k++], bufs, nb);
    op->count = 1 + below(r, 3);
    g->dirty[s] = 1;
}

/* One of the extended operations (may add nothing). */
static void gen_extended(gen *g, int t, int s, const int *bufs, int nb)
{
    rng *r = &g->r;
    unsigned c = below(r, 100);
    if (c < 60) {
        gen_capture(g, t, s, bufs, nb);
    } else if (c < 85) {
        fop *op = push(g, t, OP_FUNC_ATTR);
        op->l.k = (enum kid)below(r, K_COUNT);
        op->count = below(r, 2); /* 0: max dynamic shared memory, 1: carveout */
        static const uint32_t smem[] = {1024, 2048, 49152, 65536};
        op->value = op->count == 0 ? smem[below(r, 4)] : below(r, 101);
    } else {
        fop *op = push(g, t, OP_MODULE_RELOAD);
        op->value = below(r, 2);
    }
}

/* One random operation on one of the thread's streams (may add nothing). */
static void gen_step(gen *g, int t, const int *streams, int ns, const int *bodies, int nbodies)
{
    rng *r = &g->r;
    plan *p = g->p;
    int bufs[MAX_BUFS];
    int s = streams[below(r, (uint32_t)ns)];
    int nb = owned_by(g, s, bufs);
    if (g->extended && chance(r, 10)) {
        gen_extended(g, t, s, bufs, nb);
        return;
    }
    unsigned c = below(r, 100);
    if (c < 20 && nbodies) {
        gen_body(g, t, &p->body[bodies[below(r, (uint32_t)nbodies)]], -1);
    } else if (c < 40 && nb) {
        fop *op = push(g, t, OP_LAUNCH);
        op->stream = s;
        gen_launch(g, &op->l, bufs, nb);
        g->dirty[s] = 1;
    } else if (c < 48 && nb) {
        gen_d2h_async(g, t, s, bufs[below(r, (uint32_t)nb)]);
    } else if (c < 52 && nb) {
        fop *op = push(g, t, OP_H2D_ASYNC);
        op->stream = s;
        op->buf = bufs[below(r, (uint32_t)nb)];
        op->count = 1 + below(r, p->b[op->buf].words);
        op->host = host_words(op->count);
        op->pinned = chance(r, 50);
        for (uint32_t i = 0; i < op->count; i++)
            op->host[i] = (uint32_t)rnd(r);
        g->dirty[s] = 1;
    } else if (c < 56 && nb) {
        fop *op = push(g, t, OP_D2D_ASYNC);
        op->stream = s;
        op->buf = bufs[below(r, (uint32_t)nb)];
        op->buf2 = bufs[below(r, (uint32_t)nb)];
        uint32_t w = p->b[op->buf].words < p->b[op->buf2].words ? p->b[op->buf].words : p->b[op->buf2].words;
        op->count = op->buf == op->buf2 ? 0 : 1 + below(r, w);
        if (!op->count)
            op->kind = OP_MEMSET_ASYNC, op->count = p->b[op->buf].words, op->value = (uint32_t)rnd(r);
        g->dirty[s] = 1;
    } else if (c < 60 && nb) {
        fop *op = push(g, t, OP_MEMSET_ASYNC);
        op->stream = s;
        op->buf = bufs[below(r, (uint32_t)nb)];
        op->count = 1 + below(r, p->b[op->buf].words);
        op->value = (uint32_t)rnd(r);
        g->dirty[s] = 1;
    } else if (c < 66 && nb) {
        /* blocking copies and memsets run on the legacy stream */
        int b = bufs[below(r, (uint32_t)nb)];
        const fstream *st = &p->st[s];
        unsigned w = below(r, 3);
        if (w == 0 && (implicitly_ordered(st) || !g->dirty[s])) {
            fop *op = push(g, t, OP_D2H_SYNC);
            op->stream = s;
            op->buf = b;
            op->count = p->b[b].words;
            op->host = host_words(op->count);
            for (int i = 0; i < p->nstreams; i++)
                if (p->st[i].thread == t && implicitly_ordered(&p->st[i]) && p->st[i].dev == st->dev)
                    g->dirty[i] = 0;
            legacy_done(g, t, st->dev);
        } else if (w == 1 && (implicitly_ordered(st) || !g->dirty[s])) {
            fop *op = push(g, t, OP_H2D_SYNC);
            op->stream = s;
            op->buf = b;
            op->count = 1 + below(r, p->b[b].words);
            op->host = host_words(op->count);
            for (uint32_t i = 0; i < op->count; i++)
                op->host[i] = (uint32_t)rnd(r);
            for (int i = 0; i < p->nstreams; i++)
                if (p->st[i].thread == t && implicitly_ordered(&p->st[i]) && p->st[i].dev == st->dev)
                    g->dirty[i] = 0;
            legacy_done(g, t, st->dev);
        } else if (w == 2 && implicitly_ordered(st)) {
            fop *op = push(g, t, OP_MEMSET_SYNC);
            op->stream = s;
            op->buf = b;
            op->count = 1 + below(r, p->b[b].words);
            op->value = (uint32_t)rnd(r);
            g->dirty[s] = 1;
            g->legacy_pending[b] = st->dev + 1;
        }
    } else if (c < 76 && ns > 1) {
        int s2 = streams[below(r, (uint32_t)ns)];
        if (s2 == s)
            return;
        if (nb && chance(r, 70)) {
            gen_transfer(g, t, bufs[below(r, (uint32_t)nb)], s2);
        } else {
            fop *op = push(g, t, OP_EVENT_DEP);
            op->stream = s;
            op->stream2 = s2;
            op->value = g->extended && chance(r, 25); /* an event made for it and destroyed after the wait */
            g->dirty[s2] = 1;
        }
    } else if (c < 90) {
        gen_sync_stream(g, t, s);
        gen_mapped_reads(g, t, s, 50);
    } else if (c < 93 && g->extended && p->nthreads > 1) {
        /* cuCtxSynchronize fails while any stream of the context captures, in
         * every mode: with captures in other threads, synchronise a stream */
        gen_sync_stream(g, t, s);
    } else if (c < 93) {
        push(g, t, OP_CTX_SYNC);
        for (int i = 0; i < ns; i++)
            g->dirty[streams[i]] = 0;
        legacy_done(g, t, -1);
        gen_mapped_reads(g, t, s, 50);
    } else if (c < 97 && nb) {
        /* cuMemFree waits for the device: held work on the buffer must be issued first */
        int b = bufs[below(r, (uint32_t)nb)];
        if (p->b[b].mapped || p->st[p->b[b].home].dev != p->st[s].dev)
            return;
        if (chance(r, 30))
            gen_sync_stream(g, t, s);
        fop *op = push(g, t, OP_FREE_REALLOC);
        op->stream = s;
        op->buf = b;
        op->count = p->b[b].words;
        op->value = (uint32_t)rnd(r);
        g->dirty[s] = 1;
    }
}

/* --ops=errors: a loop with one refused operation on one of thread t's streams (may add nothing). */
static void gen_err_loop(gen *g, int t, const int *streams, int ns)
{
    rng *r = &g->er;
    plan *p = g->p;
    int s = streams[below(r, (uint32_t)ns)], bufs[MAX_BUFS], nb = 0;
    for (int b = 0; b < p->nbufs; b++)
        if (g->owner[b] == s && !p->b[b].mapped && !g->legacy_pending[b])
            bufs[nb++] = b;
    if (!nb)
        return;
    int b = bufs[below(r, (uint32_t)nb)];
    fop *op = push(g, t, OP_ERR_LOOP);
    g->nerr++;
    op->stream = s;
    op->buf = b;
    op->mode = (int)below(r, ndevices > 1 ? 3 : 2);
    op->ncap[0] = 6 + (int)below(r, 5);
    op->ncap[1] = 4 + (int)below(r, (uint32_t)op->ncap[0] - 4);
    op->count = 1 + below(r, p->b[b].words - 1); /* D16: twice as many halves, inside the buffer */
    op->value = (uint32_t)rnd(r);
    op->cap[0] = (flaunch){.k = K_MIX, .dst = b, .src = -1, .a = (uint32_t)rnd(r), .n = p->b[b].words,
                           .grid = (p->b[b].words + 127) / 128, .block = 128};
    op->cap[1] = (flaunch){.k = K_STAMP, .dst = b, .src = -1, .n = p->b[b].words,
                           .grid = (p->b[b].words + 127) / 128, .block = 128};
}

static void gen_thread(gen *g, int t, const int *streams, int ns)
{
    rng *r = &g->r;
    plan *p = g->p;
    int nops = 30 + (int)below(r, 120);
    int bodies[MAX_BODIES], nbodies = 0;
    for (int i = 0; i < p->nbodies; i++)
        if (p->st[p->body[i].stream].thread == t)
            bodies[nbodies++] = i;
    while (p->th[t].nops - g->nerr < nops) {
        if (errors_ops && chance(&g->er, 4))
            gen_err_loop(g, t, streams, ns);
        if (nbodies && chance(r, 30)) {
            /* a loop: the same body several times, sometimes with other work between */
            const fbody *bd = &p->body[bodies[below(r, (uint32_t)nbodies)]];
            int reps = 3 + (int)below(r, 7);
            /* --graph-events: one loop in two moves a buffer through a program graph, the same way each time */
            int graph_mode = graph_events && chance(r, 80) ? (int)below(r, 2) : -1;
            for (int i = 0; i < reps; i++) {
                gen_body(g, t, bd, graph_mode);
                if (chance(r, 25))
                    gen_step(g, t, streams, ns, bodies, nbodies);
            }
        } else {
            gen_step(g, t, streams, ns, bodies, nbodies);
        }
    }
}

static void plan_free(plan *p)
{
    for (int t = 0; t < p->nthreads; t++) {
        for (int i = 0; i < p->th[t].nops; i++)
            free(p->th[t].ops[i].host);
        free(p->th[t].ops);
    }
    for (int b = 0; b < p->nbufs; b++)
        free(p->init[b]);
    memset(p, 0, sizeof *p);
}

/* --forks: each thread forks once or twice, before operations drawn from a source of their own (the
 * other operations are the seed's usual ones), while the other threads hold work. */
static void insert_forks(plan *p, uint64_t seed)
{
    for (int t = 0; t < p->nthreads; t++) {
        fthread *th = &p->th[t];
        rng fr = {seed * 0x2545f4914f6cdd1dULL + 0x666f726bULL + (uint64_t)t};
        for (int k = 1 + (int)below(&fr, 2); k > 0 && th->nops > 0; k--) {
            int at = (int)below(&fr, (uint32_t)th->nops);
            if (th->nops == th->cap) {
                th->cap *= 2;
                th->ops = realloc(th->ops, (size_t)th->cap * sizeof *th->ops);
                if (!th->ops)
                    prog_die("out of memory");
            }
            memmove(&th->ops[at + 1], &th->ops[at], (size_t)(th->nops - at) * sizeof *th->ops);
            th->nops++;
            fop *op = &th->ops[at];
            int s = th->ops[at + 1].stream; /* the next operation's stream (maybe none) */
            memset(op, 0, sizeof *op);
            op->kind = OP_FORK;
            op->id = -1;
            op->stream = -1, op->stream2 = op->buf = op->buf2 = op->body = -1;
            op->value = s >= 0 ? (uint32_t)s + 1 : 0;
        }
    }
}

static void plan_generate(plan *p, uint64_t seed, int min_threads, int max_threads, int extended, int faults)
{
    memset(p, 0, sizeof *p);
    gen g;
    memset(&g, 0, sizeof g);
    g.p = p;
    g.extended = extended;
    p->extended = extended;
    g.r.s = seed * 0x2545f4914f6cdd1dULL + 0x1234567ULL;
    g.er.s = seed * 0x9e3779b97f4a7c15ULL + 0xe7705ULL;
    rng *r = &g.r;
    p->seed = seed;
    p->nthreads = min_threads + (int)below(r, (uint32_t)(max_threads - min_threads + 1));
    p->nstreams = 2 + (int)below(r, 3);
    if (p->nstreams < p->nthreads)
        p->nstreams = p->nthreads;
    int have_legacy = 0, have_pt[MAX_THREADS] = {0};
    for (int i = 0; i < p->nstreams; i++) {
        fstream *st = &p->st[i];
        st->thread = i < p->nthreads ? i : (int)below(r, (uint32_t)p->nthreads);
        unsigned c = below(r, 100);
        if (c < 35)
            st->kind = SK_BLOCKING;
        else if (c < 70)
            st->kind = SK_NON_BLOCKING;
        else if (c < 85 && !have_legacy)
            st->kind = SK_LEGACY, have_legacy = 1, st->null_handle = chance(r, 50);
        else if (c >= 85 && !have_pt[st->thread])
            st->kind = chance(r, 50) ? SK_PTSZ : SK_PER_THREAD, have_pt[st->thread] = 1;
        else
            st->kind = SK_NON_BLOCKING;
    }
    if (ndevices > 1) { /* from a source of its own: the rest of the program is the seed's usual one */
        rng dr = {seed * 0x9e3779b97f4a7c15ULL + 0xde71cULL};
        for (int i = 0; i < p->nstreams; i++)
            p->st[i].dev = (int)below(&dr, (uint32_t)ndevices);
    }
    static const uint32_t sizes[] = {64, 128, 256, 1024};
    for (int s = 0; s < p->nstreams; s++) {
        int n = 1 + (int)below(r, 3);
        for (int i = 0; i < n && p->nbufs < MAX_BUFS; i++) {
            fbuf *b = &p->b[p->nbufs];
            b->words = sizes[below(r, 4)];
            b->home = s;
            b->mapped = chance(r, 25);
            p->init[p->nbufs] = host_words(b->words);
            for (uint32_t w = 0; w < b->words; w++)
                p->init[p->nbufs][w] = (uint32_t)rnd(r);
            g.owner[p->nbufs] = s;
            p->nbufs++;
        }
    }
    int bufs[MAX_BUFS];
    for (int s = 0; s < p->nstreams; s++) {
        int nb = owned_by(&g, s, bufs);
        int n = 1 + (int)below(r, 2);
        for (int i = 0; i < n && p->nbodies < MAX_BODIES; i++) {
            fbody *bd = &p->body[p->nbodies++];
            bd->stream = s;
            bd->len = 2 + (int)below(r, MAX_BODY_LEN - 1);
            for (int j = 0; j < bd->len; j++)
                gen_launch(&g, &bd->l[j], bufs, nb);
        }
    }
    for (int t = 0; t < p->nthreads; t++) {
        int streams[MAX_STREAMS], ns = 0;
        for (int s = 0; s < p->nstreams; s++)
            if (p->st[s].thread == t)
                streams[ns++] = s;
        g.nerr = 0;
        gen_thread(&g, t, streams, ns);
    }
    if (extended && faults && p->nthreads == 1 && chance(r, 10)) {
        /* the program ends with a sticky fault somewhere */
        fthread *th = &p->th[0];
        int at = (int)below(r, (uint32_t)th->nops);
        for (int i = at; i < th->nops; i++)
            free(th->ops[i].host);
        th->nops = at;
        int s = (int)below(r, (uint32_t)p->nstreams);
        fop *op = push(&g, 0, OP_FAULT);
        op->stream = s;
        /* one of s's bodies, launched after the fault: the driver refuses every launch, so which
         * buffers it names does not matter */
        for (int i = 0; i < p->nbodies; i++)
            if (p->body[i].stream == s)
                op->body = i;
    }
    if (forks_on)
        insert_forks(p, seed);
    int id = 0;
    for (int t = 0; t < p->nthreads; t++)
        for (int i = 0; i < p->th[t].nops; i++)
            p->th[t].ops[i].id = id++;
    p->total_ops = id;
}

/* ---------------------------------------------------------------- listing */

/* Operations left out by --max-ops and --drop. */
static int max_ops = -1;
static unsigned char *drop_set;
static int drop_n;

static int skipped(int id)
{
    if (max_ops >= 0 && id >= max_ops)
        return 1;
    return id < drop_n && drop_set[id];
}

static void print_launch(const plan *p, const flaunch *l)
{
    static const char *const form[] = {"cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchKernel/extra"};
    printf("%s %s<<<%u, %u, %u>>>(", form[l->form], kname[l->k], l->grid, l->block, l->shmem);
    (void)p;
    switch (l->k) {
    case K_FILL:
    case K_MIX:
        printf("b%d, 0x%08x, %u)", l->dst, l->a, l->n);
        break;
    case K_ADD:
    case K_COPY:
        printf("b%d, b%d, %u)", l->dst, l->src, l->n);
        break;
    case K_AXPY:
        printf("b%d, b%d, 0x%08x, %u)", l->dst, l->src, l->a, l->n);
        break;
    case K_STAMP:
        printf("b%d, %u)", l->dst, l->n);
        break;
    case K_PACKED:
        printf("(u8)%u, 0x%016llx, (u16)%u, b%d, %u)", l->a & 0xffu, (unsigned long long)l->b, l->a >> 16, l->dst,
               l->n);
        break;
    case K_REDUCE:
        printf("b%d, b%d, %u)", l->dst, l->src, l->n);
        break;
    default:
        printf(")");
        break;
    }
    if (launch_programmatic(l))
        printf(" attrs 1 (programmatic serialization)");
    else if (l->form == LF_EX)
        printf(" attrs %d (priority %d)", l->nattrs, l->prio);
}

static void print_plan(const plan *p)
{
    printf("seed %llu: %d thread%s, %d streams, %d buffers, %d bodies, %d operations\n",
           (unsigned long long)p->seed, p->nthreads, p->nthreads > 1 ? "s" : "", p->nstreams, p->nbufs, p->nbodies,
           p->total_ops);
    for (int s = 0; s < p->nstreams; s++) {
        const fstream *st = &p->st[s];
        const char *how = st->kind == SK_LEGACY      ? (st->null_handle ? ", handle 0" : ", CU_STREAM_LEGACY")
                          : st->kind == SK_PTSZ      ? ", handle 0 through the _ptsz entry points"
                          : st->kind == SK_PER_THREAD ? ", CU_STREAM_PER_THREAD"
                                                      : "";
        printf("  stream s%d: %s%s, thread %d", s, skind_name[st->kind], how, st->thread);
        if (ndevices > 1)
            printf(", device %d", st->dev);
        printf("\n");
    }
    for (int b = 0; b < p->nbufs; b++)
        printf("  buffer b%d: %u words, home s%d%s\n", b, p->b[b].words, p->b[b].home,
               p->b[b].mapped ? ", mapped host memory (cuMemHostAlloc DEVICEMAP)" : "");
    for (int i = 0; i < p->nbodies; i++) {
        printf("  body %d on s%d:\n", i, p->body[i].stream);
        for (int j = 0; j < p->body[i].len; j++) {
            printf("      ");
            print_launch(p, &p->body[i].l[j]);
            printf("\n");
        }
    }
    for (int t = 0; t < p->nthreads; t++) {
        printf("  thread %d:\n", t);
        int hidden = 0;
        for (int i = 0; i < p->th[t].nops; i++) {
            const fop *op = &p->th[t].ops[i];
            if (skipped(op->id)) {
                hidden++;
                continue;
            }
            printf("    #%-4d ", op->id);
            switch (op->kind) {
            case OP_LAUNCH:
                printf("s%d: ", op->stream);
                print_launch(p, &op->l);
                if (op->body >= 0)
                    printf("   [body %d.%d]", op->body, op->body_pos);
                break;
            case OP_H2D_ASYNC:
                printf("s%d: cuMemcpyHtoDAsync(b%d, %s host, %u words)", op->stream, op->buf,
                       op->pinned ? "pinned" : "pageable", op->count);
                break;
            case OP_D2H_ASYNC:
                printf("s%d: cuMemcpyDtoHAsync(%s host#%d, b%d, %u words)   (hashed at s%d's next sync)",
                       op->stream, op->pinned ? "pinned" : "pageable", op->id, op->buf, op->count, op->stream);
                break;
            case OP_D2D_ASYNC:
                printf("s%d: cuMemcpyDtoDAsync(b%d, b%d, %u words)", op->stream, op->buf, op->buf2, op->count);
                break;
            case OP_MEMSET_ASYNC:
                printf("s%d: cuMemsetD32Async(b%d, 0x%08x, %u)", op->stream, op->buf, op->value, op->count);
                break;
            case OP_D2H_SYNC:
                printf("cuMemcpyDtoH(host, b%d, %u words) -> hash   (b%d owned by s%d)", op->buf, op->count, op->buf,
                       op->stream);
                break;
            case OP_H2D_SYNC:
                printf("cuMemcpyHtoD(b%d, host, %u words)   (b%d owned by s%d)", op->buf, op->count, op->buf,
                       op->stream);
                break;
            case OP_MEMSET_SYNC:
                printf("cuMemsetD32(b%d, 0x%08x, %u)   (b%d owned by s%d)", op->buf, op->value, op->count, op->buf,
                       op->stream);
                break;
            case OP_TRANSFER:
                printf("cuEventRecord(ev, s%d); cuStreamWaitEvent(s%d, ev)   (b%d now owned by s%d)", op->stream,
                       op->stream2, op->buf, op->stream2);
                break;
            case OP_EVENT_DEP:
                printf("%scuEventRecord(ev, s%d); cuStreamWaitEvent(s%d, ev)%s", op->value ? "cuEventCreate(&ev); " : "",
                       op->stream, op->stream2, op->value ? "; cuEventDestroy(ev)" : "");
                break;
            case OP_STREAM_SYNC:
                printf("cuStreamSynchronize(s%d) -> hash s%d's copies", op->stream, op->stream);
                break;
            case OP_STREAM_QUERY:
                printf("while (cuStreamQuery(s%d) == CUDA_ERROR_NOT_READY) ; -> hash s%d's copies", op->stream,
                       op->stream);
                break;
            case OP_EVENT_SYNC:
                printf("cuEventRecord(ev, s%d); cuEventSynchronize(ev) -> hash s%d's copies", op->stream, op->stream);
                break;
            case OP_EVENT_QUERY:
                printf("cuEventRecord(ev, s%d); while (cuEventQuery(ev) == CUDA_ERROR_NOT_READY) ; -> hash",
                       op->stream);
                break;
            case OP_CTX_SYNC:
                printf("cuCtxSynchronize() -> hash this thread's copies");
                break;
            case OP_MAPPED_READ:
                printf("host reads b%d's mapped memory directly -> hash   (s%d idle)", op->buf, op->stream);
                break;
            case OP_FREE_REALLOC:
                printf("cuMemFree(b%d); cuMemAlloc(b%d, %u words); s%d: cuMemsetD32Async(b%d, 0x%08x)", op->buf,
                       op->buf, op->count, op->stream, op->buf, op->value);
                break;
            case OP_CAPTURE: {
                static const char *const mn[] = {"global", "thread-local", "relaxed"};
                printf("s%d: capture (%s): fork side stream by event;", op->stream, mn[op->mode]);
                for (int i = 0, k = 0; i < 3; i++)
                    for (int j = 0; j < op->ncap[i]; j++, k++) {
                        printf("\n            %s: ", i == 1 ? "side" : "s");
                        print_launch(p, &op->cap[k]);
                        if (i == 1 && j == op->ncap[1] - 1)
                            printf("\n            join side by event");
                    }
                printf("\n          end capture; instantiate; cuGraphLaunch x%u on s%d; destroy", op->count,
                       op->stream);
                break;
            }
            case OP_FUNC_ATTR:
                printf("cuFuncSetAttribute(%s, %s, %u)", kname[op->l.k],
                       op->count ? "PREFERRED_SHARED_MEMORY_CARVEOUT" : "MAX_DYNAMIC_SHARED_SIZE_BYTES", op->value);
                break;
            case OP_MODULE_RELOAD:
                printf("cuModuleUnload(this thread's kernels); cuModuleLoadData(%s)",
                       op->value ? "libprogkernels_alt.so" : "libprogkernels.so");
                break;
            case OP_ERR_LOOP:
                printf("s%d: %d times: ", op->stream, op->ncap[0]);
                print_launch(p, &op->cap[0]);
                if (op->mode == 2)
                    printf("; cuEventRecord(this thread's event of s%d's device) -> hash", op->stream);
                else
                    printf("; cuMemsetD%dAsync(b%d, 0x%08x + i, %u) -> hash", op->mode ? 16 : 32, op->buf, op->value,
                           op->mode ? 2 * op->count : op->count);
                printf("; ");
                print_launch(p, &op->cap[1]);
                printf("\n          the %d. time refused: %s; cuStreamSynchronize(s%d) -> hash", op->ncap[1] + 1,
                       op->mode == 2 ? "another device's event" : "the memset misaligned", op->stream);
                break;
            case OP_GRAPH_EVENTS:
                if (op->mode)
                    printf("graph [");
                else
                    printf("cuEventRecord(evg, s%d); graph [wait node evg -> ", op->stream);
                for (int i = 0; i < op->ncap[0]; i++) {
                    print_launch(p, &op->cap[i]);
                    printf(i + 1 < op->ncap[0] ? " -> " : "");
                }
                if (op->mode)
                    printf(" -> record node evg] launched on s%d; cuStreamWaitEvent(s%d, evg)", op->stream,
                           op->stream2);
                else
                    printf("] launched on s%d", op->stream2);
                printf("   (b%d now owned by s%d)", op->buf, op->stream2);
                break;
            case OP_FORK:
                printf("fork(); the child: cuStreamSynchronize(%s), a launch there, cuCtxSynchronize, _exit -> "
                       "hash whether it ended (300 ms)", op->value ? "its stream" : "0");
                break;
            case OP_FAULT:
                printf("cuCtxSynchronize; s%d: fault<<<1, 1>>>(CUDA_ERROR_ILLEGAL_ADDRESS); cuStreamSynchronize(s%d) "
                       "-> hash its error;", op->stream, op->stream);
                if (op->body >= 0)
                    printf(" body %d again -> hash each launch's error;", op->body);
                printf(" cuStreamSynchronize(s%d) -> hash; the program ends (primary context reset)", op->stream);
                break;
            }
            printf("\n");
        }
        if (hidden)
            printf("    (%d operations of this thread left out by --max-ops/--drop)\n", hidden);
    }
    fflush(stdout);
}

/* ---------------------------------------------------------------- execution */

static struct prog_drv drv_pt; /* per-thread default stream entry points (_ptsz) */
static prog_kernels K;
static CUfunction kfn[K_COUNT];
/* --devices: each device's primary context and kernels (device 0's are K's) */
static CUcontext dctx[MAX_DEVICES];
static prog_kernels KD[MAX_DEVICES];
static CUfunction kfnd[MAX_DEVICES][K_COUNT];

/* Make stream s's device current (several devices only). */
static void on_device_of(const plan *p, int s)
{
    if (ndevices > 1 && s >= 0)
        CK(drv.cuCtxSetCurrent(dctx[p->st[s].dev]));
}
static void on_device(int dev)
{
    if (ndevices > 1)
        CK(drv.cuCtxSetCurrent(dctx[dev]));
}

static void kernels_of(const prog_kernels *k, CUfunction *fn)
{
    fn[K_FILL] = k->fill;
    fn[K_MIX] = k->mix;
    fn[K_ADD] = k->add;
    fn[K_AXPY] = k->axpy;
    fn[K_COPY] = k->copy;
    fn[K_STAMP] = k->stamp;
    fn[K_PACKED] = k->packed;
    fn[K_REDUCE] = k->reduce;
    fn[K_NOP] = k->nop;
}

typedef struct pending {
    int id;
    uint32_t *host;
    uint32_t count;
} pending;

typedef struct tstate {
    plan *p;
    int t;
    uint64_t h;
    CUevent ev;
    CUevent evd[MAX_DEVICES]; /* --devices: an event per device (evd[0] is ev) */
    int dev;                  /* --devices: the device current for the operation running */
    /* --ops=extended: the thread's own kernels (module reloads), its side
     * stream and events for captures; faulted: the plan ended with a fault */
    prog_kernels k;
    CUfunction fn[K_COUNT + 1];
    CUstream side;
    CUevent evf, evj;
    CUevent everr[MAX_DEVICES]; /* --ops=errors: the thread's event per device, for OP_ERR_LOOP */
    int faulted;
    pending *pend[MAX_STREAMS];
    int npend[MAX_STREAMS], cap[MAX_STREAMS];
} tstate;

static const struct prog_drv *T(const plan *p, int s)
{
    return p->st[s].kind == SK_PTSZ ? &drv_pt : &drv;
}

static void add_pending(tstate *ts, int s, int id, uint32_t *host, uint32_t count)
{
    if (ts->npend[s] == ts->cap[s]) {
        ts->cap[s] = ts->cap[s] ? ts->cap[s] * 2 : 16;
        ts->pend[s] = realloc(ts->pend[s], (size_t)ts->cap[s] * sizeof(pending));
        if (!ts->pend[s])
            prog_die("out of memory");
    }
    ts->pend[s][ts->npend[s]++] = (pending){id, host, count};
}

/* The host has synchronised with stream s: its copies to the host are final. */
static void observe(tstate *ts, int s)
{
    for (int i = 0; i < ts->npend[s]; i++) {
        ts->h = prog_hash_u64(ts->h, (uint64_t)ts->pend[s][i].id);
        ts->h = prog_hash_buf(ts->h, ts->pend[s][i].host, ts->pend[s][i].count);
    }
    ts->npend[s] = 0;
}

/* $PROG_FUZZ_INJECT=1 (a self-test of run_diff.py's fuzz mode and shrinker,
 * set for one of the two runs only): stamp launches with 1024 bytes of shared
 * memory are skipped, a stand-in for an encore bug. */
static int inject_bug;

static CUresult do_launch_on(const tstate *ts, const struct prog_drv *d, CUstream h, const flaunch *l)
{
    const plan *p = ts->p;
    if (inject_bug && l->k == K_STAMP && l->shmem == 1024)
        return CUDA_SUCCESS;
    CUdeviceptr dst = l->dst >= 0 ? p->b[l->dst].d : 0, src = l->src >= 0 ? p->b[l->src].d : 0;
    uint32_t a = l->a, n = l->n;
    uint8_t pa = (uint8_t)(l->a & 0xffu);
    uint16_t pc = (uint16_t)(l->a >> 16);
    uint64_t pb = l->b;
    void *params[5];
    size_t sizes[5];
    int np = 0;
#define P(x) (params[np] = &(x), sizes[np] = sizeof(x), np++)
    switch (l->k) {
    case K_FILL:
    case K_MIX:
        P(dst), P(a), P(n);
        break;
    case K_ADD:
    case K_COPY:
    case K_REDUCE:
        P(dst), P(src), P(n);
        break;
    case K_AXPY:
        P(dst), P(src), P(a), P(n);
        break;
    case K_STAMP:
        P(dst), P(n);
        break;
    case K_PACKED:
        P(pa), P(pb), P(pc), P(dst), P(n);
        break;
    default:
        break;
    }
#undef P
    prog_count_launch();
    CUfunction f = ndevices > 1 ? kfnd[ts->dev][l->k] : ts->fn[l->k];
    if (l->form == LF_EX) {
        CUlaunchAttribute attrs[2];
        memset(attrs, 0, sizeof attrs);
        attrs[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
        attrs[0].value.priority = l->prio;
        if (launch_programmatic(l)) {
            attrs[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attrs[0].value.programmaticStreamSerializationAllowed = 1;
        }
        attrs[1].id = CU_LAUNCH_ATTRIBUTE_IGNORE;
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = l->grid;
        cfg.gridDimY = cfg.gridDimZ = 1;
        cfg.blockDimX = l->block;
        cfg.blockDimY = cfg.blockDimZ = 1;
        cfg.sharedMemBytes = l->shmem;
        cfg.hStream = h;
        cfg.attrs = l->nattrs ? attrs : NULL;
        cfg.numAttrs = (unsigned)l->nattrs;
        return d->cuLaunchKernelEx(&cfg, f, params, NULL);
    } else if (l->form == LF_EXTRA) {
        unsigned char buf[64];
        size_t off = 0;
        memset(buf, 0, sizeof buf);
        for (int i = 0; i < np; i++) {
            off = (off + sizes[i] - 1) / sizes[i] * sizes[i]; /* natural alignment */
            memcpy(buf + off, params[i], sizes[i]);
            off += sizes[i];
        }
        void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &off, CU_LAUNCH_PARAM_END};
        return d->cuLaunchKernel(f, l->grid, 1, 1, l->block, 1, 1, l->shmem, h, NULL, extra);
    }
    return d->cuLaunchKernel(f, l->grid, 1, 1, l->block, 1, 1, l->shmem, h, params, NULL);
}

static void do_launch(const tstate *ts, int s, const flaunch *l)
{
    CK(do_launch_on(ts, T(ts->p, s), ts->p->st[s].h, l));
}

static const CUstreamCaptureMode capture_modes[] = {CU_STREAM_CAPTURE_MODE_GLOBAL,
                                                     CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                                                     CU_STREAM_CAPTURE_MODE_RELAXED};

static void run_capture(tstate *ts, const fop *op)
{
    const plan *p = ts->p;
    const struct prog_drv *d = T(p, op->stream);
    CUstream h = p->st[op->stream].h;
    CK(d->cuStreamBeginCapture(h, capture_modes[op->mode]));
    CK(d->cuEventRecord(ts->evf, h));
    CK(drv.cuStreamWaitEvent(ts->side, ts->evf, 0));
    int k = 0;
    for (int i = 0; i < op->ncap[0]; i++)
        CK(do_launch_on(ts, d, h, &op->cap[k++]));
    for (int i = 0; i < op->ncap[1]; i++)
        CK(do_launch_on(ts, &drv, ts->side, &op->cap[k++]));
    CK(drv.cuEventRecord(ts->evj, ts->side));
    CK(d->cuStreamWaitEvent(h, ts->evj, 0));
    for (int i = 0; i < op->ncap[2]; i++)
        CK(do_launch_on(ts, d, h, &op->cap[k++]));
    CUgraph g;
    CK(d->cuStreamEndCapture(h, &g));
    CUgraphExec exec;
    CK(drv.cuGraphInstantiateWithFlags(&exec, g, 0));
    CK(drv.cuGraphDestroy(g));
    for (uint32_t i = 0; i < op->count; i++)
        CK(d->cuGraphLaunch(exec, h));
    CK(drv.cuGraphExecDestroy(exec));
}

/* A kernel node of the program's graph (mix or stamp on one buffer). */
static CUgraphNode graph_kernel(const tstate *ts, CUgraph g, CUgraphNode dep, const flaunch *l)
{
    CUdeviceptr dst = ts->p->b[l->dst].d;
    uint32_t a = l->a, n = l->n;
    void *mix[] = {&dst, &a, &n}, *stamp[] = {&dst, &n};
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = ts->fn[l->k];
    kp.gridDimX = l->grid;
    kp.blockDimX = l->block;
    kp.gridDimY = kp.gridDimZ = kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = l->k == K_MIX ? mix : stamp;
    CUgraphNode node;
    CK(drv.cuGraphAddKernelNode(&node, g, dep ? &dep : NULL, dep ? 1 : 0, &kp));
    return node;
}

/* OP_GRAPH_EVENTS: the graph is built and instantiated first (graph
 * construction observes no stream), then s records the event and the graph
 * waits for it on s2, or the graph records it on s and s2 waits for it. */
static void run_graph_events(tstate *ts, const fop *op)
{
    const plan *p = ts->p;
    int record = op->mode == 1, on = record ? op->stream : op->stream2;
    CUgraph g;
    CUgraphNode last = NULL;
    CK(drv.cuGraphCreate(&g, 0));
    if (!record)
        CK(drv.cuGraphAddEventWaitNode(&last, g, NULL, 0, evg[ts->t]));
    for (int i = 0; i < op->ncap[0]; i++)
        last = graph_kernel(ts, g, last, &op->cap[i]);
    if (record) {
        CUgraphNode rn;
        CK(drv.cuGraphAddEventRecordNode(&rn, g, &last, 1, evg[ts->t]));
    }
    CUgraphExec exec;
    CK(drv.cuGraphInstantiateWithFlags(&exec, g, 0));
    CK(drv.cuGraphDestroy(g));
    if (!record)
        CK(T(p, op->stream)->cuEventRecord(evg[ts->t], p->st[op->stream].h));
    CK(T(p, on)->cuGraphLaunch(exec, p->st[on].h));
    CK(drv.cuGraphExecDestroy(exec));
    if (record)
        CK(T(p, op->stream2)->cuStreamWaitEvent(p->st[op->stream2].h, evg[ts->t], 0));
}

static void run_fault(tstate *ts, const fop *op)
{
    const plan *p = ts->p;
    const struct prog_drv *d = T(p, op->stream);
    CUstream h = p->st[op->stream].h;
    CK(drv.cuCtxSynchronize());
    for (int i = 0; i < p->nstreams; i++)
        observe(ts, i);
    CUdeviceptr dst = p->b[0].d;
    uint32_t code = CUDA_ERROR_ILLEGAL_ADDRESS, n = 1;
    void *params[] = {&dst, &code, &n};
    prog_count_launch();
    CK(d->cuLaunchKernel(ts->fn[K_COUNT], 1, 1, 1, 1, 1, 1, 0, h, params, NULL));
    ts->h = prog_hash_u64(ts->h, (uint64_t)d->cuStreamSynchronize(h));
    if (op->body >= 0)
        for (int i = 0; i < p->body[op->body].len; i++)
            ts->h = prog_hash_u64(ts->h, (uint64_t)do_launch_on(ts, d, h, &p->body[op->body].l[i]));
    ts->h = prog_hash_u64(ts->h, (uint64_t)d->cuStreamSynchronize(h));
    ts->faulted = 1;
}

static void sync_stream_op(tstate *ts, const fop *op)
{
    const plan *p = ts->p;
    const struct prog_drv *d = T(p, op->stream);
    CUstream h = p->st[op->stream].h;
    CUresult r;
    switch (op->kind) {
    case OP_STREAM_SYNC:
        CK(d->cuStreamSynchronize(h));
        break;
    case OP_STREAM_QUERY:
        while ((r = d->cuStreamQuery(h)) == CUDA_ERROR_NOT_READY)
            sched_yield();
        CK(r);
        break;
    case OP_EVENT_SYNC:
        CK(d->cuEventRecord(ts->evd[ts->dev], h));
        CK(d->cuEventSynchronize(ts->evd[ts->dev]));
        break;
    default:
        CK(d->cuEventRecord(ts->evd[ts->dev], h));
        while ((r = d->cuEventQuery(ts->evd[ts->dev])) == CUDA_ERROR_NOT_READY)
            sched_yield();
        CK(r);
        break;
    }
    observe(ts, op->stream);
}

/* --memory: how the operation runs, 0-3 (3: as without it), from a hash, not from the plan's random source */
static int memory_way(const plan *p, int id)
{
    return memory_ops ? (int)((prog_hash_u64(p->seed ^ 0x3e3017ULL, (uint64_t)id) >> 7) % 4) : 3;
}

/* OP_ERR_LOOP: mix, OP, stamp, op->ncap[0] times; OP refused once. */
static void run_err_loop(tstate *ts, const fop *op)
{
    const plan *p = ts->p;
    int s = op->stream;
    const struct prog_drv *d = T(p, s);
    CUstream h = p->st[s].h;
    CUdeviceptr bd = p->b[op->buf].d;
    for (int i = 0; i < op->ncap[0]; i++) {
        int refused = i == op->ncap[1];
        CUresult r;
        do_launch(ts, s, &op->cap[0]);
        if (op->mode == 2)
            r = d->cuEventRecord(ts->everr[refused ? (ts->dev + 1) % ndevices : ts->dev], h);
        else if (op->mode == 1)
            r = d->cuMemsetD16Async(bd + (refused ? 1 : 0), (unsigned short)(op->value + (uint32_t)i), 2 * op->count, h);
        else
            r = d->cuMemsetD32Async(bd + (refused ? 2 : 0), op->value + (uint32_t)i, op->count, h);
        ts->h = prog_hash_u64(ts->h, (uint64_t)r);
        do_launch(ts, s, &op->cap[1]);
    }
    ts->h = prog_hash_u64(ts->h, (uint64_t)d->cuStreamSynchronize(h));
}

/* OP_FORK: the child of a process that used the driver can use none of it; its calls return at once,
 * whatever the parent's other threads held at the fork. A child that hangs is ended by its timer. */
static void run_fork(tstate *ts, const fop *op)
{
    plan *p = ts->p;
    CUstream h = op->value ? p->st[op->value - 1].h : 0;
    const struct prog_drv *d = op->value ? T(p, (int)op->value - 1) : &drv;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        prog_die("fork failed");
    if (pid == 0) {
        struct itimerval tm = {.it_value = {.tv_usec = 300000}};
        setitimer(ITIMER_REAL, &tm, NULL);
        d->cuStreamSynchronize(h);
        d->cuLaunchKernel(ts->fn[K_NOP], 1, 1, 1, 1, 1, 1, 0, h, NULL, NULL);
        drv.cuCtxSynchronize();
        _exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        prog_die("waitpid failed");
    ts->h = prog_hash_u64(ts->h, (uint64_t)op->id);
    ts->h = prog_hash_u64(ts->h, (uint64_t)(WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status)));
}

static void run_op(tstate *ts, const fop *op)
{
    plan *p = ts->p;
    int s = op->stream;
    const struct prog_drv *d = s >= 0 ? T(p, s) : &drv;
    CUstream h = s >= 0 ? p->st[s].h : 0;
    CUdeviceptr bd = op->buf >= 0 ? p->b[op->buf].d : 0;
    if (s >= 0) {
        on_device_of(p, s);
        ts->dev = p->st[s].dev;
    }
    switch (op->kind) {
    case OP_LAUNCH:
        do_launch(ts, s, &op->l);
        break;
    case OP_CAPTURE:
        run_capture(ts, op);
        break;
    case OP_FUNC_ATTR:
        CK(drv.cuFuncSetAttribute(ts->fn[op->l.k],
                                  op->count ? CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
                                            : CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  (int)op->value));
        break;
    case OP_MODULE_RELOAD:
        prog_kernels_unload(&ts->k);
        prog_kernels_load(&ts->k, (int)op->value);
        kernels_of(&ts->k, ts->fn);
        ts->fn[K_COUNT] = ts->k.fault;
        break;
    case OP_FAULT:
        run_fault(ts, op);
        break;
    case OP_ERR_LOOP:
        run_err_loop(ts, op);
        break;
    case OP_GRAPH_EVENTS:
        run_graph_events(ts, op);
        break;
    case OP_FORK:
        run_fork(ts, op);
        break;
    case OP_H2D_ASYNC:
        if (!op->pin && memory_way(p, op->id) < 3) { /* pageable, overwritten at once: the slab or a new buffer */
            size_t sz = ((size_t)p->b[op->buf].words * sizeof(uint32_t) + 255) & ~(size_t)255;
            uint32_t *src = memory_way(p, op->id) == 2 ? aligned_alloc(256, sz) : slab[ts->t];
            if (!src)
                prog_die("out of memory");
            memcpy(src, op->host, op->count * sizeof(uint32_t));
            CK(d->cuMemcpyHtoDAsync(bd, src, op->count * sizeof(uint32_t), h));
            memset(src, 0xa5, op->count * sizeof(uint32_t));
            if (src != slab[ts->t])
                free(src);
            break;
        }
        CK(d->cuMemcpyHtoDAsync(bd, op->pin ? op->pin : op->host, op->count * sizeof(uint32_t), h));
        break;
    case OP_D2H_ASYNC:
        CK(d->cuMemcpyDtoHAsync(op->pin ? op->pin : op->host, bd, op->count * sizeof(uint32_t), h));
        add_pending(ts, s, op->id, op->pin ? op->pin : op->host, op->count);
        break;
    case OP_D2D_ASYNC:
        CK(d->cuMemcpyDtoDAsync(bd, p->b[op->buf2].d, op->count * sizeof(uint32_t), h));
        break;
    case OP_MEMSET_ASYNC:
        CK(d->cuMemsetD32Async(bd, op->value, op->count, h));
        break;
    case OP_D2H_SYNC:
        CK(drv.cuMemcpyDtoH(op->host, bd, op->count * sizeof(uint32_t)));
        ts->h = prog_hash_u64(ts->h, (uint64_t)op->id);
        ts->h = prog_hash_buf(ts->h, op->host, op->count);
        /* the legacy stream waited for the blocking streams: their copies are final */
        for (int i = 0; i < p->nstreams; i++)
            if (p->st[i].thread == ts->t && implicitly_ordered(&p->st[i]) && p->st[i].dev == ts->dev)
                observe(ts, i);
        break;
    case OP_H2D_SYNC:
        CK(drv.cuMemcpyHtoD(bd, op->host, op->count * sizeof(uint32_t)));
        for (int i = 0; i < p->nstreams; i++)
            if (p->st[i].thread == ts->t && implicitly_ordered(&p->st[i]) && p->st[i].dev == ts->dev)
                observe(ts, i);
        break;
    case OP_MEMSET_SYNC:
        CK(drv.cuMemsetD32(bd, op->value, op->count));
        break;
    case OP_TRANSFER:
    case OP_EVENT_DEP: {
        CUevent ev = ts->evd[ts->dev];
        if (op->value) /* PyTorch's collectives' way: an event of its own, destroyed once waited for */
            CK(d->cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
        CK(d->cuEventRecord(ev, h));
        on_device_of(p, op->stream2); /* the waiting stream's device: a handle 0 names its own */
        CK(T(p, op->stream2)->cuStreamWaitEvent(p->st[op->stream2].h, ev, 0));
        if (op->value)
            CK(d->cuEventDestroy(ev));
        break;
    }
    case OP_STREAM_SYNC:
    case OP_STREAM_QUERY:
    case OP_EVENT_SYNC:
    case OP_EVENT_QUERY:
        sync_stream_op(ts, op);
        break;
    case OP_CTX_SYNC:
        for (int dv = 0; dv < ndevices; dv++) {
            on_device(dv);
            CK(drv.cuCtxSynchronize());
        }
        for (int i = 0; i < p->nstreams; i++)
            if (p->st[i].thread == ts->t)
                observe(ts, i);
        break;
    case OP_MAPPED_READ:
        ts->h = prog_hash_u64(ts->h, (uint64_t)op->id);
        ts->h = prog_hash_buf(ts->h, p->b[op->buf].host, op->count);
        break;
    case OP_FREE_REALLOC:
        if (memory_way(p, op->id) < 2) { /* stream-ordered, on the buffer's (owning) stream */
            CK(d->cuMemFreeAsync(bd, h));
            CK(d->cuMemAllocAsync(&p->b[op->buf].d, op->count * sizeof(uint32_t), h));
        } else {
            CK(drv.cuMemFree(bd));
            CK(drv.cuMemAlloc(&p->b[op->buf].d, op->count * sizeof(uint32_t)));
        }
        CK(d->cuMemsetD32Async(p->b[op->buf].d, op->value, op->count, h));
        break;
    }
}

static void *thread_main(void *arg)
{
    tstate *ts = arg;
    prog_thread_init();
    CK(drv.cuEventCreate(&ts->ev, CU_EVENT_DISABLE_TIMING));
    ts->evd[0] = ts->ev;
    for (int dv = 1; dv < ndevices; dv++) {
        on_device(dv);
        CK(drv.cuEventCreate(&ts->evd[dv], CU_EVENT_DISABLE_TIMING));
    }
    for (int dv = 0; errors_ops && dv < ndevices; dv++) {
        on_device(dv);
        CK(drv.cuEventCreate(&ts->everr[dv], CU_EVENT_DISABLE_TIMING));
    }
    on_device(0);
    memcpy(ts->fn, kfn, sizeof kfn);
    ts->fn[K_COUNT] = K.fault;
    if (ts->p->extended) {
        prog_kernels_load(&ts->k, 0);
        kernels_of(&ts->k, ts->fn);
        ts->fn[K_COUNT] = ts->k.fault;
        CK(drv.cuStreamCreate(&ts->side, CU_STREAM_NON_BLOCKING));
        CK(drv.cuEventCreate(&ts->evf, CU_EVENT_DISABLE_TIMING));
        CK(drv.cuEventCreate(&ts->evj, CU_EVENT_DISABLE_TIMING));
    }
    const fthread *th = &ts->p->th[ts->t];
    for (int i = 0; i < th->nops && !ts->faulted; i++)
        if (!skipped(th->ops[i].id))
            run_op(ts, &th->ops[i]);
    if (ts->p->extended && !ts->faulted) {
        CK(drv.cuStreamSynchronize(ts->side));
        CK(drv.cuStreamDestroy(ts->side));
        CK(drv.cuEventDestroy(ts->evf));
        CK(drv.cuEventDestroy(ts->evj));
    }
    return NULL;
}

/* --memory, at a program's start: the slabs are registered, in one program
 * in two unregistered again; the reset that follows ends what is left. */
static void register_slabs(const plan *p)
{
    for (int t = 0; t < p->nthreads; t++)
        CK(drv.cuMemHostRegister(slab[t], SLAB_BYTES, 0));
    if (memory_way(p, -1) < 2)
        for (int t = 0; t < p->nthreads; t++)
            CK(drv.cuMemHostUnregister(slab[t]));
}

/* After a fault (or with --memory, after every program): the primary context
 * is reset (everything in it is gone) and made current again with the
 * kernels loaded anew, for the next seed. */
static void reset_after_fault(plan *p)
{
    if (memory_ops)
        register_slabs(p);
    CUdevice dev;
    CK(drv.cuDeviceGet(&dev, 0));
    CK(drv.cuDevicePrimaryCtxReset(dev));
    CK(drv.cuDevicePrimaryCtxRetain(&prog_ctx, dev));
    CK(drv.cuCtxSetCurrent(prog_ctx));
    prog_kernels_load(&K, 0);
    kernels_of(&K, kfn);
    for (int t = 0; t < MAX_THREADS && graph_events; t++)
        CK(drv.cuEventCreate(&evg[t], CU_EVENT_DISABLE_TIMING)); /* the reset destroyed them */
    for (int t = 0; t < p->nthreads; t++)
        for (int i = 0; i < p->th[t].nops; i++)
            p->th[t].ops[i].pin = NULL; /* freed by the reset */
}

static uint64_t run_plan(plan *p)
{
    if (memory_ops)
        reset_after_fault(p); /* the slabs were page-locked: each program starts so, whatever ran before */
    for (int s = 0; s < p->nstreams; s++) {
        fstream *st = &p->st[s];
        on_device_of(p, s);
        switch (st->kind) {
        case SK_BLOCKING:
            CK(drv.cuStreamCreate(&st->h, CU_STREAM_DEFAULT));
            break;
        case SK_NON_BLOCKING:
            CK(drv.cuStreamCreate(&st->h, CU_STREAM_NON_BLOCKING));
            break;
        case SK_LEGACY:
            st->h = st->null_handle ? (CUstream)0 : CU_STREAM_LEGACY;
            break;
        case SK_PER_THREAD:
            st->h = CU_STREAM_PER_THREAD;
            break;
        case SK_PTSZ:
            st->h = (CUstream)0;
            break;
        }
    }
    for (int b = 0; b < p->nbufs; b++) {
        on_device_of(p, p->b[b].home);
        if (p->b[b].mapped) {
            CK(drv.cuMemHostAlloc((void **)&p->b[b].host, p->b[b].words * sizeof(uint32_t),
                                  CU_MEMHOSTALLOC_DEVICEMAP | (ndevices > 1 ? CU_MEMHOSTALLOC_PORTABLE : 0)));
            CK(drv.cuMemHostGetDevicePointer(&p->b[b].d, p->b[b].host, 0));
        } else {
            CK(drv.cuMemAlloc(&p->b[b].d, p->b[b].words * sizeof(uint32_t)));
        }
        CK(drv.cuMemcpyHtoD(p->b[b].d, p->init[b], p->b[b].words * sizeof(uint32_t)));
    }
    for (int t = 0; t < p->nthreads; t++)
        for (int i = 0; i < p->th[t].nops; i++) {
            fop *op = &p->th[t].ops[i];
            if (!op->pinned)
                continue;
            CK(drv.cuMemHostAlloc((void **)&op->pin, op->count * sizeof(uint32_t), ndevices > 1 ? CU_MEMHOSTALLOC_PORTABLE : 0));
            memcpy(op->pin, op->host, op->count * sizeof(uint32_t));
        }
    for (int dv = ndevices - 1; dv >= 0; dv--) { /* ends with device 0 current */
        on_device(dv);
        CK(drv.cuCtxSynchronize());
    }

    tstate ts[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    memset(ts, 0, sizeof ts);
    for (int t = 0; t < p->nthreads; t++) {
        ts[t].p = p;
        ts[t].t = t;
        ts[t].h = PROG_HASH_INIT + (uint64_t)t;
        if (pthread_create(&tid[t], NULL, thread_main, &ts[t]))
            prog_die("pthread_create failed");
    }
    for (int t = 0; t < p->nthreads; t++)
        pthread_join(tid[t], NULL);

    if (ts[0].faulted) { /* single-thread programs only: nothing more can be read */
        uint64_t h = prog_hash_u64(prog_hash_u64(PROG_HASH_INIT, p->seed), ts[0].h);
        for (int s = 0; s < MAX_STREAMS; s++)
            free(ts[0].pend[s]);
        reset_after_fault(p);
        return h;
    }
    for (int dv = ndevices - 1; dv >= 0; dv--) {
        on_device(dv);
        CK(drv.cuCtxSynchronize());
    }
    uint64_t h = prog_hash_u64(PROG_HASH_INIT, p->seed);
    for (int t = 0; t < p->nthreads; t++) {
        for (int s = 0; s < p->nstreams; s++)
            if (p->st[s].thread == t)
                observe(&ts[t], s);
        h = prog_hash_u64(h, ts[t].h);
        for (int s = 0; s < MAX_STREAMS; s++)
            free(ts[t].pend[s]);
        CK(drv.cuEventDestroy(ts[t].ev));
        for (int dv = 1; dv < ndevices; dv++)
            CK(drv.cuEventDestroy(ts[t].evd[dv]));
    }
    for (int b = 0; b < p->nbufs; b++) {
        uint32_t *tmp = host_words(p->b[b].words);
        CK(drv.cuMemcpyDtoH(tmp, p->b[b].d, p->b[b].words * sizeof(uint32_t)));
        h = prog_hash_buf(h, tmp, p->b[b].words);
        free(tmp);
        if (p->b[b].mapped)
            CK(drv.cuMemFreeHost(p->b[b].host));
        else
            CK(drv.cuMemFree(p->b[b].d));
    }
    for (int s = 0; s < p->nstreams; s++)
        if (p->st[s].kind == SK_BLOCKING || p->st[s].kind == SK_NON_BLOCKING)
            CK(drv.cuStreamDestroy(p->st[s].h));
    for (int t = 0; t < p->nthreads; t++)
        if (p->extended)
            prog_kernels_unload(&ts[t].k);
    for (int t = 0; t < p->nthreads; t++)
        for (int i = 0; i < p->th[t].nops; i++)
            if (p->th[t].ops[i].pin) {
                CK(drv.cuMemFreeHost(p->th[t].ops[i].pin));
                p->th[t].ops[i].pin = NULL;
            }
    return h;
}

/* ---------------------------------------------------------------- main */

static void usage(void)
{
    prog_die("usage: prog_fuzz --seeds A-B [--min-threads T] [--max-threads T] [--seeds-env VAR[/DIV]] [--verbose] "
             "[--max-ops K] [--drop I,J,...] [--count-ops] [--ops=extended] [--faults] [--memory] [--ops=errors] "
             "[--graph-events] [--forks] [--devices=N]");
}

int main(int argc, char **argv)
{
    unsigned long long first = 0, last = 99;
    int min_threads = 1, max_threads = 3, verbose = 0, count_ops = 0, extended = 0, faults = 0;
    const char *seeds_env = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--seeds") && v) {
            if (sscanf(v, "%llu-%llu", &first, &last) != 2 || last < first)
                usage();
            i++;
        } else if (!strcmp(a, "--min-threads") && v) {
            min_threads = atoi(v), i++;
        } else if (!strcmp(a, "--max-threads") && v) {
            max_threads = atoi(v), i++;
        } else if (!strcmp(a, "--seeds-env") && v) {
            seeds_env = v, i++;
        } else if (!strcmp(a, "--max-ops") && v) {
            max_ops = atoi(v), i++;
        } else if (!strcmp(a, "--drop") && v) {
            for (const char *q = v; *q;) {
                char *end;
                long id = strtol(q, &end, 10);
                if (end == q || id < 0 || id > 1000000)
                    usage();
                if (id >= drop_n) {
                    int n = (int)id + 1;
                    drop_set = realloc(drop_set, (size_t)n);
                    if (!drop_set)
                        prog_die("out of memory");
                    memset(drop_set + drop_n, 0, (size_t)(n - drop_n));
                    drop_n = n;
                }
                drop_set[id] = 1;
                q = *end == ',' ? end + 1 : end;
                if (*end && *end != ',')
                    usage();
            }
            i++;
        } else if (!strcmp(a, "--verbose")) {
            verbose = 1;
        } else if (!strcmp(a, "--count-ops")) {
            count_ops = 1;
        } else if (!strcmp(a, "--ops=extended")) {
            extended = 1;
        } else if (!strcmp(a, "--ops=default")) {
            extended = 0;
        } else if (!strcmp(a, "--ops=errors")) {
            errors_ops = 1;
        } else if (!strcmp(a, "--faults")) {
            faults = 1;
        } else if (!strcmp(a, "--memory")) {
            memory_ops = 1;
        } else if (!strcmp(a, "--graph-events")) {
            graph_events = 1;
        } else if (!strcmp(a, "--forks")) {
            forks_on = 1;
        } else if (!strncmp(a, "--devices=", 10)) {
            ndevices = atoi(a + 10);
            if (ndevices < 1 || ndevices > MAX_DEVICES)
                usage();
        } else {
            usage();
        }
    }
    if (ndevices > 1 && extended)
        prog_die("--devices=N (N > 1) does not go with --ops=extended");
    if (ndevices > 1 && memory_ops)
        prog_die("--devices=N (N > 1) does not go with --memory");
    for (int t = 0; memory_ops && t < MAX_THREADS; t++)
        if (!(slab[t] = aligned_alloc(4096, SLAB_BYTES)))
            prog_die("out of memory");
    if (graph_events && !extended)
        prog_die("--graph-events goes with --ops=extended");
    if (min_threads < 1)
        min_threads = 1;
    if (max_threads > MAX_THREADS)
        max_threads = MAX_THREADS;
    if (max_threads < min_threads)
        max_threads = min_threads;
    if (seeds_env) {
        char var[128];
        unsigned div = 1;
        snprintf(var, sizeof var, "%s", seeds_env);
        char *slash = strchr(var, '/');
        if (slash) {
            *slash = 0;
            div = (unsigned)atoi(slash + 1);
            if (!div)
                div = 1;
        }
        const char *e = getenv(var);
        if (e && *e) {
            unsigned long long c = strtoull(e, NULL, 10) / div;
            last = first + (c ? c : 1) - 1;
        }
    }

    if (count_ops) {
        plan p;
        plan_generate(&p, first, min_threads, max_threads, extended, faults);
        printf("ops %d droppable ", p.total_ops);
        int any = 0;
        for (int t = 0; t < p.nthreads; t++)
            for (int i = 0; i < p.th[t].nops; i++)
                if (droppable(p.th[t].ops[i].kind))
                    printf("%s%d", any++ ? "," : "", p.th[t].ops[i].id);
        printf("\n");
        plan_free(&p);
        return 0;
    }

    const char *inj = getenv("PROG_FUZZ_INJECT");
    inject_bug = inj && *inj == '1';
    prog_init();
    prog_drv_load_into(&drv_pt, PROG_ACCESS_PROCADDR_PTDS);
    prog_kernels_load(&K, 0);
    kernels_of(&K, kfn);
    for (int t = 0; t < MAX_THREADS && graph_events; t++)
        CK(drv.cuEventCreate(&evg[t], CU_EVENT_DISABLE_TIMING));
    if (ndevices > 1) {
        int n = 0;
        CK(drv.cuDeviceGetCount(&n));
        if (n < ndevices)
            prog_die("--devices=%d: the driver has %d (SIMCUDA_DEVICES)", ndevices, n);
        dctx[0] = prog_ctx;
        KD[0] = K;
        for (int dv = 1; dv < ndevices; dv++) {
            CUdevice dev;
            CK(drv.cuDeviceGet(&dev, dv));
            CK(drv.cuDevicePrimaryCtxRetain(&dctx[dv], dev));
            on_device(dv);
            prog_kernels_load(&KD[dv], 0);
        }
        for (int dv = 0; dv < ndevices; dv++) {
            on_device(dv);
            kernels_of(&KD[dv], kfnd[dv]);
            for (int o = 0; o < ndevices; o++)
                if (o != dv)
                    CK(drv.cuCtxEnablePeerAccess(dctx[o], 0));
        }
        on_device(0);
    }

    for (unsigned long long seed = first; seed <= last; seed++) {
        plan p;
        plan_generate(&p, seed, min_threads, max_threads, extended, faults);
        if (verbose)
            print_plan(&p);
        uint64_t h = run_plan(&p);
        printf("seed %llu digest %016llx\n", seed, (unsigned long long)h);
        fflush(stdout);
        plan_free(&p);
    }
    free(drop_set);
    prog_report_launches();
    return 0;
}
