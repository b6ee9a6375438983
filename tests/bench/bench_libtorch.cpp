// encore benchmark: PyTorch from C++, no Python (issue 13). Not a test.
//
//   bench_libtorch --workload transformer|aoti [--package FILE.pt2] [--schedule LETTERS]
//                  [--blocks B] [--steps N] [--warmup N] [--check-steps N]
//
// transformer  6 transformer blocks (hidden 768, 12 heads, a fixed KV cache of 128, batch 1,
//              one token a step) run op by op through ATen: eager libtorch, the shape of a
//              C++ inference loop. Graph mode: a manual at::cuda::CUDAGraph of one step.
// aoti         a model packaged by AOTInductor (torch._inductor.aoti_compile_and_package),
//              loaded with torch::inductor::AOTIModelPackageLoader and run from C++ (built
//              with -DBENCH_AOTI). Graph mode: a manual at::cuda::CUDAGraph of loader.run(),
//              captured in relaxed mode (the runner queries events while it runs).
//
// Random weights (seed 0), nothing downloaded, a device synchronisation after every step.
// The protocol is tests/bench/bench_never_slower.py's (parsed by tests/bench/bench_paired.py):
// after the warm-up, check-steps steps run and the checksum of the last output is printed,
// then B timed blocks of N steps; block i runs as letter schedule[i % len] says:
//   E as it is   P encore switched off   A encore switched on   G encore off, the graph mode
//   B encore off, every launch skipped (the launch-free bound: LD_PRELOAD=libskiplaunch.so:libencore.so
//     SKIPLAUNCH_SWITCH=1; outputs are garbage after it, the checksum is taken before the blocks)
// (tests/bench/encore_switch.h: the switch answers only where libencore.so is preloaded).
//   BLOCK workload=W i=I state=L steps=N us_per_step=F t0_ns=NS t1_ns=NS
//          (CLOCK_MONOTONIC at the block's start and end, for tests/bench/breakdown.py)
//   RESULT workload=W status=ok checksum=HEX us_per_step=MEDIAN mem_start_mb=.. mem_warm_mb=..
//          mem_graph_mb=..   (device memory in use, cuMemGetInfo: at start, after the warm-up,
//                             added by building the graph mode)
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <dlfcn.h>
#ifdef BENCH_AOTI
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#endif

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <time.h>
#include <vector>

#include "encore_switch.h"

namespace {

constexpr int64_t kD = 768, kHeads = 12, kHd = kD / kHeads, kPast = 128, kLayers = 6;

struct Block {
    at::Tensor ln1_w, ln1_b, ln2_w, ln2_b, qkv_w, qkv_b, proj_w, proj_b, fc1_w, fc1_b, fc2_w, fc2_b, kc, vc;
};

struct Transformer {
    std::vector<Block> blocks;
    at::Tensor ln_w, ln_b;

    explicit Transformer(const at::TensorOptions &o) {
        auto w = [&](int64_t out, int64_t in) { return at::randn({out, in}, o) * 0.02; };
        auto b = [&](int64_t n) { return at::randn({n}, o) * 0.02; };
        for (int64_t i = 0; i < kLayers; i++) {
            Block k;
            k.ln1_w = at::ones({kD}, o), k.ln1_b = at::zeros({kD}, o);
            k.ln2_w = at::ones({kD}, o), k.ln2_b = at::zeros({kD}, o);
            k.qkv_w = w(3 * kD, kD), k.qkv_b = b(3 * kD);
            k.proj_w = w(kD, kD), k.proj_b = b(kD);
            k.fc1_w = w(4 * kD, kD), k.fc1_b = b(4 * kD);
            k.fc2_w = w(kD, 4 * kD), k.fc2_b = b(kD);
            k.kc = at::randn({1, kHeads, kPast, kHd}, o) * 0.5;
            k.vc = at::randn({1, kHeads, kPast, kHd}, o) * 0.5;
            blocks.push_back(k);
        }
        ln_w = at::ones({kD}, o), ln_b = at::zeros({kD}, o);
    }

    static at::Tensor heads(const at::Tensor &t) { return t.view({1, 1, kHeads, kHd}).transpose(1, 2); }

    // One token attending to the fixed cache and itself, as bench_never_slower.py's model.
    at::Tensor forward(at::Tensor x) const {
        for (const Block &k : blocks) {
            auto qkv = at::linear(at::layer_norm(x, {kD}, k.ln1_w, k.ln1_b), k.qkv_w, k.qkv_b).split(kD, -1);
            auto q = heads(qkv[0]), keys = at::cat({k.kc, heads(qkv[1])}, 2), vals = at::cat({k.vc, heads(qkv[2])}, 2);
            auto a = at::scaled_dot_product_attention(q, keys, vals).transpose(1, 2).reshape({1, 1, kD});
            x = x + at::linear(a, k.proj_w, k.proj_b);
            auto h = at::gelu(at::linear(at::layer_norm(x, {kD}, k.ln2_w, k.ln2_b), k.fc1_w, k.fc1_b));
            x = x + at::linear(h, k.fc2_w, k.fc2_b);
        }
        return at::layer_norm(x, {kD}, ln_w, ln_b);
    }
};

void sync() { c10::cuda::device_synchronize(); }

// CLOCK_MONOTONIC in ns: the clock of tests/bench/timeline.c (BLOCK lines' t0_ns, t1_ns).
uint64_t mono_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// Device memory in use, from the driver (through encore's hooks where it is preloaded: a query).
double used_mb() {
    using mem_info_t = int (*)(size_t *, size_t *);
    static mem_info_t mem_info = [] {
        void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
        void *p = lib ? dlsym(lib, "cuMemGetInfo_v2") : nullptr;
        mem_info_t f = nullptr;
        std::memcpy(&f, &p, sizeof f);
        return f;
    }();
    size_t free_b = 0, total_b = 0;
    if (!mem_info || mem_info(&free_b, &total_b) != 0) throw std::runtime_error("cuMemGetInfo failed");
    return double(total_b - free_b) / (1024.0 * 1024.0);
}

std::string checksum(const at::Tensor &t) {
    at::Tensor c = t.detach().to(at::kCPU, at::kFloat).contiguous();
    const unsigned char *p = static_cast<const unsigned char *>(c.data_ptr());
    uint64_t h = 1469598103934665603ull; // FNV-1a
    for (size_t i = 0; i < size_t(c.numel()) * sizeof(float); i++) h = (h ^ p[i]) * 1099511628211ull;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
    return buf;
}

using Step = std::function<at::Tensor()>;

// A manual CUDA graph of one step: warm-up and capture on a side stream, replay on the current one.
// relaxed: capture in cudaStreamCaptureModeRelaxed, for code that queries events while it runs
// (AOTInductor's model container does: in the default global mode its run fails with "operation
// not permitted when stream is capturing", seen on an H100 with torch 2.11). A step that throws
// during the capture ends it here, so that the process goes on without a capture left open.
Step manual_graph(const Step &step, bool relaxed) {
    auto graph = std::make_shared<at::cuda::CUDAGraph>();
    auto out = std::make_shared<at::Tensor>();
    {
        c10::cuda::CUDAStream side_stream = c10::cuda::getStreamFromPool();
        c10::cuda::CUDAStreamGuard side(side_stream);
        for (int i = 0; i < 3; i++) step();
        sync();
        graph->capture_begin({0, 0}, relaxed ? cudaStreamCaptureModeRelaxed : cudaStreamCaptureModeGlobal);
        try {
            *out = step();
        } catch (...) {
            cudaGraph_t g = nullptr;
            if (cudaStreamEndCapture(side_stream.stream(), &g) == cudaSuccess && g) cudaGraphDestroy(g);
            (void)cudaGetLastError();
            throw;
        }
        graph->capture_end();
    }
    sync();
    return [graph, out] {
        graph->replay();
        return *out;
    };
}

struct Args {
    std::string workload, package, schedule = "E";
    int blocks = 9, steps = 50, warmup = 20, check_steps = 5;
};

Args parse(int argc, char **argv) {
    Args a;
    for (int i = 1; i < argc; i++) {
        std::string k = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc) throw std::runtime_error("missing value after " + k);
            return argv[++i];
        };
        if (k == "--workload") a.workload = val();
        else if (k == "--package") a.package = val();
        else if (k == "--schedule") a.schedule = val();
        else if (k == "--blocks") a.blocks = std::atoi(val().c_str());
        else if (k == "--steps") a.steps = std::atoi(val().c_str());
        else if (k == "--warmup") a.warmup = std::atoi(val().c_str());
        else if (k == "--check-steps") a.check_steps = std::atoi(val().c_str());
        else throw std::runtime_error("unknown argument " + k);
    }
    if (a.workload != "transformer" && a.workload != "aoti") throw std::runtime_error("--workload transformer|aoti");
    if (a.schedule.empty() || a.schedule.find_first_not_of("EPAGBT") != std::string::npos)
        throw std::runtime_error("--schedule takes the letters E, P, A, G, B and T");
    if (a.blocks < 1 || a.steps < 1 || a.warmup < 0 || a.check_steps < 1) throw std::runtime_error("bad counts");
    return a;
}

int run(const Args &a) {
    encore_switch_fn sw = encore_switch_find();
    encore_switch_fn skip = skiplaunch_switch_find(); // B blocks
    if (a.schedule.find('B') != std::string::npos && !skip)
        throw std::runtime_error("B blocks need libskiplaunch.so preloaded with SKIPLAUNCH_SWITCH=1");
    std::string name = a.workload == "aoti" ? "aoti-cpp" : "libtorch";
    c10::InferenceMode inference;
    at::manual_seed(0);
    auto o = at::TensorOptions().device(at::kCUDA).dtype(at::kFloat);
    at::Tensor warm = at::zeros({1}, o); // the context and the allocator exist before the first reading
    sync();
    Step step;
    std::shared_ptr<Transformer> model;
    at::Tensor x;
    if (a.workload == "transformer") {
        model = std::make_shared<Transformer>(o);
        x = at::randn({1, 1, kD}, o);
        step = [model, x] { return model->forward(x); };
    } else {
#ifdef BENCH_AOTI
        if (a.package.empty()) throw std::runtime_error("--package FILE.pt2 is needed for aoti");
        // the single-threaded runner (made for CUDA graphs): the default one keeps a pool of model
        // instances behind events, and from Python its first eager call after a capture of it
        // failed ("invalid argument", H200, torch 2.11, 2026-11-26)
        auto loader = std::make_shared<torch::inductor::AOTIModelPackageLoader>(a.package, "model", true);
        x = at::randn({1, 1, kD}, o);
        step = [loader, x] { return loader->run({x})[0]; };
#else
        throw std::runtime_error("built without BENCH_AOTI");
#endif
    }
    sync();
    double mem_start = used_mb(); // the model is built; the warm-up learns and captures
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < a.warmup; i++) step(), sync();
    double warm_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    at::Tensor out;
    for (int i = 0; i < a.check_steps; i++) out = step(), sync();
    std::string csum = checksum(out);
    double mem_warm = used_mb(), mem_graph = 0;
    Step gstep;
    std::string graph_error;
    if (a.schedule.find('G') != std::string::npos) {
        encore_switch_set(sw, 0); // the graph mode alone
        double before = used_mb();
        try {
            gstep = manual_graph(step, a.workload == "aoti");
            mem_graph = used_mb() - before;
        } catch (const std::exception &e) { // a result: encore's blocks still run
            graph_error = e.what();
            graph_error = graph_error.substr(0, graph_error.find('\n')).substr(0, 160);
            std::replace(graph_error.begin(), graph_error.end(), ' ', '_');
            std::fprintf(stderr, "bench_libtorch: graph mode failed (%s): its blocks are left out\n", e.what());
        }
        encore_switch_set(sw, 1);
    }
    std::vector<double> per;
    for (int b = 0; b < a.blocks; b++) {
        char state = a.schedule[size_t(b) % a.schedule.size()];
        if (state == 'G' && !gstep) continue;
        if (encore_block_set(sw, skip, state) != 0) throw std::runtime_error("encoreSetActive or skiplaunchSetActive failed");
        const Step &fn = state == 'G' ? gstep : step;
        uint64_t t0 = mono_ns();
        for (int i = 0; i < a.steps; i++) fn(), sync();
        uint64_t t1 = mono_ns();
        double us = double(t1 - t0) / 1e3 / a.steps;
        per.push_back(us);
        std::printf("BLOCK workload=%s i=%d state=%c steps=%d us_per_step=%.3f t0_ns=%llu t1_ns=%llu\n", name.c_str(), b,
                    state, a.steps, us, (unsigned long long)t0, (unsigned long long)t1);
        std::fflush(stdout);
    }
    encore_block_set(sw, skip, 'A');
    std::vector<double> s = per;
    std::sort(s.begin(), s.end());
    double med = s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
    std::printf("RESULT workload=%s status=ok checksum=%s us_per_step=%.3f blocks=%d steps=%d warmup_s=%.1f "
                "switch=%d bound_switch=%d total_steps=%d mem_start_mb=%.1f mem_warm_mb=%.1f mem_graph_mb=%.1f%s%s\n",
                name.c_str(), csum.c_str(), med, a.blocks, a.steps, warm_s, sw ? 1 : 0, skip ? 1 : 0,
                a.warmup + a.check_steps + a.blocks * a.steps, mem_start, mem_warm, mem_graph,
                graph_error.empty() ? "" : " graph_error=", graph_error.c_str());
    std::fflush(stdout);
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    std::string workload = "?";
    try {
        Args a = parse(argc, argv);
        workload = a.workload == "aoti" ? "aoti-cpp" : "libtorch";
        return run(a);
    } catch (const std::exception &e) {
        std::string msg = e.what();
        msg = msg.substr(0, msg.find('\n')).substr(0, 160);
        std::replace(msg.begin(), msg.end(), ' ', '_');
        std::fprintf(stderr, "bench_libtorch: %s\n", e.what());
        std::printf("RESULT workload=%s status=error error=%s\n", workload.c_str(), msg.c_str());
        return 1;
    }
}
