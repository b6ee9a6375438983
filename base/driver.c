/* encore: finding the real driver.
 *
 * The real dlsym comes from glibc by version (dlvsym), since encore's own
 * dlsym is the one the program sees. The real libcuda is dlopen'ed by name
 * on first need, never at load time (encore is preloaded into every process
 * of a program, compilers included). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "base/driver.h"
#include "base/guard.h"
#include "base/log.h"

enc_driver enc_drv;

static void *libcuda_handle;
static pthread_once_t libcuda_once = PTHREAD_ONCE_INIT;
static uintptr_t libcuda_base;

static void open_libcuda(void) {
    ENC_GUARDED {
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (!h) h = dlopen("libcuda.so.1", RTLD_LAZY);
        if (!h) h = dlopen("libcuda.so", RTLD_LAZY);
        if (h) {
            void *init = enc_real_dlsym(h, "cuInit");
            Dl_info info;
            if (init && dladdr(init, &info)) libcuda_base = (uintptr_t)info.dli_fbase;
        }
        __atomic_store_n(&libcuda_handle, h, __ATOMIC_RELEASE);
    }
}

void *enc_libcuda(void) {
    pthread_once(&libcuda_once, open_libcuda);
    return libcuda_handle;
}

int enc_in_libcuda(const void *addr) {
    Dl_info info;
    if (!addr || !dladdr(addr, &info) || !info.dli_fname) return 0;
    if (libcuda_base && (uintptr_t)info.dli_fbase == libcuda_base) return 1;
    const char *slash = strrchr(info.dli_fname, '/');
    const char *base = slash ? slash + 1 : info.dli_fname;
    return strncmp(base, "libcuda.so", 10) == 0;
}

#define ENC_RESOLVE(field, name, version)                                                                           \
    do {                                                                                                            \
        void *p_ = NULL;                                                                                            \
        CUdriverProcAddressQueryResult q_;                                                                          \
        if (gpa(name, &p_, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q_) != CUDA_SUCCESS || !p_) missing = name; \
        memcpy(&enc_drv.field, &p_, sizeof p_);                                                                     \
    } while (0)

/* The entry points encore can do without (each names what it loses); the last missing one, or NULL. */
static const char *resolve_optional(PFN_cuGetProcAddress_v12000 gpa) {
    const char *missing = NULL;
    /* Optional: parameter layout and names (without them launches run eagerly). */
    ENC_RESOLVE(funcGetParamInfo, "cuFuncGetParamInfo", 12040);
    ENC_RESOLVE(kernelGetParamInfo, "cuKernelGetParamInfo", 12040);
    ENC_RESOLVE(funcGetName, "cuFuncGetName", 12030);
    ENC_RESOLVE(kernelGetName, "cuKernelGetName", 12030);
    ENC_RESOLVE(funcGetAttribute, "cuFuncGetAttribute", 2020);
    ENC_RESOLVE(kernelGetAttribute, "cuKernelGetAttribute", 12000);
    ENC_RESOLVE(ctxGetDevice, "cuCtxGetDevice", 2000);
    ENC_RESOLVE(deviceGetAttribute, "cuDeviceGetAttribute", 2000);
    ENC_RESOLVE(funcGetModule, "cuFuncGetModule", 11000);
    ENC_RESOLVE(kernelGetLibrary, "cuKernelGetLibrary", 12050);
    ENC_RESOLVE(kernelGetFunction, "cuKernelGetFunction", 12000);
    ENC_RESOLVE(libraryGetModule, "cuLibraryGetModule", 12000);
    ENC_RESOLVE(streamDestroy, "cuStreamDestroy", 4000);
    ENC_RESOLVE(eventDestroy, "cuEventDestroy", 4000);
    ENC_RESOLVE(graphGetNodes, "cuGraphGetNodes", 10000);
    ENC_RESOLVE(graphNodeGetDependencies, "cuGraphNodeGetDependencies", 10000);
    ENC_RESOLVE(graphNodeGetDependenciesEdges, "cuGraphNodeGetDependencies", 12030);
    /* a driver older than 12.3 answers the 12030 query with the only one it has */
    if ((void *)enc_drv.graphNodeGetDependenciesEdges == (void *)enc_drv.graphNodeGetDependencies)
        enc_drv.graphNodeGetDependenciesEdges = NULL;
    ENC_RESOLVE(graphNodeGetType, "cuGraphNodeGetType", 10000);
    ENC_RESOLVE(graphKernelNodeGetParams, "cuGraphKernelNodeGetParams", 10000);
    ENC_RESOLVE(graphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams", 10010);
    ENC_RESOLVE(graphMemcpyNodeGetParams, "cuGraphMemcpyNodeGetParams", 10000);
    ENC_RESOLVE(graphExecMemcpyNodeSetParams, "cuGraphExecMemcpyNodeSetParams", 10020);
    ENC_RESOLVE(graphMemsetNodeGetParams, "cuGraphMemsetNodeGetParams", 10000);
    ENC_RESOLVE(graphExecMemsetNodeSetParams, "cuGraphExecMemsetNodeSetParams", 10020);
    ENC_RESOLVE(graphExecEventRecordNodeSetEvent, "cuGraphExecEventRecordNodeSetEvent", 11010);
    ENC_RESOLVE(graphExecEventWaitNodeSetEvent, "cuGraphExecEventWaitNodeSetEvent", 11010);
    ENC_RESOLVE(devicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState", 7000);
    ENC_RESOLVE(devicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000);
    ENC_RESOLVE(devicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 11000);
    ENC_RESOLVE(streamGetAttribute, "cuStreamGetAttribute", 11000);
    ENC_RESOLVE(eventRecordWithFlags, "cuEventRecordWithFlags", 11010);
    ENC_RESOLVE(memcpyAsync, "cuMemcpyAsync", 4000);
    ENC_RESOLVE(memsetD8Async, "cuMemsetD8Async", 3020);
    ENC_RESOLVE(memsetD16Async, "cuMemsetD16Async", 3020);
    ENC_RESOLVE(memsetD32Async, "cuMemsetD32Async", 3020);
    ENC_RESOLVE(moduleLoadData, "cuModuleLoadData", 2000);
    ENC_RESOLVE(moduleGetFunction, "cuModuleGetFunction", 2000);
    ENC_RESOLVE(memHostAlloc, "cuMemHostAlloc", 2020);
    ENC_RESOLVE(memHostGetDevicePointer, "cuMemHostGetDevicePointer", 3020);
    ENC_RESOLVE(memFreeHost, "cuMemFreeHost", 2000);
    ENC_RESOLVE(memAlloc, "cuMemAlloc", 3020);
    ENC_RESOLVE(streamSynchronize, "cuStreamSynchronize", 2000);
    return missing;
}

int enc_driver_resolve(void) {
    if (enc_drv.launchKernel) return 0;
    void *lib = enc_libcuda();
    if (!lib) return -1;
    PFN_cuGetProcAddress_v12000 gpa;
    void *g = enc_real_dlsym(lib, "cuGetProcAddress_v2");
    if (!g) return -1;
    memcpy(&gpa, &g, sizeof g);
    const char *missing = NULL;
    const char *required_missing = NULL;
    ENC_GUARDED {
        ENC_RESOLVE(launchKernelEx, "cuLaunchKernelEx", 11060);
        ENC_RESOLVE(streamBeginCapture, "cuStreamBeginCapture", 10010);
        ENC_RESOLVE(streamEndCapture, "cuStreamEndCapture", 10000);
        ENC_RESOLVE(graphInstantiate, "cuGraphInstantiateWithFlags", 11040);
        ENC_RESOLVE(graphLaunch, "cuGraphLaunch", 10000);
        ENC_RESOLVE(graphExecDestroy, "cuGraphExecDestroy", 10000);
        ENC_RESOLVE(graphDestroy, "cuGraphDestroy", 10000);
        ENC_RESOLVE(streamCreate, "cuStreamCreate", 2000);
        ENC_RESOLVE(streamGetFlags, "cuStreamGetFlags", 5050);
        ENC_RESOLVE(streamGetCtx, "cuStreamGetCtx", 9020);
        ENC_RESOLVE(ctxGetCurrent, "cuCtxGetCurrent", 4000);
        ENC_RESOLVE(ctxPushCurrent, "cuCtxPushCurrent", 4000);
        ENC_RESOLVE(ctxPopCurrent, "cuCtxPopCurrent", 4000);
        ENC_RESOLVE(eventCreate, "cuEventCreate", 2000);
        ENC_RESOLVE(eventRecord, "cuEventRecord", 2000);
        ENC_RESOLVE(streamWaitEvent, "cuStreamWaitEvent", 3020);
        required_missing = missing;
        missing = NULL;
        const char *optional_missing = resolve_optional(gpa);
        if (optional_missing) ENC_DEBUG("the driver lacks %s", optional_missing);
        ENC_RESOLVE(launchKernel, "cuLaunchKernel", 4000); /* last: it marks success */
        enc_drv.getProcAddress = gpa;
    }
    if (missing || required_missing) {
        enc_log(ENC_LOG_WARN, "the driver lacks %s; encore passes everything through",
                missing ? missing : required_missing);
        enc_drv.launchKernel = NULL;
        return -1;
    }
    return 0;
}
