/* Kernels of the test programs (tests/prog), for the simulated driver.
 *
 * Built twice: libprogkernels.so and, with -DPROG_KERNELS_ALT,
 * libprogkernels_alt.so, which exports the same names with different
 * arithmetic (the module-unload test loads one after the other, so a graph
 * that still points at the unloaded module's functions gives other numbers).
 *
 * Every kernel treats its launch as grid*block threads: thread i handles
 * element i, so a launch with too few threads leaves the tail untouched and
 * the result depends on the launch configuration, as on a GPU. `stamp` also
 * folds grid, block and shared-memory size into the values, so a replay with
 * the wrong configuration changes the output. All arithmetic is on uint32_t
 * and fully deterministic. */
#include "../sim/simkernel.h"

#include <dlfcn.h>
#include <stdint.h>
#include <time.h>

#ifdef PROG_KERNELS_ALT
#define K_MUL 0x2c1b3c6dU
#define K_ADD 0x297a2d39U
#else
#define K_MUL 0x7feb352dU
#define K_ADD 0x9e3779b9U
#endif

static inline uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= K_MUL;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static inline uint32_t nthreads(const simcuda_dims *d)
{
    uint64_t t = (uint64_t)d->grid[0] * d->grid[1] * d->grid[2] * d->block[0] * d->block[1] * d->block[2];
    return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static inline uint32_t limit(const simcuda_dims *d, uint32_t n)
{
    uint32_t t = nthreads(d);
    return n < t ? n : t;
}

#define ARG(type, i) (*(type *)args[i])

/* fill(u32 *dst, u32 value, u32 n): dst[i] = value + i */
static void fill_body(const simcuda_dims *d, void **args)
{
    uint32_t *dst = ARG(uint32_t *, 0), v = ARG(uint32_t, 1), n = limit(d, ARG(uint32_t, 2));
    for (uint32_t i = 0; i < n; i++)
        dst[i] = v + i;
}
SIMCUDA_KERNEL(fill, fill_body, sizeof(uint32_t *), sizeof(uint32_t), sizeof(uint32_t));

/* mix(u32 *dst, u32 salt, u32 n): dst[i] = mix32(dst[i] ^ salt ^ i*K), the
 * salt changed by the launch's cluster shape if it has one (so that a replay
 * that lost the shape changes the values) */
static void mix_body(const simcuda_dims *d, void **args)
{
    uint32_t *dst = ARG(uint32_t *, 0), salt = ARG(uint32_t, 1), n = limit(d, ARG(uint32_t, 2));
    salt += d->cluster[0] * 0x10000u;
    for (uint32_t i = 0; i < n; i++)
        dst[i] = mix32(dst[i] ^ salt ^ (i * K_ADD));
}
SIMCUDA_KERNEL(mix, mix_body, sizeof(uint32_t *), sizeof(uint32_t), sizeof(uint32_t));

/* add(u32 *dst, const u32 *src, u32 n): dst[i] += src[i] */
static void add_body(const simcuda_dims *d, void **args)
{
    uint32_t *dst = ARG(uint32_t *, 0);
    const uint32_t *src = ARG(const uint32_t *, 1);
    uint32_t n = limit(d, ARG(uint32_t, 2));
    for (uint32_t i = 0; i < n; i++)
        dst[i] += src[i];
}
SIMCUDA_KERNEL(add, add_body, sizeof(uint32_t *), sizeof(uint32_t *), sizeof(uint32_t));

/* axpy(u32 *dst, const u32 *src, u32 a, u32 n): dst[i] = a*src[i] + dst[i] */
static void axpy_body(const simcuda_dims *d, void **args)
{
    uint32_t *dst = ARG(uint32_t *, 0);
    const uint32_t *src = ARG(const uint32_t *, 1);
    uint32_t a = ARG(uint32_t, 2), n = limit(d, ARG(uint32_t, 3));
    for (uint32_t i = 0; i < n; i++)
        dst[i] = a * src[i] + dst[i];
}
SIMCUDA_KERNEL(axpy, axpy_body, sizeof(uint32_t *), sizeof(uint32_t *), sizeof(uint32_t), sizeof(uint32_t));

/* copy(u32 *dst, const u32 *src, u32 n) */
static void copy_body(const simcuda_dims *d, void **args)
{
    uint32_t *dst = ARG(uint32_t *, 0);
    const uint32_t *src = ARG(const uint32_t *, 1);
    uint32_t n = limit(d, ARG(uint32_t, 2));
    for (uint32_t i = 0; i < n; i++)
        dst[i] = src[i];
}
SIMCUDA_KERNEL(copy, copy_body, sizeof(uint32_t *), sizeof(uint32_t *), sizeof(uint32_t));

/* stamp(u32 *dst, u32 n): folds the launch configuration into the values */
static void stamp_body(const simcuda_dims *d, void **args)
{
    uint32_t *dst = ARG(uint32_t *, 0), n = limit(d, ARG(uint32_t, 1));
    uint32_t cfg = d->grid[0] * 1000003U + d->grid[1] * 10007U + d->grid[2] * 101U + d->block[0] * 7919U +
                   d->block[1] * 131U + d->block[2] * 17U + d->shared_bytes * 31U;
    for (uint32_t i = 0; i < n; i++)
        dst[i] = mix32(dst[i] + cfg + i);
}
SIMCUDA_KERNEL(stamp, stamp_body, sizeof(uint32_t *), sizeof(uint32_t));

/* packed(u8 a, u64 b, u16 c, u32 *dst, u32 n): parameters of mixed sizes and
 * alignments (offsets 0, 8, 16, 24, 32), for the `extra` buffer form */
static void packed_body(const simcuda_dims *d, void **args)
{
    uint8_t a = ARG(uint8_t, 0);
    uint64_t b = ARG(uint64_t, 1);
    uint16_t c = ARG(uint16_t, 2);
    uint32_t *dst = ARG(uint32_t *, 3), n = limit(d, ARG(uint32_t, 4));
    uint32_t k = (uint32_t)a * 3U + (uint32_t)b + (uint32_t)(b >> 32) * 5U + (uint32_t)c * 7U;
    for (uint32_t i = 0; i < n; i++)
        dst[i] = mix32(dst[i] ^ (k + i));
}
SIMCUDA_KERNEL(packed, packed_body, sizeof(uint8_t), sizeof(uint64_t), sizeof(uint16_t), sizeof(uint32_t *),
               sizeof(uint32_t));

/* reduce(u32 *out, const u32 *src, u32 n): out[0] = fold of src[0..n) (one thread's work) */
static void reduce_body(const simcuda_dims *d, void **args)
{
    uint32_t *out = ARG(uint32_t *, 0);
    const uint32_t *src = ARG(const uint32_t *, 1);
    uint32_t n = ARG(uint32_t, 2), h = 0x811c9dc5U;
    (void)d;
    for (uint32_t i = 0; i < n; i++)
        h = mix32(h ^ src[i]) + i;
    out[0] = h;
}
SIMCUDA_KERNEL(reduce, reduce_body, sizeof(uint32_t *), sizeof(uint32_t *), sizeof(uint32_t));

/* flag_inc(u32 *flag): *flag += 1, atomically, once per launch; the host may
 * spin on the flag in mapped memory */
static void flag_inc_body(const simcuda_dims *d, void **args)
{
    uint32_t *flag = ARG(uint32_t *, 0);
    (void)d;
    __atomic_fetch_add(flag, 1U, __ATOMIC_SEQ_CST);
}
SIMCUDA_KERNEL(flag_inc, flag_inc_body, sizeof(uint32_t *));

/* flag_wait(u32 *flag, u32 value, u32 timeout_ms): spins until flag[0] >= value
 * (another stream's flag_inc sets it); after timeout_ms it gives up and counts
 * the timeout in flag[1], so a wrongly serialised program ends, with other output */
static void flag_wait_body(const simcuda_dims *d, void **args)
{
    uint32_t *flag = ARG(uint32_t *, 0), value = ARG(uint32_t, 1), timeout_ms = ARG(uint32_t, 2);
    struct timespec t0, t1, nap = {0, 20000};
    (void)d;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (__atomic_load_n(&flag[0], __ATOMIC_ACQUIRE) < value) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 > (long)timeout_ms) {
            __atomic_fetch_add(&flag[1], 1U, __ATOMIC_SEQ_CST);
            return;
        }
        nanosleep(&nap, NULL);
    }
}
SIMCUDA_KERNEL(flag_wait, flag_wait_body, sizeof(uint32_t *), sizeof(uint32_t), sizeof(uint32_t));

/* delay(u32 us): does nothing for a while (widens race windows) */
static void delay_body(const simcuda_dims *d, void **args)
{
    uint32_t us = ARG(uint32_t, 0);
    struct timespec ts = {(time_t)(us / 1000000U), (long)(us % 1000000U) * 1000L};
    (void)d;
    nanosleep(&ts, NULL);
}
SIMCUDA_KERNEL(delay, delay_body, sizeof(uint32_t));

/* nop(): no parameters */
static void nop_body(const simcuda_dims *d, void **args)
{
    (void)d;
    (void)args;
}
SIMCUDA_KERNEL0(nop, nop_body);

/* fault(u32 *dst, u32 code, u32 n): with code 0, dst[i] += 1; else the kernel
 * faults with that CUresult (700 CUDA_ERROR_ILLEGAL_ADDRESS, 710
 * CUDA_ERROR_ASSERT): the simulated driver makes it the context's sticky
 * error (simcuda_device_fault), as a GPU does with an illegal address or a
 * failed device-side assert */
static void fault_body(const simcuda_dims *d, void **args)
{
    uint32_t *dst = ARG(uint32_t *, 0), code = ARG(uint32_t, 1), n = limit(d, ARG(uint32_t, 2));
    if (!code) {
        for (uint32_t i = 0; i < n; i++)
            dst[i] += 1;
        return;
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void (*raise_fault)(int) = lib ? (void (*)(int))dlsym(lib, "simcuda_device_fault") : NULL;
    if (raise_fault)
        raise_fault((int)code);
    if (lib)
        dlclose(lib);
}
SIMCUDA_KERNEL(fault, fault_body, sizeof(uint32_t *), sizeof(uint32_t), sizeof(uint32_t));

/* A collective (issue 15: NCCL on the simulator), one part per rank:
 * allreduce(u64 *comm, u32 *out, u32 rank, u32 nranks, u32 n, u32 timeout_ms).
 * comm[0]: arrivals, comm[1]: departures, comm[2]: timeouts, comm[8 + r]: rank
 * r's input (u32 *), comm[16 + r]: rank r's calls so far. Like an NCCL kernel,
 * a rank's part blocks (on its stream's worker) until every rank's part has
 * started: then out[i] = sum over ranks of in_r[i], in rank order; then it
 * waits until every rank has read the inputs. A rank that waits longer than
 * timeout_ms gives up and counts a timeout (the program prints it), so a
 * held part that is never released ends the program with other output
 * instead of hanging it. */
static int wait_count(uint64_t *c, uint64_t target, uint32_t timeout_ms)
{
    struct timespec t0, t1, nap = {0, 20000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (__atomic_load_n(c, __ATOMIC_ACQUIRE) < target) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 > (long)timeout_ms)
            return -1;
        nanosleep(&nap, NULL);
    }
    return 0;
}

static void allreduce_body(const simcuda_dims *d, void **args)
{
    uint64_t *comm = ARG(uint64_t *, 0);
    uint32_t *out = ARG(uint32_t *, 1), rank = ARG(uint32_t, 2), nranks = ARG(uint32_t, 3);
    uint32_t n = limit(d, ARG(uint32_t, 4)), timeout_ms = ARG(uint32_t, 5);
    if (nranks == 0 || nranks > 8 || rank >= nranks)
        return;
    uint64_t gen = ++comm[16 + rank]; /* only this rank's stream touches it, in order */
    __atomic_fetch_add(&comm[0], 1, __ATOMIC_ACQ_REL);
    if (wait_count(&comm[0], gen * nranks, timeout_ms)) {
        __atomic_fetch_add(&comm[2], 1, __ATOMIC_SEQ_CST);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = 0;
        for (uint32_t r = 0; r < nranks; r++)
            s += ((const uint32_t *)(uintptr_t)comm[8 + r])[i] * (r + 1);
        out[i] = s;
    }
    __atomic_fetch_add(&comm[1], 1, __ATOMIC_ACQ_REL);
    if (wait_count(&comm[1], gen * nranks, timeout_ms))
        __atomic_fetch_add(&comm[2], 1, __ATOMIC_SEQ_CST);
}
SIMCUDA_KERNEL(allreduce, allreduce_body, sizeof(uint64_t *), sizeof(uint32_t *), sizeof(uint32_t), sizeof(uint32_t),
               sizeof(uint32_t), sizeof(uint32_t));
/* allreduce_padded: the same, with a 256-byte parameter after the six that it
 * never reads, as NCCL's kernels take a 4 KB struct of which a launch fills
 * and passes only the part read (a packed buffer shorter than the parameters) */
SIMCUDA_KERNEL(allreduce_padded, allreduce_body, sizeof(uint64_t *), sizeof(uint32_t *), sizeof(uint32_t),
               sizeof(uint32_t), sizeof(uint32_t), sizeof(uint32_t), 256);
