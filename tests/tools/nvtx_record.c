/* A stand-in NVTX tool for tests: loaded by the NVTX v3 headers through
 * NVTX_INJECTION64_PATH (as Nsight Systems' is), it records every range
 * pushed and popped, one line each, to the file NVTX_RECORD_FILE:
 *   push <tid> <message>
 *   pop <tid>
 * Each line is one write(2) on an O_APPEND descriptor. */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fd = -1;

static void put(const char *what, const char *msg) {
    char b[512];
    int n = snprintf(b, sizeof b, "%s %ld%s%s\n", what, (long)syscall(SYS_gettid), msg ? " " : "", msg ? msg : "");
    if (fd >= 0 && n > 0) (void)!write(fd, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

static int NVTX_API push_a(const char *msg) {
    put("push", msg);
    return 0;
}

static int NVTX_API pop(void) {
    put("pop", NULL);
    return 0;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
    const char *path = getenv("NVTX_RECORD_FILE");
    if (!path) return 0;
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = 0;
    unsigned int size = 0;
    if (fd < 0 || !cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || !table) return 0;
    if (size > NVTX_CBID_CORE_RangePushA) *table[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)push_a;
    if (size > NVTX_CBID_CORE_RangePop) *table[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)pop;
    put("init", NULL);
    return 1;
}
