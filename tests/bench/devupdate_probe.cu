// Device-side graph updates against host-side patches (issues 30, 31: a patched replay costs about
// 0.77 us a kernel node on the H200, cuGraphExecKernelNodeSetParams, call 77). Since CUDA 12.4 a
// captured launch can opt in to being device-updatable (cudaLaunchAttributeDeviceUpdatableKernelNode),
// and a kernel inside the same graph can rewrite those nodes' arguments and grids before they run
// (cudaGraphKernelNodeUpdatesApply). If the host's part of that is only writing a small table into
// page-locked memory, a patched replay could cost about what an exact one does. This probe asks the
// GPU of the day whether that works under stream capture, whether each launch sees its own updates,
// and what it costs, beside the host-side way. No encore: a standalone program.
//
// One graph of N tiny kernels in a chain (x = x + v on one buffer, v an argument), replayed
// ITERS times a block, the ways interleaved (ROUNDS rounds, the order turned each round):
//   eager       the N kernels launched one by one
//   plain       the graph as captured, nothing changed
//   host-K      K nodes given a new v first (cudaGraphExecKernelNodeSetParams), then the launch
//   device-K    the graph's first node is an updater kernel that applies the iteration's updates,
//               written by the host into a ring of page-locked slots (the updater takes the next
//               slot by a counter of its own); K nodes given a new v; one thread applies them all
//               (cudaGraphKernelNodeUpdatesApply)
//   device-par-K  the same, one thread an update (cudaGraphKernelNodeSetParam each)
// in two regimes: a synchronize after every iteration (sync) and after every 64 (async).
// Every block's result is checked against the host's own arithmetic: each v is a multiple of 0.25 below
// 4 and a block's sums stay far below 2^22, so every sum is exact and the result depends on every
// launch's own arguments (an update applied one launch late changes it): "check=ok" or the first difference.
// Then one grid update from the device (a node's grid cut to one block) is checked the same way,
// by each updater.
//
//   nvcc -O2 -rdc=true -arch=native devupdate_probe.cu -lcudadevrt -o devupdate_probe
//   devupdate_probe [--n N] [--iters I] [--rounds R]
//
// Output: RESULT way=<way> regime=<sync|async> host_us=<host time an iteration, calls only>
//         wall_us=<wall an iteration> check=<ok|...>; the medians over rounds.
#include <cuda_runtime.h>

#include <cstddef>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(call)                                                                                      \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            printf("devupdate_probe: %s failed at line %d: %s\n", #call, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                                  \
        }                                                                                             \
    } while (0)

static const int ELEMS = 1024, THREADS = 256, RING = 64, MAXN = 64;

struct BumpArgs { // bump's parameters as the driver lays them out
    float *x;
    int n;
    float v;
};

__global__ void bump(float *x, int n, float v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] + v;
}

struct Slot {
    int n;
    int rc;
    float vals[MAXN];
    cudaGraphKernelNodeUpdate u[MAXN];
};

// The graph's first node: applies the next slot's updates to the graph's other nodes.
__global__ void updater(Slot *ring, unsigned *counter) {
    if (threadIdx.x || blockIdx.x) return;
    Slot *s = &ring[*counter % RING];
    (*counter)++;
    s->rc = s->n ? (int)cudaGraphKernelNodeUpdatesApply(s->u, (size_t)s->n) : 0;
}

// The same, one thread an update (cudaGraphKernelNodeSetParam / SetGridDim each), for the ways
// named device-par-*: does the device apply updates in parallel?
__global__ void updater_par(Slot *ring, unsigned *counter) {
    __shared__ Slot *s;
    if (threadIdx.x == 0) {
        s = &ring[*counter % RING];
        (*counter)++;
    }
    __syncthreads();
    int i = (int)threadIdx.x;
    if (i >= s->n) return;
    const cudaGraphKernelNodeUpdate &u = s->u[i];
    cudaError_t e = u.field == cudaGraphKernelNodeFieldParam
                        ? cudaGraphKernelNodeSetParam(u.node, u.updateData.param.offset, u.updateData.param.pValue,
                                                      u.updateData.param.size)
                        : cudaGraphKernelNodeSetGridDim(u.node, u.updateData.gridDim);
    if (e != cudaSuccess) s->rc = (int)e;
}

static double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static int N = 8, ITERS = 2000, ROUNDS = 7;

struct Way {
    std::string name;
    int k;       // nodes changed an iteration
    int device;  // device-side updates
    int graph;   // 0: eager
};

struct DevGraph {
    cudaGraphExec_t e;
    std::vector<cudaGraphDeviceNode_t> nodes;
    Slot *ring;
    unsigned *counter;
    long hslot = 0;       // slots the host has filled (the updater's counter follows it)
    std::vector<float> v; // each node's argument, as the graph has it
};

struct State {
    float *x;
    cudaStream_t s;
    std::vector<float> v;  // each node's current argument, as the graph has it
    double expect;         // x[0] (and every element the grids cover), by the host's arithmetic
};

static float value(long it, int node) { return (float)((it * 7 + node * 3) % 13) * 0.25f; }

static void host_chain(State &st) {
    for (int j = 0; j < N; j++) st.expect = (float)((float)st.expect + st.v[j]);
}

int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--n")) N = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--iters")) ITERS = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds")) ROUNDS = atoi(argv[i + 1]);
    }
    if (N < 1 || N > MAXN) N = 8;
    int dev = 0, drv = 0, rt = 0;
    CK(cudaSetDevice(dev));
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    printf("devupdate_probe: %s, driver %d, runtime %d, %d nodes, %d iterations a block, %d rounds\n", prop.name, drv,
           rt, N, ITERS, ROUNDS);

    State st;
    CK(cudaStreamCreateWithFlags(&st.s, cudaStreamNonBlocking));
    CK(cudaMalloc(&st.x, ELEMS * sizeof(float)));
    dim3 grid((ELEMS + THREADS - 1) / THREADS), block(THREADS);
    int elems = ELEMS;

    // The host-patched graph: N plain kernel nodes in a chain, built node by node (so their order is
    // known without the graph queries whose signatures changed in CUDA 13).
    std::vector<float> v0(N);
    for (int j = 0; j < N; j++) v0[j] = value(0, j);
    cudaGraph_t gh;
    CK(cudaGraphCreate(&gh, 0));
    std::vector<cudaGraphNode_t> order(N);
    for (int j = 0; j < N; j++) {
        void *args[3] = {&st.x, &elems, &v0[j]};
        cudaKernelNodeParams p = {};
        p.func = (void *)bump;
        p.gridDim = grid;
        p.blockDim = block;
        p.kernelParams = args;
        CK(cudaGraphAddKernelNode(&order[j], gh, j ? &order[j - 1] : nullptr, j ? 1 : 0, &p));
    }
    cudaGraphExec_t eh;
    CK(cudaGraphInstantiate(&eh, gh, 0));

    // The device-updated graphs: an updater (one thread for all updates, or one an update), then N
    // device-updatable kernel nodes; each with its own ring of slots and its updater's counter.
    DevGraph dg[2];
    for (int d = 0; d < 2; d++) {
        DevGraph &g = dg[d];
        g.nodes.resize(N);
        CK(cudaHostAlloc(&g.ring, RING * sizeof(Slot), cudaHostAllocMapped));
        memset((void *)g.ring, 0, RING * sizeof(Slot)); // plain data: the union's dim3 has a constructor
        CK(cudaMalloc(&g.counter, sizeof(unsigned)));
        CK(cudaMemset(g.counter, 0, sizeof(unsigned)));
        cudaGraph_t gd;
        CK(cudaStreamBeginCapture(st.s, cudaStreamCaptureModeThreadLocal));
        if (d == 0) updater<<<1, 32, 0, st.s>>>(g.ring, g.counter);
        else updater_par<<<1, MAXN, 0, st.s>>>(g.ring, g.counter);
        for (int j = 0; j < N; j++) {
            cudaLaunchAttribute at[1];
            memset(at, 0, sizeof at);
            at[0].id = cudaLaunchAttributeDeviceUpdatableKernelNode;
            at[0].val.deviceUpdatableKernelNode.deviceUpdatable = 1;
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = grid;
            cfg.blockDim = block;
            cfg.stream = st.s;
            cfg.attrs = at;
            cfg.numAttrs = 1;
            cudaError_t e = cudaLaunchKernelEx(&cfg, bump, st.x, elems, v0[j]);
            if (e != cudaSuccess) {
                printf("RESULT way=device-capture check=refused:%s\n", cudaGetErrorString(e));
                cudaGraph_t dead;
                cudaStreamEndCapture(st.s, &dead);
                return 0;
            }
            g.nodes[j] = at[0].val.deviceUpdatableKernelNode.devNode;
        }
        CK(cudaStreamEndCapture(st.s, &gd));
        cudaError_t ie = cudaGraphInstantiate(&g.e, gd, 0);
        if (ie != cudaSuccess) {
            printf("RESULT way=device-instantiate check=refused:%s\n", cudaGetErrorString(ie));
            return 0;
        }
        CK(cudaGraphUpload(g.e, st.s));
        g.v = v0;
    }
    printf("devupdate_probe: device-updatable capture and instantiation accepted\n");

    // Each way starts from the captured arguments; its graph keeps what it was last given.
    std::vector<float> vh = v0, ve = v0;
    std::vector<Way> ways = {{"eager", N, 0, 0},           {"plain", 0, 0, 1},       {"host-1", 1, 0, 1},
                             {"host-all", N, 0, 1},        {"device-0", 0, 1, 1},    {"device-1", 1, 1, 1},
                             {"device-all", N, 1, 1},      {"device-par-0", 0, 2, 1}, {"device-par-1", 1, 2, 1},
                             {"device-par-all", N, 2, 1}};
    for (int regime = 0; regime < 2; regime++) {
        int every = regime == 0 ? 1 : RING;
        std::vector<std::vector<double>> host(ways.size()), wall(ways.size());
        std::vector<std::string> check(ways.size(), "ok");
        long it = 1;
        for (int r = 0; r < ROUNDS; r++) {
            for (size_t wi0 = 0; wi0 < ways.size(); wi0++) {
                size_t wi = (wi0 + r) % ways.size();
                const Way &w = ways[wi];
                std::vector<float> &cur = !w.graph ? ve : w.device ? dg[w.device - 1].v : vh;
                st.v = cur;
                CK(cudaMemsetAsync(st.x, 0, ELEMS * sizeof(float), st.s));
                CK(cudaStreamSynchronize(st.s));
                st.expect = 0;
                double h = 0, t0 = now_us();
                for (int i = 0; i < ITERS; i++, it++) {
                    // which nodes change this iteration: the first k, turning
                    for (int c = 0; c < w.k; c++) st.v[(c + it) % N] = value(it, (c + (int)it) % N);
                    double a = now_us();
                    if (!w.graph) {
                        for (int j = 0; j < N; j++) bump<<<grid, block, 0, st.s>>>(st.x, elems, st.v[j]);
                    } else if (!w.device) {
                        for (int c = 0; c < w.k; c++) {
                            int j = (int)((c + it) % N);
                            void *args[3] = {&st.x, &elems, &st.v[j]};
                            cudaKernelNodeParams p = {};
                            p.func = (void *)bump;
                            p.gridDim = grid;
                            p.blockDim = block;
                            p.kernelParams = args;
                            CK(cudaGraphExecKernelNodeSetParams(eh, order[j], &p));
                        }
                        CK(cudaGraphLaunch(eh, st.s));
                    } else {
                        DevGraph &g = dg[w.device - 1];
                        Slot *s = &g.ring[g.hslot % RING];
                        s->n = w.k;
                        for (int c = 0; c < w.k; c++) {
                            int j = (int)((c + it) % N);
                            s->vals[c] = st.v[j];
                            cudaGraphKernelNodeUpdate &u = s->u[c];
                            u.node = g.nodes[j];
                            u.field = cudaGraphKernelNodeFieldParam;
                            u.updateData.param.pValue = &s->vals[c];
                            u.updateData.param.offset = offsetof(BumpArgs, v);
                            u.updateData.param.size = sizeof(float);
                        }
                        g.hslot++;
                        CK(cudaGraphLaunch(g.e, st.s));
                    }
                    h += now_us() - a;
                    host_chain(st);
                    if ((i + 1) % every == 0) CK(cudaStreamSynchronize(st.s));
                }
                CK(cudaStreamSynchronize(st.s));
                double t1 = now_us();
                host[wi].push_back(h / ITERS);
                wall[wi].push_back((t1 - t0) / ITERS);
                cur = st.v;
                float got[ELEMS];
                CK(cudaMemcpy(got, st.x, sizeof got, cudaMemcpyDeviceToHost));
                for (int e = 0; e < ELEMS; e++)
                    if (got[e] != (float)st.expect && check[wi] == "ok") {
                        char b[96];
                        snprintf(b, sizeof b, "differs:elem%d:got%g:want%g", e, got[e], st.expect);
                        check[wi] = b;
                    }
                if (w.device)
                    for (int q = 0; q < RING; q++)
                        if (dg[w.device - 1].ring[q].rc && check[wi] == "ok")
                            check[wi] = "apply-rc:" + std::to_string(dg[w.device - 1].ring[q].rc);
            }
        }
        for (size_t wi = 0; wi < ways.size(); wi++) {
            std::sort(host[wi].begin(), host[wi].end());
            std::sort(wall[wi].begin(), wall[wi].end());
            printf("RESULT way=%s regime=%s host_us=%.3f wall_us=%.3f check=%s\n", ways[wi].name.c_str(),
                   regime ? "async" : "sync", host[wi][host[wi].size() / 2], wall[wi][wall[wi].size() / 2],
                   check[wi].c_str());
        }
    }

    // A grid from the device: node 0 cut to one block, so elements past THREADS keep their value.
    for (int d = 0; d < 2; d++) {
        DevGraph &g = dg[d];
        CK(cudaMemsetAsync(st.x, 0, ELEMS * sizeof(float), st.s));
        Slot *s = &g.ring[g.hslot % RING];
        s->n = 1;
        s->rc = 0;
        s->u[0].node = g.nodes[0];
        s->u[0].field = cudaGraphKernelNodeFieldGridDim;
        s->u[0].updateData.gridDim = dim3(1, 1, 1);
        g.hslot++;
        CK(cudaGraphLaunch(g.e, st.s));
        CK(cudaStreamSynchronize(st.s));
        float got[ELEMS];
        CK(cudaMemcpy(got, st.x, sizeof got, cudaMemcpyDeviceToHost));
        float full = 0, part = 0;
        for (int j = 0; j < N; j++) full = full + g.v[j];
        for (int j = 1; j < N; j++) part = part + g.v[j];
        int ok = got[0] == full && got[ELEMS - 1] == part && s->rc == 0;
        printf("RESULT way=%s regime=sync check=%s (elem0 %g want %g, last %g want %g, rc %d)\n",
               d ? "device-par-grid" : "device-grid", ok ? "ok" : "differs", got[0], full, got[ELEMS - 1], part, s->rc);
        CK(cudaGraphExecDestroy(g.e));
    }
    CK(cudaGraphExecDestroy(eh));
    return 0;
}
