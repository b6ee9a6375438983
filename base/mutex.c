/* encore: the stream states' lock, its slow ways (base/mutex.h). */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/mutex.h"

void enc_mutex_wait(enc_mutex *m, int c) {
    if (c != 2) c = __atomic_exchange_n(&m->v, 2, __ATOMIC_ACQUIRE);
    while (c != 0) {
        syscall(SYS_futex, &m->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = __atomic_exchange_n(&m->v, 2, __ATOMIC_ACQUIRE);
    }
}

void enc_mutex_wake(enc_mutex *m) {
    __atomic_store_n(&m->v, 0, __ATOMIC_RELEASE);
    syscall(SYS_futex, &m->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
