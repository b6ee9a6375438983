/* Unit tests of the interposition tables and the policy table: what each
 * driver entry point means, and which wrapper a cuGetProcAddress request
 * (name, version, flags) maps to. */
#include <stdio.h>
#include <string.h>

#include "hooks_gen.h"
#include "interpose/hooks.h"
#include "policy/entry_class.h"
#include "policy/options.h"

static int passed, failed;
#define CHECK(name, cond)                                               \
    do {                                                                \
        if (cond) { passed++; printf("ok   %s\n", name); }              \
        else { failed++; printf("FAIL %s (%s:%d)\n", name, __FILE__, __LINE__); } \
    } while (0)

static const char *pfn_of(const char *base, int version, int per_thread) {
    int v = enc_find_variant(base, version, per_thread);
    return v < 0 ? "(none)" : enc_variants[v].pfn;
}

static int class_of(const char *name) {
    unsigned char cls;
    uint32_t flags;
    enc_policy_lookup(name, &cls, &flags);
    return cls;
}

static int entry_of(const char *name) {
    for (int i = 0; i < ENC_ENTRY_COUNT; i++)
        if (strcmp(enc_entry_names[i], name) == 0) return i;
    return -1;
}

static int in_entries(const char *name) {
    for (int i = 0; i < ENC_ENTRY_COUNT; i++)
        if (strcmp(enc_entry_names[i], name) == 0) return 1;
    return 0;
}

int main(void) {
    CHECK("cuCtxSynchronize at 12000 is the void variant",
          strcmp(pfn_of("cuCtxSynchronize", 12000, 0), "PFN_cuCtxSynchronize_v2000") == 0);
    CHECK("cuCtxSynchronize at 13000 is the CUcontext variant",
          strcmp(pfn_of("cuCtxSynchronize", 13000, 0), "PFN_cuCtxSynchronize_v13000") == 0);
    CHECK("cuMemcpyHtoDAsync at 13000 is the v2 ABI",
          strcmp(pfn_of("cuMemcpyHtoDAsync", 13000, 0), "PFN_cuMemcpyHtoDAsync_v3020") == 0);
    CHECK("cuMemcpyHtoDAsync per-thread is the _ptsz variant",
          strcmp(pfn_of("cuMemcpyHtoDAsync", 13000, 1), "PFN_cuMemcpyHtoDAsync_v7000_ptsz") == 0);
    CHECK("cuLaunchKernel per-thread is the _ptsz variant",
          strcmp(pfn_of("cuLaunchKernel", 13000, 1), "PFN_cuLaunchKernel_v7000_ptsz") == 0);
    CHECK("a version below the first variant finds none", enc_find_variant("cuLaunchKernel", 3000, 0) < 0);
    CHECK("an unknown name finds no variant", enc_find_variant("cuNoSuchThing", 13000, 0) < 0);
    CHECK("exports are found by ABI name", enc_find_export("cuMemcpyHtoDAsync_v2_ptsz") >= 0);
    CHECK("export table is sorted (binary search finds the first and last)",
          enc_find_export(enc_exports[0].name) == 0 &&
              enc_find_export(enc_exports[ENC_EXPORT_COUNT - 1].name) == ENC_EXPORT_COUNT - 1);
    CHECK("_ptsz exports are marked per-thread",
          enc_exports[enc_find_export("cuLaunchKernel_ptsz")].per_thread == 1 &&
              enc_exports[enc_find_export("cuLaunchKernel")].per_thread == 0);

    int sorted = 1, known = 1;
    for (int i = 1; i < enc_policy_count; i++)
        if (strcmp(enc_policy_table[i - 1].name, enc_policy_table[i].name) >= 0) sorted = 0;
    for (int i = 0; i < enc_policy_count; i++)
        if (!in_entries(enc_policy_table[i].name)) {
            known = 0;
            printf("  policy names unknown entry point %s\n", enc_policy_table[i].name);
        }
    CHECK("policy table is sorted and unique", sorted);
    CHECK("every policy row names an entry point of the CUDA headers", known);
    CHECK("unknown entry points flush everything (default-deny)", class_of("cuSomethingNew") == ENC_CLASS_FLUSH_ALL);
    CHECK("cuLaunchKernel is a launch", class_of("cuLaunchKernel") == ENC_CLASS_LAUNCH);
    CHECK("cuLaunchKernelEx is a launch", class_of("cuLaunchKernelEx") == ENC_CLASS_LAUNCH);
    CHECK("cuStreamSynchronize flushes its stream", class_of("cuStreamSynchronize") == ENC_CLASS_FLUSH_STREAM);
    CHECK("cuEventRecord flushes its stream", class_of("cuEventRecord") == ENC_CLASS_FLUSH_STREAM);
    CHECK("cuMemcpyDtoHAsync flushes its stream", class_of("cuMemcpyDtoHAsync") == ENC_CLASS_FLUSH_STREAM);
    CHECK("cuCtxSynchronize flushes everything", class_of("cuCtxSynchronize") == ENC_CLASS_FLUSH_ALL);
    CHECK("blocking cuMemcpyDtoH flushes everything", class_of("cuMemcpyDtoH") == ENC_CLASS_FLUSH_ALL);
    CHECK("cuMemFree flushes everything", class_of("cuMemFree") == ENC_CLASS_FLUSH_ALL);
    CHECK("cuFuncSetAttribute flushes everything", class_of("cuFuncSetAttribute") == ENC_CLASS_FLUSH_ALL);
    const char *hot_queries[] = {"cuCtxGetCurrent", "cuCtxGetDevice", "cuDevicePrimaryCtxGetState",
                                 "cuStreamIsCapturing", "cuKernelGetName", "cuFuncGetAttribute",
                                 "cuPointerGetAttribute", "cuGetErrorString", "cuGetProcAddress"};
    int all_pass = 1;
    for (unsigned i = 0; i < sizeof hot_queries / sizeof hot_queries[0]; i++)
        if (class_of(hot_queries[i]) != ENC_CLASS_PASS) all_pass = 0;
    CHECK("the queries PyTorch calls per step pass straight through", all_pass);
    unsigned char cls;
    uint32_t flags;
    enc_policy_lookup("cuStreamBeginCapture", &cls, &flags);
    CHECK("cuStreamBeginCapture marks the start of the program's own capture", flags & ENC_F_CAPTURE_BEGIN);
    enc_policy_lookup("cuModuleUnload", &cls, &flags);
    CHECK("cuModuleUnload drops graphs", (flags & ENC_F_UNLOAD) && cls == ENC_CLASS_FLUSH_ALL);
    /* An error a held launch got when it was issued late is returned by the next call that
     * observes its stream: the synchronizing calls and the queries too (their flags, ENC_F_WAITS
     * and ENC_F_POLLS, once kept them from it), never a call whose own success the program acts on. */
    static const char *const reports[] = {"cuStreamSynchronize", "cuCtxSynchronize", "cuStreamQuery", "cuMemcpyDtoH",
                                          "cuMemcpy", "cuStreamWaitValue32", "cuLaunchHostFunc"};
    static const char *const keeps[] = {"cuStreamBeginCapture", "cuStreamEndCapture", "cuStreamDestroy",
                                        "cuModuleUnload", "cuCtxDestroy", "cuGraphLaunch"};
    char what[128];
    for (unsigned i = 0; i < sizeof reports / sizeof reports[0]; i++) {
        enc_policy_lookup(reports[i], &cls, &flags);
        snprintf(what, sizeof what, "%s returns a held launch's late error", reports[i]);
        CHECK(what, enc_policy_reports_pending(cls, flags));
    }
    for (unsigned i = 0; i < sizeof keeps / sizeof keeps[0]; i++) {
        enc_policy_lookup(keeps[i], &cls, &flags);
        snprintf(what, sizeof what, "%s keeps its own result", keeps[i]);
        CHECK(what, !enc_policy_reports_pending(cls, flags));
    }

    enc_interpose_init();
    CHECK("a pure query is handed out unwrapped (no cost per call)", enc_hand_out_real(entry_of("cuCtxGetCurrent")));
    CHECK("cuGetProcAddress is always handed out wrapped", !enc_hand_out_real(entry_of("cuGetProcAddress")));
    int wrapped = 1;
    for (int i = 0; i < ENC_ENTRY_COUNT; i++)
        if (enc_entry_class[i] != ENC_CLASS_PASS && enc_hand_out_real(i)) wrapped = 0;
    CHECK("launches and every entry point that flushes are always handed out wrapped", wrapped);
    CHECK("an entry point with a capture flag is handed out wrapped", !enc_hand_out_real(entry_of("cuStreamBeginCapture")));
    enc_opt.wrap_pass = 1;
    CHECK("ENCORE_WRAP_PASS=1 hands out wrappers for pure queries too", !enc_hand_out_real(entry_of("cuCtxGetCurrent")));
    enc_opt.wrap_pass = 0;

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
