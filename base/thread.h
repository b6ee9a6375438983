/* encore: the calling thread's words that a launch reads, in one thread-local block.
 *
 * In a shared library every thread-local variable is reached through a GOT
 * entry of its own (initial-exec: the offset is known only at load time), so
 * each one costs two cache lines, its GOT entry and its own word, and where
 * the program's work between two launches evicts encore's data a held launch
 * paid a cache miss for each (docs/maintainers.md, "a held launch's cost").
 * One block: one GOT entry, and the words a held launch reads in its first
 * cache line. As jemalloc's tsd, the block names what each floor above keeps
 * in it; each field belongs to the file named beside it, and nothing here
 * reads them. */
#ifndef ENCORE_THREAD_H
#define ENCORE_THREAD_H

#include <cuda.h>
#include <stdint.h>

struct enc_tstats;
struct enc_stream_state;

#define ENC_THREAD_STREAMS 4 /* stream states a thread remembers (a power of two) */

typedef struct enc_thread {
    /* ---- the first cache line: what every launch reads, the most recent stream's way included ---- */
    int guard;                 /* base/guard.h: the re-entrancy guard */
    uint32_t cur_ctx_gen;      /* core/path/context.c: cur_ctx (below) is valid while this is enc_hot.ctx_gen */
    struct enc_tstats *tstats; /* core/observe/stats.h: this thread's counters (NULL: none yet) */
    uint64_t wait_episode_ns;  /* core/path/launch.c: waits since this thread's last launch */
    CUcontext cur_ctx;         /* core/path/context.c: what cuCtxGetCurrent last answered */
    /* ---- core/streams/stream.c: the stream states it used last, most recent first ---- */
    struct enc_thread_stream {
        void *key;
        CUcontext ctx;
        struct enc_stream_state *st;
        uint32_t gen;
        uint8_t kind;
        uint8_t rests; /* core/path/launch.c: it rested at this thread's last launch there: the next one is
                        * checked before the hook builds anything (engine.h) */
    } streams[ENC_THREAD_STREAMS];
    unsigned streams_next; /* the way to fill next */
    uint32_t eager_clock;  /* core/path/launch.c: launches passed through, one in ENC_SAMPLE_EVERY timed */
} __attribute__((aligned(64))) enc_thread;
_Static_assert(sizeof(((enc_thread *)0)->streams[0]) == 32 && __builtin_offsetof(enc_thread, streams) == 32,
               "the most recent stream's way shares the first cache line");

extern __thread enc_thread enc_thr __attribute__((tls_model("initial-exec")));

#endif
