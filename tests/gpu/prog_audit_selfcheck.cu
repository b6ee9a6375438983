// encore GPU test: self-check of the CUPTI audit library (no encore involved).
//
// Run under libencore_audit.so alone. The program plays encore's part of the
// audit contract itself: it looks up encore_audit_enter/encore_audit_leave
// with dlsym(RTLD_DEFAULT) and brackets some of its own launches with them,
// including a nested bracket and a bracket during which ANOTHER thread
// launches (must still count as unseen: the depth is per thread). It prints
// what the audit must report:
//   selfcheck launches=L bracketed=B enters=E
// and the runner compares that with the audit's through_encore/unseen/hooks.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                           \
    do {                                                                                   \
        cudaError_t err_ = (x);                                                            \
        if (err_ != cudaSuccess) {                                                         \
            fprintf(stderr, "prog_audit_selfcheck: %s failed at line %d: %s\n", #x, __LINE__, \
                    cudaGetErrorString(err_));                                             \
            exit(2);                                                                       \
        }                                                                                  \
    } while (0)

typedef void (*hook_fn)(void);

__global__ void k_touch(int *d, int v)
{
    if (threadIdx.x == 0)
        d[blockIdx.x] += v;
}

static int *dbuf;
static const int other_thread_launches = 10;

static void *other_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < other_thread_launches; i++)
        k_touch<<<1, 32>>>(dbuf, 1000 + i);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(0));
    return NULL;
}

int main(void)
{
    hook_fn enter = (hook_fn)dlsym(RTLD_DEFAULT, "encore_audit_enter");
    hook_fn leave = (hook_fn)dlsym(RTLD_DEFAULT, "encore_audit_leave");
    if (!enter || !leave) {
        fprintf(stderr, "prog_audit_selfcheck: encore_audit_enter/leave not found: preload libencore_audit.so\n");
        return 3;
    }
    CHECK(cudaMalloc(&dbuf, 64 * sizeof(int)));
    CHECK(cudaMemset(dbuf, 0, 64 * sizeof(int)));

    int launches = 0, bracketed = 0, enters = 0;
    for (int i = 0; i < 100; i++) {
        if (i % 2 == 0) {
            enter();
            enters++;
            k_touch<<<2, 32>>>(dbuf, i);
            leave();
            bracketed++;
        } else {
            k_touch<<<2, 32>>>(dbuf, i);
        }
        launches++;
    }
    // nested bracket
    enter();
    enter();
    enters += 2;
    k_touch<<<1, 32>>>(dbuf, 7);
    leave();
    k_touch<<<1, 32>>>(dbuf, 8); // still inside the outer bracket
    leave();
    launches += 2;
    bracketed += 2;
    // a bracket on this thread must not cover another thread's launches
    enter();
    enters++;
    pthread_t t;
    if (pthread_create(&t, NULL, other_thread, NULL) != 0) {
        fprintf(stderr, "prog_audit_selfcheck: pthread_create failed\n");
        return 2;
    }
    pthread_join(t, NULL);
    leave();
    launches += other_thread_launches;
    // unbalanced leave must not make the depth negative
    leave();
    k_touch<<<1, 32>>>(dbuf, 9);
    launches++;

    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int h[64];
    CHECK(cudaMemcpy(h, dbuf, sizeof h, cudaMemcpyDeviceToHost));
    printf("selfcheck launches=%d bracketed=%d enters=%d sum=%d\n", launches, bracketed, enters, h[0] + h[1]);
    CHECK(cudaFree(dbuf));
    return 0;
}
