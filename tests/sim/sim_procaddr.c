/* Simulated CUDA driver: cuGetProcAddress, error strings, export tables.
 *
 * cuGetProcAddress resolves a base name ("cuMemcpyHtoDAsync") plus a
 * requested CUDA version and flags to the right ABI variant
 * (cuMemcpyHtoDAsync_v2, or cuMemcpyHtoDAsync_v2_ptsz with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM). The table below lists
 * (name, version, variant) for the functions this simulator implements; each
 * entry is type-checked against cudaTypedefs.h's PFN_<name>_v<version>
 * [_ptsz|_ptds] so that the versions and signatures match the toolkit. */
#include "sim_internal.h"

#include <cudaTypedefs.h>
#include <stdlib.h>
#include <string.h>

typedef struct proc_ent {
    const char *name;
    int version;
    int per_thread;
    void *fn;
} proc_ent;

static proc_ent *g_procs;
static int g_nprocs, g_capprocs;
static pthread_once_t g_procs_once = PTHREAD_ONCE_INIT;

static void proc_add(const char *name, int version, int per_thread, void *fn) {
    if (g_nprocs == g_capprocs) {
        int ncap = g_capprocs ? g_capprocs * 2 : 256;
        proc_ent *v = realloc(g_procs, (size_t)ncap * sizeof *v);
        if (!v) return;
        g_procs = v;
        g_capprocs = ncap;
    }
    g_procs[g_nprocs++] = (proc_ent){name, version, per_thread, fn};
}

/* E: default-stream variant; T: per-thread variant (sfx ptsz/ptds) */
#define E(name, ver, fn) SIM_PROC_E(proc_add, name, ver, fn)
#define T(name, ver, sfx, fn) SIM_PROC_T(proc_add, name, ver, sfx, fn)

static void procs_init(void) {
    sim_multidev_procs(proc_add); /* several devices (sim_multidev.c) */
    E(cuGetErrorString, 6000, cuGetErrorString);
    E(cuGetErrorName, 6000, cuGetErrorName);
    E(cuInit, 2000, cuInit);
    E(cuDriverGetVersion, 2020, cuDriverGetVersion);
    E(cuGetProcAddress, 11030, cuGetProcAddress);
    E(cuGetProcAddress, 12000, cuGetProcAddress_v2);
    E(cuGetExportTable, 3000, cuGetExportTable);
    /* device */
    E(cuDeviceGet, 2000, cuDeviceGet);
    E(cuDeviceGetCount, 2000, cuDeviceGetCount);
    E(cuDeviceGetName, 2000, cuDeviceGetName);
    E(cuDeviceGetUuid, 9020, cuDeviceGetUuid);
    E(cuDeviceGetUuid, 11040, cuDeviceGetUuid_v2);
    E(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2);
    E(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute);
    E(cuDeviceComputeCapability, 2000, cuDeviceComputeCapability);
    E(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain);
    E(cuDevicePrimaryCtxRelease, 7000, cuDevicePrimaryCtxRelease);
    E(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2);
    E(cuDevicePrimaryCtxSetFlags, 7000, cuDevicePrimaryCtxSetFlags);
    E(cuDevicePrimaryCtxSetFlags, 11000, cuDevicePrimaryCtxSetFlags_v2);
    E(cuDevicePrimaryCtxReset, 7000, cuDevicePrimaryCtxReset);
    E(cuDevicePrimaryCtxReset, 11000, cuDevicePrimaryCtxReset_v2);
    E(cuDevicePrimaryCtxGetState, 7000, cuDevicePrimaryCtxGetState);
    /* context */
    E(cuCtxCreate, 2000, cuCtxCreate);
    E(cuCtxCreate, 3020, cuCtxCreate_v2);
    E(cuCtxCreate, 11040, cuCtxCreate_v3);
    E(cuCtxCreate, 12050, cuCtxCreate_v4);
    E(cuCtxDestroy, 2000, cuCtxDestroy);
    E(cuCtxDestroy, 4000, cuCtxDestroy_v2);
    E(cuCtxPushCurrent, 2000, cuCtxPushCurrent);
    E(cuCtxPushCurrent, 4000, cuCtxPushCurrent_v2);
    E(cuCtxPopCurrent, 2000, cuCtxPopCurrent);
    E(cuCtxPopCurrent, 4000, cuCtxPopCurrent_v2);
    E(cuCtxGetCurrent, 4000, cuCtxGetCurrent);
    E(cuCtxSetCurrent, 4000, cuCtxSetCurrent);
    E(cuCtxGetDevice, 2000, cuCtxGetDevice);
    E(cuCtxGetDevice, 13000, cuCtxGetDevice_v2);
    E(cuCtxSynchronize, 2000, cuCtxSynchronize);
    E(cuCtxSynchronize, 13000, cuCtxSynchronize_v2);
    E(cuCtxGetApiVersion, 3020, cuCtxGetApiVersion);
    E(cuCtxGetFlags, 7000, cuCtxGetFlags);
    E(cuCtxSetFlags, 12010, cuCtxSetFlags);
    E(cuCtxGetId, 12000, cuCtxGetId);
    E(cuCtxGetStreamPriorityRange, 5050, cuCtxGetStreamPriorityRange);
    E(cuCtxGetLimit, 3010, cuCtxGetLimit);
    E(cuCtxSetLimit, 3010, cuCtxSetLimit);
    E(cuCtxGetCacheConfig, 3020, cuCtxGetCacheConfig);
    E(cuCtxSetCacheConfig, 3020, cuCtxSetCacheConfig);
    /* memory */
    E(cuMemAlloc, 3020, cuMemAlloc_v2);
    E(cuMemFree, 3020, cuMemFree_v2);
    E(cuMemGetInfo, 3020, cuMemGetInfo_v2);
    E(cuMemAllocHost, 3020, cuMemAllocHost_v2);
    E(cuMemFreeHost, 2000, cuMemFreeHost);
    E(cuMemHostAlloc, 2020, cuMemHostAlloc);
    E(cuMemHostGetDevicePointer, 3020, cuMemHostGetDevicePointer_v2);
    E(cuMemHostGetFlags, 2030, cuMemHostGetFlags);
    E(cuMemHostRegister, 4000, cuMemHostRegister);
    E(cuMemHostRegister, 6050, cuMemHostRegister_v2);
    E(cuMemHostUnregister, 4000, cuMemHostUnregister);
    E(cuMemGetAddressRange, 3020, cuMemGetAddressRange_v2);
    E(cuMemAllocManaged, 6000, cuMemAllocManaged);
    E(cuPointerGetAttribute, 4000, cuPointerGetAttribute);
    E(cuMemAllocAsync, 11020, cuMemAllocAsync);
    T(cuMemAllocAsync, 11020, ptsz, cuMemAllocAsync_ptsz);
    E(cuMemFreeAsync, 11020, cuMemFreeAsync);
    T(cuMemFreeAsync, 11020, ptsz, cuMemFreeAsync_ptsz);
    /* copies and memsets */
    E(cuMemcpy, 4000, cuMemcpy);
    T(cuMemcpy, 7000, ptds, cuMemcpy_ptds);
    E(cuMemcpyAsync, 4000, cuMemcpyAsync);
    T(cuMemcpyAsync, 7000, ptsz, cuMemcpyAsync_ptsz);
    E(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2);
    T(cuMemcpyHtoD, 7000, ptds, cuMemcpyHtoD_v2_ptds);
    E(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2);
    T(cuMemcpyDtoH, 7000, ptds, cuMemcpyDtoH_v2_ptds);
    E(cuMemcpyDtoD, 3020, cuMemcpyDtoD_v2);
    T(cuMemcpyDtoD, 7000, ptds, cuMemcpyDtoD_v2_ptds);
    E(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2);
    T(cuMemcpyHtoDAsync, 7000, ptsz, cuMemcpyHtoDAsync_v2_ptsz);
    E(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2);
    T(cuMemcpyDtoHAsync, 7000, ptsz, cuMemcpyDtoHAsync_v2_ptsz);
    E(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2);
    T(cuMemcpyDtoDAsync, 7000, ptsz, cuMemcpyDtoDAsync_v2_ptsz);
    E(cuMemsetD8, 3020, cuMemsetD8_v2);
    T(cuMemsetD8, 7000, ptds, cuMemsetD8_v2_ptds);
    E(cuMemsetD16, 3020, cuMemsetD16_v2);
    T(cuMemsetD16, 7000, ptds, cuMemsetD16_v2_ptds);
    E(cuMemsetD32, 3020, cuMemsetD32_v2);
    T(cuMemsetD32, 7000, ptds, cuMemsetD32_v2_ptds);
    E(cuMemsetD8Async, 3020, cuMemsetD8Async);
    T(cuMemsetD8Async, 7000, ptsz, cuMemsetD8Async_ptsz);
    E(cuMemsetD16Async, 3020, cuMemsetD16Async);
    T(cuMemsetD16Async, 7000, ptsz, cuMemsetD16Async_ptsz);
    E(cuMemsetD32Async, 3020, cuMemsetD32Async);
    T(cuMemsetD32Async, 7000, ptsz, cuMemsetD32Async_ptsz);
    E(cuMemsetD2D8, 3020, cuMemsetD2D8_v2);
    T(cuMemsetD2D8, 7000, ptds, cuMemsetD2D8_v2_ptds);
    E(cuMemsetD2D8Async, 3020, cuMemsetD2D8Async);
    T(cuMemsetD2D8Async, 7000, ptsz, cuMemsetD2D8Async_ptsz);
    E(cuMemsetD2D16, 3020, cuMemsetD2D16_v2);
    T(cuMemsetD2D16, 7000, ptds, cuMemsetD2D16_v2_ptds);
    E(cuMemsetD2D16Async, 3020, cuMemsetD2D16Async);
    T(cuMemsetD2D16Async, 7000, ptsz, cuMemsetD2D16Async_ptsz);
    E(cuMemsetD2D32, 3020, cuMemsetD2D32_v2);
    T(cuMemsetD2D32, 7000, ptds, cuMemsetD2D32_v2_ptds);
    E(cuMemsetD2D32Async, 3020, cuMemsetD2D32Async);
    T(cuMemsetD2D32Async, 7000, ptsz, cuMemsetD2D32Async_ptsz);
    /* streams */
    E(cuStreamCreate, 2000, cuStreamCreate);
    E(cuStreamCreateWithPriority, 5050, cuStreamCreateWithPriority);
    E(cuStreamDestroy, 2000, cuStreamDestroy);
    E(cuStreamDestroy, 4000, cuStreamDestroy_v2);
    E(cuStreamSynchronize, 2000, cuStreamSynchronize);
    T(cuStreamSynchronize, 7000, ptsz, cuStreamSynchronize_ptsz);
    E(cuStreamQuery, 2000, cuStreamQuery);
    T(cuStreamQuery, 7000, ptsz, cuStreamQuery_ptsz);
    E(cuStreamGetFlags, 5050, cuStreamGetFlags);
    T(cuStreamGetFlags, 7000, ptsz, cuStreamGetFlags_ptsz);
    E(cuStreamGetPriority, 5050, cuStreamGetPriority);
    T(cuStreamGetPriority, 7000, ptsz, cuStreamGetPriority_ptsz);
    E(cuStreamSetAttribute, 11000, cuStreamSetAttribute);
    T(cuStreamSetAttribute, 11000, ptsz, cuStreamSetAttribute_ptsz);
    E(cuStreamGetAttribute, 11000, cuStreamGetAttribute);
    T(cuStreamGetAttribute, 11000, ptsz, cuStreamGetAttribute_ptsz);
    E(cuStreamCopyAttributes, 11000, cuStreamCopyAttributes);
    T(cuStreamCopyAttributes, 11000, ptsz, cuStreamCopyAttributes_ptsz);
    E(cuStreamGetCtx, 9020, cuStreamGetCtx);
    T(cuStreamGetCtx, 9020, ptsz, cuStreamGetCtx_ptsz);
    E(cuStreamGetCtx, 12050, cuStreamGetCtx_v2);
    T(cuStreamGetCtx, 12050, ptsz, cuStreamGetCtx_v2_ptsz);
    E(cuStreamGetId, 12000, cuStreamGetId);
    T(cuStreamGetId, 12000, ptsz, cuStreamGetId_ptsz);
    E(cuStreamGetDevice, 12080, cuStreamGetDevice);
    T(cuStreamGetDevice, 12080, ptsz, cuStreamGetDevice_ptsz);
    E(cuStreamWaitEvent, 3020, cuStreamWaitEvent);
    T(cuStreamWaitEvent, 7000, ptsz, cuStreamWaitEvent_ptsz);
    E(cuStreamAddCallback, 5000, cuStreamAddCallback);
    T(cuStreamAddCallback, 7000, ptsz, cuStreamAddCallback_ptsz);
    E(cuLaunchHostFunc, 10000, cuLaunchHostFunc);
    T(cuLaunchHostFunc, 10000, ptsz, cuLaunchHostFunc_ptsz);
    /* events */
    E(cuEventCreate, 2000, cuEventCreate);
    E(cuEventDestroy, 2000, cuEventDestroy);
    E(cuEventDestroy, 4000, cuEventDestroy_v2);
    E(cuEventRecord, 2000, cuEventRecord);
    T(cuEventRecord, 7000, ptsz, cuEventRecord_ptsz);
    E(cuEventRecordWithFlags, 11010, cuEventRecordWithFlags);
    T(cuEventRecordWithFlags, 11010, ptsz, cuEventRecordWithFlags_ptsz);
    E(cuEventQuery, 2000, cuEventQuery);
    E(cuEventSynchronize, 2000, cuEventSynchronize);
    E(cuEventElapsedTime, 2000, cuEventElapsedTime);
    E(cuEventElapsedTime, 12080, cuEventElapsedTime_v2);
    /* modules, libraries, functions, kernels */
    E(cuModuleLoad, 2000, cuModuleLoad);
    E(cuModuleLoadData, 2000, cuModuleLoadData);
    E(cuModuleLoadDataEx, 2010, cuModuleLoadDataEx);
    E(cuModuleLoadFatBinary, 2000, cuModuleLoadFatBinary);
    E(cuModuleUnload, 2000, cuModuleUnload);
    E(cuModuleGetFunction, 2000, cuModuleGetFunction);
    E(cuModuleGetGlobal, 3020, cuModuleGetGlobal_v2);
    E(cuModuleGetLoadingMode, 11070, cuModuleGetLoadingMode);
    E(cuLibraryLoadData, 12000, cuLibraryLoadData);
    E(cuLibraryLoadFromFile, 12000, cuLibraryLoadFromFile);
    E(cuLibraryUnload, 12000, cuLibraryUnload);
    E(cuLibraryGetKernel, 12000, cuLibraryGetKernel);
    E(cuLibraryGetModule, 12000, cuLibraryGetModule);
    E(cuKernelGetFunction, 12000, cuKernelGetFunction);
    E(cuKernelGetLibrary, 12050, cuKernelGetLibrary);
    E(cuKernelGetName, 12030, cuKernelGetName);
    E(cuKernelGetParamInfo, 12040, cuKernelGetParamInfo);
    E(cuKernelGetAttribute, 12000, cuKernelGetAttribute);
    E(cuKernelSetAttribute, 12000, cuKernelSetAttribute);
    E(cuKernelSetCacheConfig, 12000, cuKernelSetCacheConfig);
    E(cuFuncGetParamInfo, 12040, cuFuncGetParamInfo);
    E(cuFuncGetName, 12030, cuFuncGetName);
    E(cuFuncGetAttribute, 2020, cuFuncGetAttribute);
    E(cuFuncSetAttribute, 9000, cuFuncSetAttribute);
    E(cuFuncGetModule, 11000, cuFuncGetModule);
    E(cuFuncSetCacheConfig, 3000, cuFuncSetCacheConfig);
    E(cuFuncIsLoaded, 12040, cuFuncIsLoaded);
    E(cuFuncLoad, 12040, cuFuncLoad);
    /* launches */
    E(cuLaunchKernel, 4000, cuLaunchKernel);
    T(cuLaunchKernel, 7000, ptsz, cuLaunchKernel_ptsz);
    E(cuLaunchKernelEx, 11060, cuLaunchKernelEx);
    T(cuLaunchKernelEx, 11060, ptsz, cuLaunchKernelEx_ptsz);
    E(cuLaunchCooperativeKernel, 9000, cuLaunchCooperativeKernel);
    T(cuLaunchCooperativeKernel, 9000, ptsz, cuLaunchCooperativeKernel_ptsz);
    /* capture */
    E(cuStreamBeginCapture, 10000, cuStreamBeginCapture);
    T(cuStreamBeginCapture, 10000, ptsz, cuStreamBeginCapture_ptsz);
    E(cuStreamBeginCapture, 10010, cuStreamBeginCapture_v2);
    T(cuStreamBeginCapture, 10010, ptsz, cuStreamBeginCapture_v2_ptsz);
    E(cuStreamEndCapture, 10000, cuStreamEndCapture);
    T(cuStreamEndCapture, 10000, ptsz, cuStreamEndCapture_ptsz);
    E(cuStreamIsCapturing, 10000, cuStreamIsCapturing);
    T(cuStreamIsCapturing, 10000, ptsz, cuStreamIsCapturing_ptsz);
    E(cuStreamGetCaptureInfo, 10010, cuStreamGetCaptureInfo);
    T(cuStreamGetCaptureInfo, 10010, ptsz, cuStreamGetCaptureInfo_ptsz);
    E(cuStreamGetCaptureInfo, 11030, cuStreamGetCaptureInfo_v2);
    T(cuStreamGetCaptureInfo, 11030, ptsz, cuStreamGetCaptureInfo_v2_ptsz);
    E(cuStreamGetCaptureInfo, 12030, cuStreamGetCaptureInfo_v3);
    T(cuStreamGetCaptureInfo, 12030, ptsz, cuStreamGetCaptureInfo_v3_ptsz);
    E(cuThreadExchangeStreamCaptureMode, 10010, cuThreadExchangeStreamCaptureMode);
    /* graphs */
    E(cuGraphCreate, 10000, cuGraphCreate);
    E(cuGraphDestroy, 10000, cuGraphDestroy);
    E(cuGraphAddKernelNode, 10000, cuGraphAddKernelNode);
    E(cuGraphAddKernelNode, 12000, cuGraphAddKernelNode_v2);
    E(cuGraphAddEmptyNode, 10000, cuGraphAddEmptyNode);
    E(cuGraphAddMemsetNode, 10000, cuGraphAddMemsetNode);
    E(cuGraphAddHostNode, 10000, cuGraphAddHostNode);
    E(cuGraphAddEventRecordNode, 11010, cuGraphAddEventRecordNode);
    E(cuGraphAddEventWaitNode, 11010, cuGraphAddEventWaitNode);
    E(cuGraphEventRecordNodeGetEvent, 11010, cuGraphEventRecordNodeGetEvent);
    E(cuGraphEventWaitNodeGetEvent, 11010, cuGraphEventWaitNodeGetEvent);
    E(cuGraphGetNodes, 10000, cuGraphGetNodes);
    E(cuGraphGetRootNodes, 10000, cuGraphGetRootNodes);
    E(cuGraphNodeGetType, 10000, cuGraphNodeGetType);
    E(cuGraphNodeGetDependencies, 10000, sim_graph_node_get_dependencies);
    E(cuGraphNodeGetDependencies, 12030, cuGraphNodeGetDependencies_v2);
    E(cuGraphKernelNodeGetParams, 10000, cuGraphKernelNodeGetParams);
    E(cuGraphKernelNodeGetParams, 12000, cuGraphKernelNodeGetParams_v2);
    E(cuGraphKernelNodeSetParams, 10000, cuGraphKernelNodeSetParams);
    E(cuGraphKernelNodeSetParams, 12000, cuGraphKernelNodeSetParams_v2);
    E(cuGraphInstantiate, 10000, cuGraphInstantiate);
    E(cuGraphInstantiate, 11000, cuGraphInstantiate_v2);
    E(cuGraphInstantiateWithFlags, 11040, cuGraphInstantiateWithFlags);
    E(cuGraphInstantiateWithParams, 12000, cuGraphInstantiateWithParams);
    T(cuGraphInstantiateWithParams, 12000, ptsz, cuGraphInstantiateWithParams_ptsz);
    E(cuGraphExecDestroy, 10000, cuGraphExecDestroy);
    E(cuGraphLaunch, 10000, cuGraphLaunch);
    T(cuGraphLaunch, 10000, ptsz, cuGraphLaunch_ptsz);
    E(cuGraphUpload, 11010, cuGraphUpload);
    T(cuGraphUpload, 11010, ptsz, cuGraphUpload_ptsz);
    E(cuGraphExecKernelNodeSetParams, 10010, cuGraphExecKernelNodeSetParams);
    E(cuGraphExecKernelNodeSetParams, 12000, cuGraphExecKernelNodeSetParams_v2);
    E(cuGraphMemcpyNodeGetParams, 10000, cuGraphMemcpyNodeGetParams);
    E(cuGraphMemsetNodeGetParams, 10000, cuGraphMemsetNodeGetParams);
    E(cuGraphExecMemcpyNodeSetParams, 10020, cuGraphExecMemcpyNodeSetParams);
    E(cuGraphExecMemsetNodeSetParams, 10020, cuGraphExecMemsetNodeSetParams);
    E(cuGraphExecEventRecordNodeSetEvent, 11010, cuGraphExecEventRecordNodeSetEvent);
    E(cuGraphExecEventWaitNodeSetEvent, 11010, cuGraphExecEventWaitNodeSetEvent);
    E(cuGraphExecUpdate, 10020, cuGraphExecUpdate);
    E(cuGraphExecUpdate, 12000, cuGraphExecUpdate_v2);
}

/* Observed on driver 580 (CUDA 13.0): a name with per-thread variants asked
 * for with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM only matches those
 * variants (below their first version: VERSION_NOT_SUFFICIENT); the highest
 * version <= the requested one wins; only base names are known. */
static CUresult proc_lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *status, bool *found) {
    *found = false;
    if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_once(&g_procs_once, procs_init);
    bool pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    bool known = false, has_pt = false;
    for (int i = 0; i < g_nprocs; i++)
        if (strcmp(g_procs[i].name, symbol) == 0) {
            known = true;
            has_pt |= g_procs[i].per_thread;
        }
    int want_pt = pt && has_pt;
    const proc_ent *best = NULL;
    for (int i = 0; i < g_nprocs; i++) {
        const proc_ent *e = &g_procs[i];
        if (strcmp(e->name, symbol) != 0 || e->per_thread != want_pt || e->version > version) continue;
        if (!best || e->version > best->version) best = e;
    }
    if (best) {
        *pfn = best->fn;
        *found = true;
        if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
        return CUDA_SUCCESS;
    }
    *pfn = NULL;
    if (status) *status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_SUCCESS;
}

/* cuGetProcAddress_v2 answers CUDA_SUCCESS also for a symbol it does not
 * find (*pfn = NULL, the status says why), as the real driver does; the v1
 * entry point, without a status, answers CUDA_ERROR_NOT_FOUND. */
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus) {
    bool found;
    return proc_lookup(symbol, pfn, cudaVersion, flags, symbolStatus, &found);
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags) {
    bool found;
    CUresult rc = proc_lookup(symbol, pfn, cudaVersion, flags, NULL, &found);
    return rc ? rc : found ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId) {
    (void)pExportTableId;
    if (ppExportTable) *ppExportTable = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* ------------------------------------------------------------------------ */
/* error names and strings                                                  */
/* ------------------------------------------------------------------------ */
typedef struct err_ent { CUresult code; const char *name; } err_ent;
#define X(e) {e, #e},
static const err_ent g_errs[] = {
    X(CUDA_SUCCESS) X(CUDA_ERROR_INVALID_VALUE) X(CUDA_ERROR_OUT_OF_MEMORY) 
    X(CUDA_ERROR_NOT_INITIALIZED) X(CUDA_ERROR_DEINITIALIZED) X(CUDA_ERROR_PROFILER_DISABLED) 
    X(CUDA_ERROR_PROFILER_NOT_INITIALIZED) X(CUDA_ERROR_PROFILER_ALREADY_STARTED) X(CUDA_ERROR_PROFILER_ALREADY_STOPPED) 
    X(CUDA_ERROR_STUB_LIBRARY) X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER) X(CUDA_ERROR_DEVICE_UNAVAILABLE) 
    X(CUDA_ERROR_NO_DEVICE) X(CUDA_ERROR_INVALID_DEVICE) X(CUDA_ERROR_DEVICE_NOT_LICENSED) 
    X(CUDA_ERROR_INVALID_IMAGE) X(CUDA_ERROR_INVALID_CONTEXT) X(CUDA_ERROR_CONTEXT_ALREADY_CURRENT) 
    X(CUDA_ERROR_MAP_FAILED) X(CUDA_ERROR_UNMAP_FAILED) X(CUDA_ERROR_ARRAY_IS_MAPPED) 
    X(CUDA_ERROR_ALREADY_MAPPED) X(CUDA_ERROR_NO_BINARY_FOR_GPU) X(CUDA_ERROR_ALREADY_ACQUIRED) 
    X(CUDA_ERROR_NOT_MAPPED) X(CUDA_ERROR_NOT_MAPPED_AS_ARRAY) X(CUDA_ERROR_NOT_MAPPED_AS_POINTER) 
    X(CUDA_ERROR_ECC_UNCORRECTABLE) X(CUDA_ERROR_UNSUPPORTED_LIMIT) X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE) 
    X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED) X(CUDA_ERROR_INVALID_PTX) X(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT) 
    X(CUDA_ERROR_NVLINK_UNCORRECTABLE) X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND) X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION) 
    X(CUDA_ERROR_JIT_COMPILATION_DISABLED) X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY) X(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC) 
    X(CUDA_ERROR_CONTAINED) X(CUDA_ERROR_INVALID_SOURCE) X(CUDA_ERROR_FILE_NOT_FOUND) 
    X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND) X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED) X(CUDA_ERROR_OPERATING_SYSTEM) 
    X(CUDA_ERROR_INVALID_HANDLE) X(CUDA_ERROR_ILLEGAL_STATE) X(CUDA_ERROR_LOSSY_QUERY) 
    X(CUDA_ERROR_NOT_FOUND) X(CUDA_ERROR_NOT_READY) X(CUDA_ERROR_ILLEGAL_ADDRESS) 
    X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) X(CUDA_ERROR_LAUNCH_TIMEOUT) X(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING) 
    X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED) X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE) 
    X(CUDA_ERROR_CONTEXT_IS_DESTROYED) X(CUDA_ERROR_ASSERT) X(CUDA_ERROR_TOO_MANY_PEERS) 
    X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED) X(CUDA_ERROR_HARDWARE_STACK_ERROR) 
    X(CUDA_ERROR_ILLEGAL_INSTRUCTION) X(CUDA_ERROR_MISALIGNED_ADDRESS) X(CUDA_ERROR_INVALID_ADDRESS_SPACE) 
    X(CUDA_ERROR_INVALID_PC) X(CUDA_ERROR_LAUNCH_FAILED) X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) 
    X(CUDA_ERROR_TENSOR_MEMORY_LEAK) X(CUDA_ERROR_NOT_PERMITTED) X(CUDA_ERROR_NOT_SUPPORTED) 
    X(CUDA_ERROR_SYSTEM_NOT_READY) X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) 
    X(CUDA_ERROR_MPS_CONNECTION_FAILED) X(CUDA_ERROR_MPS_RPC_FAILURE) X(CUDA_ERROR_MPS_SERVER_NOT_READY) 
    X(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED) X(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED) X(CUDA_ERROR_MPS_CLIENT_TERMINATED) 
    X(CUDA_ERROR_CDP_NOT_SUPPORTED) X(CUDA_ERROR_CDP_VERSION_MISMATCH) X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) 
    X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) X(CUDA_ERROR_STREAM_CAPTURE_MERGE) X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED) 
    X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED) X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION) X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) 
    X(CUDA_ERROR_CAPTURED_EVENT) X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD) X(CUDA_ERROR_TIMEOUT) 
    X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) X(CUDA_ERROR_EXTERNAL_DEVICE) X(CUDA_ERROR_INVALID_CLUSTER_SIZE) 
    X(CUDA_ERROR_FUNCTION_NOT_LOADED) X(CUDA_ERROR_INVALID_RESOURCE_TYPE) X(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION) 
    X(CUDA_ERROR_KEY_ROTATION) X(CUDA_ERROR_UNKNOWN) };
#undef X

static const struct { CUresult code; const char *text; } g_texts[] = {
    {CUDA_SUCCESS, "no error"},
    {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
    {CUDA_ERROR_FILE_NOT_FOUND, "file not found"},
    {CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"},
    {CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state"},
    {CUDA_ERROR_NOT_FOUND, "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "device not ready"},
    {CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped"},
    {CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region"},
    {CUDA_ERROR_NOT_SUPPORTED, "operation not supported"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture"},
    {CUDA_ERROR_STREAM_CAPTURE_MERGE, "operation would result in a merge of separate capture sequences"},
    {CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "capture was not ended in the same stream as it began"},
    {CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "capturing stream has unjoined work"},
    {CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "dependency created on uncaptured work in another stream"},
    {CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "operation would make the legacy stream depend on a capturing blocking stream"},
    {CUDA_ERROR_CAPTURED_EVENT, "operation not permitted on an event last recorded in a capturing stream"},
    {CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "attempt to terminate a thread-local capture sequence from another thread"},
    {CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"},
    {CUDA_ERROR_UNKNOWN, "unknown error"},
};

CUresult cuGetErrorName(CUresult error, const char **pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof g_errs / sizeof g_errs[0]; i++)
        if (g_errs[i].code == error) {
            *pStr = g_errs[i].name;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof g_texts / sizeof g_texts[0]; i++)
        if (g_texts[i].code == error) {
            *pStr = g_texts[i].text;
            return CUDA_SUCCESS;
        }
    return cuGetErrorName(error, pStr); /* known code without a text: its name */
}
