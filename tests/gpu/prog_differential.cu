// encore GPU test: randomized differential program.
//
// From a seed it builds a "body" of random operations (kernel launches with
// random bodies, grids and arguments, async and blocking memcpy, memset,
// event record/wait, stream/event/device syncs) over several streams (legacy
// default, per-thread default, blocking, two non-blocking) and runs that body
// several times; some launches take different scalar arguments each
// repetition and a few operations are skipped now and then, so a layer that
// replays repeated launch sequences sees repeats, argument changes and
// divergences. Every buffer access is ordered after the previous access to
// the same buffer (same stream, or an event recorded on the previous stream
// and waited on by the next), so the program is race-free by construction and
// its results do not depend on timing. Integer arithmetic only.
//
//   prog_differential [--seeds A-B]      prints one digest line per seed
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUF 8
#define NELEM 8192
#define NSTREAM 5
#define NEVENT 64
#define PATTERN_ELEMS (NELEM * 4)

#define CHECK(x)                                                                             \
    do {                                                                                     \
        cudaError_t err_ = (x);                                                              \
        if (err_ != cudaSuccess) {                                                           \
            fprintf(stderr, "prog_differential: %s failed at line %d: %s\n", #x, __LINE__, \
                    cudaGetErrorString(err_));                                               \
            exit(2);                                                                         \
        }                                                                                    \
    } while (0)

// ---- kernels (grid-stride loops; a destination never aliases a source) ----------
__global__ void k_mix(uint32_t *d, uint32_t a, uint32_t b, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        uint32_t v = d[i] * (a | 1u) + (b ^ (uint32_t)i);
        d[i] = (v << 5) | (v >> 27);
    }
}

__global__ void k_comb(uint32_t *d, const uint32_t *s, uint32_t a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        d[i] = (d[i] ^ s[i]) + a * (uint32_t)i;
}

__global__ void k_shift(uint32_t *d, const uint32_t *s, int off, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        d[i] += s[(i + off) % n];
}

__global__ void k_fill(uint32_t *d, uint32_t v, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        d[i] = v + (uint32_t)i * 2654435761u;
}

// One block; dynamic shared memory of blockDim.x words. Writes d[slot].
__global__ void k_sum(uint32_t *d, const uint32_t *s, int slot, int n)
{
    extern __shared__ uint32_t part[];
    uint32_t acc = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        acc += s[i] * (uint32_t)(i | 1);
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        d[slot] ^= part[0];
}

// ---- helpers ------------------------------------------------------------------------
static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t s = a * 0x100000001B3ull ^ (b << 21) ^ (c << 42) ^ c;
    return splitmix(&s);
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

enum op_type {
    OP_MIX,
    OP_COMB,
    OP_SHIFT,
    OP_FILL,
    OP_SUM,
    OP_D2D_ASYNC,
    OP_H2D_ASYNC,
    OP_MEMSET_ASYNC,
    OP_READBACK_ASYNC,
    OP_READBACK_BLOCKING,
    OP_MEMSET_BLOCKING,
    OP_EVENT_LINK,
    OP_STREAM_SYNC,
    OP_EVENT_SYNC,
    OP_DEVICE_SYNC,
    OP_COUNT
};

// Relative weights: mostly launches.
static const int op_weight[OP_COUNT] = {14, 10, 8, 4, 3, 3, 2, 2, 2, 1, 1, 3, 1, 1, 1};

struct op {
    int type;
    int stream;
    int b1, b2;
    uint32_t a, b;
    int grid, block;
    int vary; // scalar argument changes every repetition
};

static cudaStream_t streams[NSTREAM];
static cudaEvent_t events[NEVENT];
static int next_event;
static uint32_t *bufs[NBUF];
static int last_stream[NBUF];
static uint32_t *pinned_pattern; // written once before any GPU work, then read-only
static uint32_t *pinned_stage;   // D2H target; its stream is synced before the host reads it
static uint32_t *pageable_stage;

static cudaEvent_t take_event(void)
{
    cudaEvent_t e = events[next_event];
    next_event = (next_event + 1) % NEVENT;
    return e;
}

// Order stream s after the last access to buffer b.
static void order_after(int s, int b)
{
    int last = last_stream[b];
    if (last >= 0 && last != s) {
        cudaEvent_t e = take_event();
        CHECK(cudaEventRecord(e, streams[last]));
        CHECK(cudaStreamWaitEvent(streams[s], e, 0));
    }
}

static void touched(int s, int b) { last_stream[b] = s; }

static int pick_op(uint64_t *rng)
{
    int total = 0;
    for (int i = 0; i < OP_COUNT; i++)
        total += op_weight[i];
    int r = (int)(splitmix(rng) % (uint64_t)total);
    for (int i = 0; i < OP_COUNT; i++) {
        if (r < op_weight[i])
            return i;
        r -= op_weight[i];
    }
    return OP_MIX;
}

static void run_seed(int seed)
{
    static const int grids[] = {1, 2, 4, 8, 16};
    static const int blocks[] = {64, 128, 256};
    uint64_t rng = 0xC0FFEEull ^ ((uint64_t)seed << 32) ^ (uint64_t)seed;

    int body_len = 30 + (int)(splitmix(&rng) % 50);
    int reps = 8 + (int)(splitmix(&rng) % 12);
    struct op *body = (struct op *)calloc((size_t)body_len, sizeof *body);
    for (int i = 0; i < body_len; i++) {
        struct op *o = &body[i];
        o->type = pick_op(&rng);
        o->stream = (int)(splitmix(&rng) % NSTREAM);
        o->b1 = (int)(splitmix(&rng) % NBUF);
        o->b2 = (o->b1 + 1 + (int)(splitmix(&rng) % (NBUF - 1))) % NBUF; // != b1
        o->a = (uint32_t)splitmix(&rng);
        o->b = (uint32_t)splitmix(&rng);
        o->grid = grids[splitmix(&rng) % 5];
        o->block = blocks[splitmix(&rng) % 3];
        o->vary = (splitmix(&rng) % 5) == 0;
    }

    // Fresh buffer contents for every seed.
    CHECK(cudaDeviceSynchronize());
    for (int b = 0; b < NBUF; b++) {
        CHECK(cudaMemcpy(bufs[b], pinned_pattern + b * 1024, NELEM * sizeof(uint32_t),
                         cudaMemcpyHostToDevice));
        last_stream[b] = -1;
    }
    CHECK(cudaDeviceSynchronize());

    uint64_t digest = 1469598103934665603ull;
    unsigned long long launches = 0, ops = 0;
    for (int rep = 0; rep < reps; rep++) {
        for (int i = 0; i < body_len; i++) {
            const struct op *o = &body[i];
            if (hash3((uint64_t)seed, (uint64_t)rep, (uint64_t)i) % 32 == 0)
                continue; // skipped this time: the sequence diverges
            uint32_t a = o->vary ? (uint32_t)hash3((uint64_t)seed + 7, (uint64_t)rep, (uint64_t)i) : o->a;
            int s = o->stream;
            cudaStream_t st = streams[s];
            ops++;
            switch (o->type) {
            case OP_MIX:
                order_after(s, o->b1);
                k_mix<<<o->grid, o->block, 0, st>>>(bufs[o->b1], a, o->b, NELEM);
                touched(s, o->b1);
                launches++;
                break;
            case OP_COMB:
                order_after(s, o->b1);
                order_after(s, o->b2);
                k_comb<<<o->grid, o->block, 0, st>>>(bufs[o->b1], bufs[o->b2], a, NELEM);
                touched(s, o->b1);
                touched(s, o->b2);
                launches++;
                break;
            case OP_SHIFT:
                order_after(s, o->b1);
                order_after(s, o->b2);
                k_shift<<<o->grid, o->block, 0, st>>>(bufs[o->b1], bufs[o->b2], (int)(a % NELEM), NELEM);
                touched(s, o->b1);
                touched(s, o->b2);
                launches++;
                break;
            case OP_FILL:
                order_after(s, o->b1);
                k_fill<<<o->grid, o->block, 0, st>>>(bufs[o->b1], a, NELEM);
                touched(s, o->b1);
                launches++;
                break;
            case OP_SUM:
                order_after(s, o->b1);
                order_after(s, o->b2);
                k_sum<<<1, o->block, (size_t)o->block * sizeof(uint32_t), st>>>(
                    bufs[o->b1], bufs[o->b2], (int)(o->b % NELEM), NELEM);
                touched(s, o->b1);
                touched(s, o->b2);
                launches++;
                break;
            case OP_D2D_ASYNC:
                order_after(s, o->b1);
                order_after(s, o->b2);
                CHECK(cudaMemcpyAsync(bufs[o->b1], bufs[o->b2], NELEM * sizeof(uint32_t),
                                      cudaMemcpyDeviceToDevice, st));
                touched(s, o->b1);
                touched(s, o->b2);
                break;
            case OP_H2D_ASYNC: {
                size_t off = (size_t)(a % (PATTERN_ELEMS - NELEM));
                order_after(s, o->b1);
                CHECK(cudaMemcpyAsync(bufs[o->b1], pinned_pattern + off, NELEM * sizeof(uint32_t),
                                      cudaMemcpyHostToDevice, st));
                touched(s, o->b1);
                break;
            }
            case OP_MEMSET_ASYNC:
                order_after(s, o->b1);
                CHECK(cudaMemsetAsync(bufs[o->b1], (int)(a & 0xff), NELEM * sizeof(uint32_t) / 2, st));
                touched(s, o->b1);
                break;
            case OP_READBACK_ASYNC:
                order_after(s, o->b1);
                CHECK(cudaMemcpyAsync(pinned_stage, bufs[o->b1], NELEM * sizeof(uint32_t),
                                      cudaMemcpyDeviceToHost, st));
                touched(s, o->b1);
                CHECK(cudaStreamSynchronize(st));
                digest = fnv1a(digest, pinned_stage, NELEM * sizeof(uint32_t));
                break;
            case OP_READBACK_BLOCKING: // legacy default stream semantics
                order_after(0, o->b1);
                CHECK(cudaMemcpy(pageable_stage, bufs[o->b1], NELEM * sizeof(uint32_t),
                                 cudaMemcpyDeviceToHost));
                touched(0, o->b1);
                digest = fnv1a(digest, pageable_stage, NELEM * sizeof(uint32_t));
                break;
            case OP_MEMSET_BLOCKING:
                order_after(0, o->b1);
                CHECK(cudaMemset(bufs[o->b1] + NELEM / 2, (int)(a & 0xff), NELEM * sizeof(uint32_t) / 2));
                touched(0, o->b1);
                break;
            case OP_EVENT_LINK: { // extra ordering between two streams (never needed, always harmless)
                int other = (s + 1 + (int)(o->b % (NSTREAM - 1))) % NSTREAM;
                cudaEvent_t e = take_event();
                CHECK(cudaEventRecord(e, streams[other]));
                CHECK(cudaStreamWaitEvent(st, e, 0));
                break;
            }
            case OP_STREAM_SYNC:
                CHECK(cudaStreamSynchronize(st));
                break;
            case OP_EVENT_SYNC: {
                cudaEvent_t e = take_event();
                CHECK(cudaEventRecord(e, st));
                CHECK(cudaEventSynchronize(e));
                break;
            }
            case OP_DEVICE_SYNC:
                CHECK(cudaDeviceSynchronize());
                break;
            default:
                break;
            }
        }
        CHECK(cudaGetLastError());
    }
    CHECK(cudaDeviceSynchronize());
    for (int b = 0; b < NBUF; b++) {
        CHECK(cudaMemcpy(pageable_stage, bufs[b], NELEM * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        digest = fnv1a(digest, pageable_stage, NELEM * sizeof(uint32_t));
    }
    printf("seed %d body %d reps %d ops %llu launches %llu digest %016llx\n", seed, body_len, reps,
           ops, launches, (unsigned long long)digest);
    fflush(stdout);
    free(body);
}

int main(int argc, char **argv)
{
    int first = 1, last = 8;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (sscanf(v, "%d-%d", &first, &last) != 2) {
                if (sscanf(v, "%d", &first) != 1) {
                    fprintf(stderr, "prog_differential: bad --seeds '%s' (want A-B)\n", v);
                    return 2;
                }
                last = first;
            }
        } else {
            fprintf(stderr, "usage: %s [--seeds A-B]\n", argv[0]);
            return 2;
        }
    }
    if (last < first) {
        fprintf(stderr, "prog_differential: empty seed range %d-%d\n", first, last);
        return 2;
    }

    streams[0] = 0;                   // legacy default stream
    streams[1] = cudaStreamPerThread; // per-thread default stream
    CHECK(cudaStreamCreate(&streams[2]));
    CHECK(cudaStreamCreateWithFlags(&streams[3], cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&streams[4], cudaStreamNonBlocking));
    for (int i = 0; i < NEVENT; i++)
        CHECK(cudaEventCreateWithFlags(&events[i], cudaEventDisableTiming));
    for (int b = 0; b < NBUF; b++)
        CHECK(cudaMalloc(&bufs[b], NELEM * sizeof(uint32_t)));
    CHECK(cudaMallocHost(&pinned_pattern, PATTERN_ELEMS * sizeof(uint32_t)));
    CHECK(cudaMallocHost(&pinned_stage, NELEM * sizeof(uint32_t)));
    pageable_stage = (uint32_t *)malloc(NELEM * sizeof(uint32_t));
    uint64_t prng = 12345;
    for (int i = 0; i < PATTERN_ELEMS; i++)
        pinned_pattern[i] = (uint32_t)splitmix(&prng);

    for (int seed = first; seed <= last; seed++)
        run_seed(seed);

    CHECK(cudaDeviceSynchronize());
    for (int b = 0; b < NBUF; b++)
        CHECK(cudaFree(bufs[b]));
    for (int i = 0; i < NEVENT; i++)
        CHECK(cudaEventDestroy(events[i]));
    for (int s = 2; s < NSTREAM; s++)
        CHECK(cudaStreamDestroy(streams[s]));
    CHECK(cudaFreeHost(pinned_pattern));
    CHECK(cudaFreeHost(pinned_stage));
    free(pageable_stage);
    return 0;
}
