/* NCCL on the simulator (issue 15): two ranks, one host thread per device
 * (SIMCUDA_DEVICES=2), each launching its part of an all-reduce (the
 * `allreduce` kernel of kernels.c, which blocks on its stream until every
 * rank's part has started, as an NCCL kernel does) between small kernels.
 *
 * Per iteration, on its own stream, rank r launches mix stamp allreduce,
 * then (rank 1 only) synchronises its stream, then both meet at a host
 * barrier, then launch add reduce and copy the reduction back. Rank 1's
 * synchronisation waits for its all-reduce, which waits for rank 0's part;
 * rank 0 meanwhile waits at the barrier for rank 1. Without encore rank
 * 0's part is running: no deadlock. Once encore has captured rank 0's
 * sequence it holds mix stamp allreduce at the barrier (the sequence goes
 * on after it): only the flush deadline (ENCORE_FLUSH_DEADLINE) releases
 * them, so the wait is bounded by it. A rank part that waits more than
 * TIMEOUT_MS gives up and counts a timeout, which is printed: a deadlock
 * shows as different output, never as a hung test.
 *
 *   prog_collective [iterations (default 40)] */
#include "prog.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 256u
#define NRANKS 2
#define TIMEOUT_MS 20000u

static int iterations = 40;
static CUdeviceptr comm;
static pthread_barrier_t bar;
static char lines[NRANKS][200][128];

typedef struct rank_ctx {
    int rank;
    CUcontext ctx;
    prog_kernels k;
    CUstream s;
    CUfunction allreduce;
    CUdeviceptr x, out, y, r;
} rank_ctx;
static rank_ctx ranks[NRANKS];

static void setup_rank(rank_ctx *rc)
{
    CUdevice dev;
    CK(drv.cuDeviceGet(&dev, rc->rank));
    CK(drv.cuDevicePrimaryCtxRetain(&rc->ctx, dev));
    CK(drv.cuCtxSetCurrent(rc->ctx));
    prog_kernels_load(&rc->k, 0);
    rc->allreduce = prog_function(rc->k.mod, "allreduce");
    rc->s = prog_stream(CU_STREAM_NON_BLOCKING);
    rc->x = prog_alloc(N);
    rc->out = prog_alloc(N);
    rc->y = prog_alloc(N);
    rc->r = prog_alloc(2);
    k_fill(&rc->k, rc->s, rc->x, 1 + (uint32_t)rc->rank, N);
    k_fill(&rc->k, rc->s, rc->y, 7, N);
    uint64_t in = (uint64_t)rc->x;
    CK(drv.cuMemcpyHtoD(comm + (8 + (CUdeviceptr)rc->rank) * 8, &in, sizeof in));
    CK(drv.cuStreamSynchronize(rc->s));
}

static void allreduce(rank_ctx *rc)
{
    uint32_t rank = (uint32_t)rc->rank, nranks = NRANKS, n = N, t = TIMEOUT_MS;
    void *p[] = {&comm, &rc->out, &rank, &nranks, &n, &t};
    prog_launch(rc->allreduce, PROG_GRID(N), PROG_BLOCK, 0, rc->s, p);
}

static void *rank_main(void *arg)
{
    rank_ctx *rc = arg;
    CK(drv.cuCtxSetCurrent(rc->ctx));
    for (int it = 0; it < iterations; it++) {
        k_mix(&rc->k, rc->s, rc->x, 3 + (uint32_t)rc->rank, N);
        k_stamp(&rc->k, rc->s, rc->x, N);
        allreduce(rc);
        if (rc->rank == 1)
            CK(drv.cuStreamSynchronize(rc->s));
        pthread_barrier_wait(&bar);
        k_add(&rc->k, rc->s, rc->y, rc->out, N);
        k_reduce(&rc->k, rc->s, rc->r, rc->y, N);
        uint32_t red[2];
        CK(drv.cuMemcpyDtoHAsync(red, rc->r, sizeof red, rc->s));
        CK(drv.cuStreamSynchronize(rc->s));
        snprintf(lines[rc->rank][it], sizeof lines[0][0], "rank %d iteration %2d reduce %08x%08x", rc->rank, it,
                 red[0], red[1]);
        pthread_barrier_wait(&bar); /* every rank's iteration done before the next one's inputs change */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    iterations = argc > 1 ? atoi(argv[1]) : 40;
    if (iterations < 1 || iterations > 200)
        prog_die("iterations: 1 to 200");
    prog_init();
    int ndev = 0;
    CK(drv.cuDeviceGetCount(&ndev));
    if (ndev < NRANKS)
        prog_die("needs %d devices (SIMCUDA_DEVICES), found %d", NRANKS, ndev);
    CK(drv.cuMemAlloc(&comm, 32 * sizeof(uint64_t)));
    CK(drv.cuMemsetD32(comm, 0, 64));
    CK(drv.cuCtxSynchronize());
    for (int r = 0; r < NRANKS; r++) {
        ranks[r].rank = r;
        setup_rank(&ranks[r]);
    }
    pthread_barrier_init(&bar, NULL, NRANKS);
    pthread_t t[NRANKS];
    for (int r = 0; r < NRANKS; r++)
        if (pthread_create(&t[r], NULL, rank_main, &ranks[r]) != 0)
            prog_die("pthread_create failed");
    for (int r = 0; r < NRANKS; r++)
        pthread_join(t[r], NULL);
    for (int it = 0; it < iterations; it++)
        for (int r = 0; r < NRANKS; r++)
            printf("%s\n", lines[r][it]);
    CK(drv.cuCtxSetCurrent(ranks[0].ctx));
    uint64_t c[3];
    CK(drv.cuMemcpyDtoH(c, comm, sizeof c));
    printf("collectives %llu timeouts %llu\n", (unsigned long long)c[0], (unsigned long long)c[2]);
    prog_report_launches();
    return 0;
}
