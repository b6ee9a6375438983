/* One process driving two devices (issue 15), on the simulator's
 * SIMCUDA_DEVICES=2. One host thread switches the current context
 * (cuCtxSetCurrent, what cudaSetDevice does) between the two devices'
 * primary contexts; each device has its own kernels module, buffers and
 * stream. One behaviour per mode:
 *
 *   independent   each device runs the hot loop's five launches on its own
 *                 stream, the devices interleaved: both replayed, neither
 *                 ordered after the other
 *   legacy        the same on each device's legacy default stream (one per
 *                 context: they do not synchronise with each other)
 *   peer-copy     device 0's launches (held) produce y0; with device 1
 *                 current, a cuMemcpyPeerAsync on device 0's stream copies
 *                 it to device 1, whose stream waits for it (an event of
 *                 device 0) and goes on (device 0's next copy waits until
 *                 device 1 has read it); every 8th iteration a synchronous
 *                 cuMemcpyPeer (ordered after all of both devices' work)
 *   event-wait    ping-pong: device 1's stream waits for an event recorded
 *                 on device 0's and reads device 0's memory (peer access),
 *                 then device 0 waits for device 1's event; the host waits
 *                 for device 1's event with device 0 current
 *   switch-mid    the current device changes in the middle of a sequence
 *                 (held launches on device 0, launches on device 1, back);
 *                 from iteration 20 on, every other iteration also launches
 *                 on device 0's stream while device 1 is current, which the
 *                 driver refuses (CUDA_ERROR_INVALID_HANDLE): the answer is
 *                 printed, and it must be the driver's with encore too
 *   kernel-elsewhere  as switch-mid, but the launch on device 0's stream with
 *                 device 1 current is of a context-independent kernel (a
 *                 CUkernel, as the runtime launches): the driver runs it in
 *                 the stream's context (two H100s), and with encore it must
 *                 run there too, after device 0's held launches
 *   nccl-shaped   what ncclGroupEnd does for an all-reduce over both devices
 *                 from one thread, as tests/gpu/calltrace.c read it off on two
 *                 H100s (2026-11-25): per device, an event recorded on the
 *                 program's stream and waited for on NCCL's own stream (one
 *                 event per device for both directions, as NCCL's), the
 *                 collective's part launched there (cuLaunchKernelEx with a
 *                 memory-sync-domain attribute and a packed argument buffer
 *                 shorter than the parameters, as NCCL's; the part blocks
 *                 until both have started), an event recorded there and waited for on
 *                 the program's stream; context switches between every step
 *
 * Every iteration prints both devices' reductions. */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1024u
#define ITERATIONS 60

static CUcontext ctx[2];
static prog_kernels K[2];
static CUstream S[2];
static CUdeviceptr X[2], Y[2], R[2];

static void use(int d) { CK(drv.cuCtxSetCurrent(ctx[d])); }

static void setup(int legacy)
{
    prog_init();
    int n = 0;
    CK(drv.cuDeviceGetCount(&n));
    if (n < 2)
        prog_die("needs two devices (SIMCUDA_DEVICES=2), found %d", n);
    ctx[0] = prog_ctx;
    CUdevice d1;
    CK(drv.cuDeviceGet(&d1, 1));
    CK(drv.cuDevicePrimaryCtxRetain(&ctx[1], d1));
    for (int d = 0; d < 2; d++) {
        use(d);
        prog_kernels_load(&K[d], 0);
        S[d] = legacy ? CU_STREAM_LEGACY : prog_stream(CU_STREAM_NON_BLOCKING);
        prog_hot_buffers(&K[d], S[d], N, &X[d], &Y[d], &R[d]);
    }
}

/* the first launches of device d's iteration, then the rest */
static void head(int d, int it)
{
    k_mix(&K[d], S[d], X[d], 5 + (uint32_t)d, N);
    k_add(&K[d], S[d], Y[d], X[d], N);
    (void)it;
}
static void tail(int d)
{
    k_stamp(&K[d], S[d], Y[d], N);
    k_axpy(&K[d], S[d], X[d], Y[d], 3 + (uint32_t)d, N);
    k_reduce(&K[d], S[d], R[d], Y[d], N);
}

static void print_both(int it)
{
    for (int d = 0; d < 2; d++) {
        use(d);
        prog_print_reduce(S[d], R[d], d ? "device 1 iteration" : "device 0 iteration", it);
    }
}

static void independent(void)
{
    for (int it = 0; it < ITERATIONS; it++) {
        for (int d = 0; d < 2; d++) {
            use(d);
            head(d, it);
            tail(d);
        }
        print_both(it);
    }
}

/* From iteration `from` on, every other iteration also launches `stamp` (a
 * function of device 0, or a context-independent kernel) on device 0's stream
 * while device 1 is current, between the two devices' held launches, and
 * prints the driver's answer. */
static void switch_mid(CUfunction stamp, int from)
{
    for (int it = 0; it < ITERATIONS; it++) {
        use(0);
        head(0, it);
        use(1);
        head(1, it);
        if (it >= from && it % 2 == 0) { /* device 0's stream while device 1 is current */
            CUresult r = prog_launch_rc(stamp, PROG_GRID(N), PROG_BLOCK, 0, S[0], (void *[]){&Y[0], &(uint32_t){N}});
            printf("iteration %d: a launch on device 0's stream with device 1 current: %s\n", it, prog_err_name(r));
        }
        use(0);
        tail(0);
        use(1);
        tail(1);
        print_both(it);
    }
}

static void kernel_elsewhere(void)
{
    char image[4096];
    snprintf(image, sizeof image, "simcuda:%s", prog_kernels_path(0));
    CUlibrary lib;
    CUkernel stamp;
    CK(drv.cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    CK(drv.cuLibraryGetKernel(&stamp, lib, "stamp"));
    switch_mid((CUfunction)(void *)stamp, 0);
    CK(drv.cuLibraryUnload(lib));
}

static void peer_copy(void)
{
    int can = 0;
    CK(drv.cuDeviceCanAccessPeer(&can, 1, 0));
    printf("device 1 can access device 0: %d\n", can);
    use(1);
    CK(drv.cuCtxEnablePeerAccess(ctx[0], 0));
    CUdeviceptr z1 = prog_alloc(N);
    CUevent consumed;
    CK(drv.cuEventCreate(&consumed, CU_EVENT_DISABLE_TIMING));
    use(0);
    CUevent copied;
    CK(drv.cuEventCreate(&copied, CU_EVENT_DISABLE_TIMING));
    for (int it = 0; it < ITERATIONS; it++) {
        use(0);
        head(0, it);
        k_stamp(&K[0], S[0], Y[0], N);
        /* y1 is overwritten only once device 1 has read the last copy (without
         * this wait the program races with itself; on two H100s it did) */
        CK(drv.cuStreamWaitEvent(S[0], consumed, 0));
        use(1);
        /* device 0's stream, device 1 current: ordered after the launches above */
        CK(drv.cuMemcpyPeerAsync(Y[1], ctx[1], Y[0], ctx[0], N * sizeof(uint32_t), S[0]));
        CK(drv.cuEventRecord(copied, S[0]));
        CK(drv.cuStreamWaitEvent(S[1], copied, 0));
        k_axpy(&K[1], S[1], X[1], Y[1], 7, N);
        CK(drv.cuEventRecord(consumed, S[1]));
        k_reduce(&K[1], S[1], R[1], X[1], N);
        use(0);
        k_axpy(&K[0], S[0], X[0], Y[0], 3, N);
        k_reduce(&K[0], S[0], R[0], Y[0], N);
        if (it % 8 == 7) {
            use(1);
            CK(drv.cuMemcpyPeer(z1, ctx[1], X[0], ctx[0], N * sizeof(uint32_t)));
            printf("iteration %d: synchronous peer copy %016llx\n", it, (unsigned long long)prog_hash_dev(S[1], z1, N));
        }
        print_both(it);
    }
}

static void event_wait(void)
{
    use(1);
    CK(drv.cuCtxEnablePeerAccess(ctx[0], 0));
    CUevent e1;
    CK(drv.cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
    use(0);
    CK(drv.cuCtxEnablePeerAccess(ctx[1], 0));
    CUevent e0;
    CK(drv.cuEventCreate(&e0, CU_EVENT_DISABLE_TIMING));
    for (int it = 0; it < ITERATIONS; it++) {
        use(0);
        head(0, it);
        CK(drv.cuEventRecord(e0, S[0]));
        use(1);
        CK(drv.cuStreamWaitEvent(S[1], e0, 0));
        k_add(&K[1], S[1], Y[1], X[0], N); /* device 0's memory */
        k_stamp(&K[1], S[1], Y[1], N);
        CK(drv.cuEventRecord(e1, S[1]));
        use(0);
        CK(drv.cuStreamWaitEvent(S[0], e1, 0));
        k_add(&K[0], S[0], X[0], Y[1], N); /* device 1's memory */
        tail(0);
        CK(drv.cuEventSynchronize(e1)); /* device 1's event, device 0 current */
        use(1);
        k_reduce(&K[1], S[1], R[1], Y[1], N);
        print_both(it);
    }
}

static void nccl_shaped(void)
{
    use(0);
    CUdeviceptr comm = prog_alloc(64); /* 32 u64: the collective's counters and inputs (kernels.c) */
    CK(drv.cuMemsetD32(comm, 0, 64));
    CK(drv.cuCtxSynchronize());
    CUstream I[2];
    CUevent ev[2]; /* one event per device for both directions, as NCCL's stream's serialEvent */
    CUfunction part[2];
    CUdeviceptr out[2];
    for (int d = 0; d < 2; d++) {
        use(d);
        I[d] = prog_stream(CU_STREAM_NON_BLOCKING);
        CK(drv.cuEventCreate(&ev[d], CU_EVENT_DISABLE_TIMING));
        part[d] = prog_function(K[d].mod, "allreduce_padded");
        out[d] = prog_alloc(N);
        uint64_t in = (uint64_t)Y[d];
        CK(drv.cuMemcpyHtoD(comm + (8 + (CUdeviceptr)d) * 8, &in, sizeof in));
    }
    for (int it = 0; it < ITERATIONS; it++) {
        for (int d = 0; d < 2; d++) {
            use(d);
            head(d, it);
            k_stamp(&K[d], S[d], Y[d], N);
        }
        for (int d = 0; d < 2; d++) { /* ncclGroupEnd: NCCL's stream after the program's */
            use(d);
            CK(drv.cuEventRecord(ev[d], S[d]));
            CK(drv.cuStreamWaitEvent(I[d], ev[d], 0));
        }
        for (int d = 0; d < 2; d++) {
            use(d);
            /* NCCL's form: a packed buffer with only the parameters read (32 bytes of 288) */
            struct {
                uint64_t comm, out;
                uint32_t rank, nranks, n, timeout_ms;
            } args = {comm, out[d], (uint32_t)d, 2, N, 20000};
            CUlaunchAttribute a = {.id = CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN};
            a.value.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
            prog_launch_ex_packed(part[d], PROG_GRID(N), PROG_BLOCK, 0, I[d], &args, sizeof args, &a, 1);
        }
        for (int d = 0; d < 2; d++) { /* the program's stream after NCCL's */
            use(d);
            CK(drv.cuEventRecord(ev[d], I[d]));
            CK(drv.cuStreamWaitEvent(S[d], ev[d], 0));
        }
        for (int d = 0; d < 2; d++) {
            use(d);
            k_add(&K[d], S[d], X[d], out[d], N);
            k_reduce(&K[d], S[d], R[d], X[d], N);
        }
        if (it % 10 == 9)
            print_both(it);
    }
    use(0);
    uint64_t c[3];
    CK(drv.cuMemcpyDtoH(c, comm, sizeof c));
    printf("collectives %llu timeouts %llu\n", (unsigned long long)c[0], (unsigned long long)c[2]);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "independent") || !strcmp(mode, "legacy")) {
        setup(!strcmp(mode, "legacy"));
        independent();
    } else if (!strcmp(mode, "switch-mid")) {
        setup(0);
        switch_mid(K[0].stamp, 20);
    } else if (!strcmp(mode, "kernel-elsewhere")) {
        setup(0);
        kernel_elsewhere();
    } else if (!strcmp(mode, "peer-copy")) {
        setup(0);
        peer_copy();
    } else if (!strcmp(mode, "event-wait")) {
        setup(0);
        event_wait();
    } else if (!strcmp(mode, "nccl-shaped")) {
        setup(0);
        nccl_shaped();
    } else {
        prog_die("usage: prog_multidev independent|legacy|switch-mid|kernel-elsewhere|peer-copy|event-wait|nccl-shaped");
    }
    for (int d = 0; d < 2; d++) {
        use(d);
        printf("device %d final x %016llx y %016llx\n", d, (unsigned long long)prog_hash_dev(S[d], X[d], N),
               (unsigned long long)prog_hash_dev(S[d], Y[d], N));
    }
    prog_report_launches();
    return 0;
}
