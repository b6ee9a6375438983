/* Unit tests of the stream states' lock (base/mutex.h): mutual exclusion
 * under contention (threads sleeping in the futex and woken), trylock. */
#include <pthread.h>
#include <stdint.h>

#include "base/mutex.h"
#include "testhelper.h"

#define THREADS 4
#define ROUNDS 200000

static enc_mutex mu;
static uint64_t counter; /* guarded by mu, written non-atomically on purpose */

static void *add_many(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        enc_mutex_lock(&mu);
        counter++;
        if (i % 4096 == 0) usleep(10); /* held a while now and then: the others wait in the kernel */
        enc_mutex_unlock(&mu);
    }
    return NULL;
}

int main(int argc, char **argv) {
    th_init(argc, argv);

    TEST("mutex: a taken lock cannot be tried; a released one can, and a free one is free") {
        enc_mutex m;
        enc_mutex_init(&m);
        EXPECT_EQ_INT(enc_mutex_trylock(&m), 0);
        EXPECT_EQ_INT(enc_mutex_trylock(&m), EBUSY);
        enc_mutex_unlock(&m);
        EXPECT_EQ_INT(m.v, 0);
        enc_mutex_lock(&m);
        EXPECT_EQ_INT(m.v, 1);
        enc_mutex_unlock(&m);
        EXPECT_EQ_INT(m.v, 0);
    }

    TEST("mutex: threads contending for it add every increment exactly once") {
        enc_mutex_init(&mu);
        counter = 0;
        pthread_t t[THREADS];
        for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, add_many, NULL);
        for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
        EXPECT(counter == (uint64_t)THREADS * ROUNDS);
        EXPECT_EQ_INT(mu.v, 0); /* free, nobody marked waiting */
    }

    return th_report();
}
