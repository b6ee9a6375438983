/* encore: the stream states' lock (core/state/stream_state.h `mu`).
 *
 * A futex word: 0 free, 1 taken, 2 taken and maybe waited for (Drepper,
 * "Futexes Are Tricky", mutex 3). Taking a free lock is one compare-and-swap,
 * releasing an unwaited one one atomic decrement, both inline: every launch
 * takes its stream's lock once, and a pthread mutex's lock and unlock cost it
 * some 57 instructions of glibc's (issue 31; the lock is uncontended for a
 * single-threaded program). Contended, a thread sleeps in the kernel (one
 * system call to wait, one to wake), as with a pthread mutex. Not recursive,
 * no owner kept, process-private. Acquire on taking, release on releasing:
 * what one holder wrote, the next one reads (sanitizers see that too). */
#ifndef ENCORE_MUTEX_H
#define ENCORE_MUTEX_H

#include <errno.h>

typedef struct enc_mutex {
    int v; /* 0 free, 1 taken, 2 taken and maybe waited for */
} enc_mutex;

static inline void enc_mutex_init(enc_mutex *m) { __atomic_store_n(&m->v, 0, __ATOMIC_RELAXED); }

/* The slow ways (mutex.c): the lock was taken (c: what the failed
 * compare-and-swap found), wait for it; someone may wait, free it and wake one. */
void enc_mutex_wait(enc_mutex *m, int c);
void enc_mutex_wake(enc_mutex *m);

static inline void enc_mutex_lock(enc_mutex *m) {
    int c = 0;
    if (__builtin_expect(!__atomic_compare_exchange_n(&m->v, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED), 0))
        enc_mutex_wait(m, c);
}

/* 0 if taken, EBUSY if another holds it (as pthread_mutex_trylock). */
static inline int enc_mutex_trylock(enc_mutex *m) {
    int c = 0;
    return __atomic_compare_exchange_n(&m->v, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED) ? 0 : EBUSY;
}

static inline void enc_mutex_unlock(enc_mutex *m) {
    if (__builtin_expect(__atomic_fetch_sub(&m->v, 1, __ATOMIC_RELEASE) != 1, 0)) enc_mutex_wake(m);
}

#endif
