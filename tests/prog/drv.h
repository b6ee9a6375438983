/* The driver entry points the test programs use, as one table.
 *
 * PROG_ENTRY_POINTS(X) lists X(sym, procaddr_name, version, dlsym_name, dlsym_name_per_thread):
 *   sym                    the cuda.h identifier; a cuda.h macro (cuMemAlloc ->
 *                          cuMemAlloc_v2) expands in both the field and its type,
 *                          so `drv.cuMemAlloc(...)` reads like the cuda.h call
 *   procaddr_name          the name cudart asks cuGetProcAddress for
 *   version                the cudaVersion it asks with
 *   dlsym_name             the exported symbol (Triton-style dlsym)
 *   dlsym_name_per_thread  the exported per-thread-default-stream variant
 *
 * Never compile this with CUDA_API_PER_THREAD_DEFAULT_STREAM (that renames
 * the fields); the per-thread variants are reached through the table's
 * loading mode instead. */
#ifndef PROG_DRV_H
#define PROG_DRV_H

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "drv.h must not be compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif

#include <cuda.h>

#define PROG_ENTRY_POINTS(X)                                                                             \
    X(cuInit, "cuInit", 13000, "cuInit", "cuInit")                                                       \
    X(cuDriverGetVersion, "cuDriverGetVersion", 13000, "cuDriverGetVersion", "cuDriverGetVersion")       \
    X(cuGetErrorName, "cuGetErrorName", 13000, "cuGetErrorName", "cuGetErrorName")                       \
    X(cuDeviceGet, "cuDeviceGet", 13000, "cuDeviceGet", "cuDeviceGet")                                  \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 13000, "cuDevicePrimaryCtxRetain",          \
      "cuDevicePrimaryCtxRetain")                                                                        \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", 13000, "cuCtxSetCurrent", "cuCtxSetCurrent")                   \
    X(cuDeviceGetCount, "cuDeviceGetCount", 13000, "cuDeviceGetCount", "cuDeviceGetCount")               \
    X(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", 13000, "cuDeviceCanAccessPeer", "cuDeviceCanAccessPeer") \
    X(cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess", 13000, "cuCtxEnablePeerAccess", "cuCtxEnablePeerAccess") \
    X(cuMemcpyPeer, "cuMemcpyPeer", 13000, "cuMemcpyPeer", "cuMemcpyPeer_ptds")                          \
    X(cuMemcpyPeerAsync, "cuMemcpyPeerAsync", 13000, "cuMemcpyPeerAsync", "cuMemcpyPeerAsync_ptsz")      \
    X(cuMemcpyAsync, "cuMemcpyAsync", 13000, "cuMemcpyAsync", "cuMemcpyAsync_ptsz")                      \
    X(cuCtxGetCurrent, "cuCtxGetCurrent", 13000, "cuCtxGetCurrent", "cuCtxGetCurrent")                   \
    X(cuCtxSynchronize, "cuCtxSynchronize", 12000, "cuCtxSynchronize", "cuCtxSynchronize")               \
    X(cuCtxSynchronize_v2, "cuCtxSynchronize", 13000, "cuCtxSynchronize_v2", "cuCtxSynchronize_v2")      \
    X(cuModuleLoadData, "cuModuleLoadData", 13000, "cuModuleLoadData", "cuModuleLoadData")               \
    X(cuModuleUnload, "cuModuleUnload", 13000, "cuModuleUnload", "cuModuleUnload")                       \
    X(cuModuleGetFunction, "cuModuleGetFunction", 13000, "cuModuleGetFunction", "cuModuleGetFunction")   \
    X(cuLibraryLoadData, "cuLibraryLoadData", 13000, "cuLibraryLoadData", "cuLibraryLoadData")           \
    X(cuLibraryUnload, "cuLibraryUnload", 13000, "cuLibraryUnload", "cuLibraryUnload")                   \
    X(cuLibraryGetKernel, "cuLibraryGetKernel", 13000, "cuLibraryGetKernel", "cuLibraryGetKernel")       \
    X(cuKernelGetFunction, "cuKernelGetFunction", 13000, "cuKernelGetFunction", "cuKernelGetFunction")   \
    X(cuKernelSetAttribute, "cuKernelSetAttribute", 13000, "cuKernelSetAttribute", "cuKernelSetAttribute") \
    X(cuMemAlloc, "cuMemAlloc", 13000, "cuMemAlloc_v2", "cuMemAlloc_v2")                                 \
    X(cuMemFree, "cuMemFree", 13000, "cuMemFree_v2", "cuMemFree_v2")                                     \
    X(cuMemHostAlloc, "cuMemHostAlloc", 13000, "cuMemHostAlloc", "cuMemHostAlloc")                       \
    X(cuMemFreeHost, "cuMemFreeHost", 13000, "cuMemFreeHost", "cuMemFreeHost")                           \
    X(cuMemAllocHost, "cuMemAllocHost", 13000, "cuMemAllocHost_v2", "cuMemAllocHost_v2")                 \
    X(cuMemHostRegister, "cuMemHostRegister", 13000, "cuMemHostRegister_v2", "cuMemHostRegister_v2")     \
    X(cuMemHostUnregister, "cuMemHostUnregister", 13000, "cuMemHostUnregister", "cuMemHostUnregister")   \
    X(cuMemAllocAsync, "cuMemAllocAsync", 13000, "cuMemAllocAsync", "cuMemAllocAsync_ptsz")              \
    X(cuMemFreeAsync, "cuMemFreeAsync", 13000, "cuMemFreeAsync", "cuMemFreeAsync_ptsz")                  \
    X(cuMemGetInfo, "cuMemGetInfo", 13000, "cuMemGetInfo_v2", "cuMemGetInfo_v2")                         \
    X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer", 13000, "cuMemHostGetDevicePointer_v2",     \
      "cuMemHostGetDevicePointer_v2")                                                                    \
    X(cuMemcpyHtoD, "cuMemcpyHtoD", 13000, "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds")                    \
    X(cuMemcpyDtoH, "cuMemcpyDtoH", 13000, "cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2_ptds")                    \
    X(cuMemcpyDtoD, "cuMemcpyDtoD", 13000, "cuMemcpyDtoD_v2", "cuMemcpyDtoD_v2_ptds")                    \
    X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync", 13000, "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync_v2_ptsz") \
    X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync", 13000, "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync_v2_ptsz") \
    X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync", 13000, "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync_v2_ptsz") \
    X(cuMemsetD32, "cuMemsetD32", 13000, "cuMemsetD32_v2", "cuMemsetD32_v2_ptds")                        \
    X(cuMemsetD32Async, "cuMemsetD32Async", 13000, "cuMemsetD32Async", "cuMemsetD32Async_ptsz")          \
    X(cuMemsetD16Async, "cuMemsetD16Async", 13000, "cuMemsetD16Async", "cuMemsetD16Async_ptsz")          \
    X(cuStreamCreate, "cuStreamCreate", 13000, "cuStreamCreate", "cuStreamCreate")                       \
    X(cuStreamDestroy, "cuStreamDestroy", 13000, "cuStreamDestroy_v2", "cuStreamDestroy_v2")             \
    X(cuStreamSynchronize, "cuStreamSynchronize", 13000, "cuStreamSynchronize", "cuStreamSynchronize_ptsz") \
    X(cuStreamQuery, "cuStreamQuery", 13000, "cuStreamQuery", "cuStreamQuery_ptsz")                      \
    X(cuStreamWaitEvent, "cuStreamWaitEvent", 13000, "cuStreamWaitEvent", "cuStreamWaitEvent_ptsz")      \
    X(cuStreamBeginCapture, "cuStreamBeginCapture", 13000, "cuStreamBeginCapture_v2",                    \
      "cuStreamBeginCapture_v2_ptsz")                                                                    \
    X(cuStreamEndCapture, "cuStreamEndCapture", 13000, "cuStreamEndCapture", "cuStreamEndCapture_ptsz")  \
    X(cuStreamIsCapturing, "cuStreamIsCapturing", 13000, "cuStreamIsCapturing", "cuStreamIsCapturing_ptsz") \
    X(cuEventCreate, "cuEventCreate", 13000, "cuEventCreate", "cuEventCreate")                           \
    X(cuEventDestroy, "cuEventDestroy", 13000, "cuEventDestroy_v2", "cuEventDestroy_v2")                 \
    X(cuEventRecord, "cuEventRecord", 13000, "cuEventRecord", "cuEventRecord_ptsz")                      \
    X(cuEventSynchronize, "cuEventSynchronize", 13000, "cuEventSynchronize", "cuEventSynchronize")       \
    X(cuEventQuery, "cuEventQuery", 13000, "cuEventQuery", "cuEventQuery")                               \
    X(cuLaunchKernel, "cuLaunchKernel", 13000, "cuLaunchKernel", "cuLaunchKernel_ptsz")                  \
    X(cuLaunchKernelEx, "cuLaunchKernelEx", 13000, "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz")          \
    X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", 13000, "cuGraphInstantiateWithFlags",  \
      "cuGraphInstantiateWithFlags")                                                                     \
    X(cuGraphLaunch, "cuGraphLaunch", 13000, "cuGraphLaunch", "cuGraphLaunch_ptsz")                      \
    X(cuGraphExecDestroy, "cuGraphExecDestroy", 13000, "cuGraphExecDestroy", "cuGraphExecDestroy")       \
    X(cuGraphDestroy, "cuGraphDestroy", 13000, "cuGraphDestroy", "cuGraphDestroy")       \
    X(cuGraphCreate, "cuGraphCreate", 13000, "cuGraphCreate", "cuGraphCreate")                          \
    X(cuGraphAddKernelNode, "cuGraphAddKernelNode", 13000, "cuGraphAddKernelNode_v2",                    \
      "cuGraphAddKernelNode_v2")                                                                         \
    X(cuGraphAddEventRecordNode, "cuGraphAddEventRecordNode", 13000, "cuGraphAddEventRecordNode",        \
      "cuGraphAddEventRecordNode")                                                                       \
    X(cuGraphAddEventWaitNode, "cuGraphAddEventWaitNode", 13000, "cuGraphAddEventWaitNode",              \
      "cuGraphAddEventWaitNode")                                                                         \
    X(cuGraphUpload, "cuGraphUpload", 13000, "cuGraphUpload", "cuGraphUpload_ptsz")                      \
    X(cuEventRecordWithFlags, "cuEventRecordWithFlags", 13000, "cuEventRecordWithFlags",                 \
      "cuEventRecordWithFlags_ptsz")                                                                     \
    X(cuFuncSetAttribute, "cuFuncSetAttribute", 13000, "cuFuncSetAttribute", "cuFuncSetAttribute")           \
    X(cuFuncGetAttribute, "cuFuncGetAttribute", 13000, "cuFuncGetAttribute", "cuFuncGetAttribute")           \
    X(cuStreamCreateWithPriority, "cuStreamCreateWithPriority", 13000, "cuStreamCreateWithPriority",        \
      "cuStreamCreateWithPriority")                                                                      \
    X(cuStreamGetPriority, "cuStreamGetPriority", 13000, "cuStreamGetPriority", "cuStreamGetPriority_ptsz") \
    X(cuStreamSetAttribute, "cuStreamSetAttribute", 13000, "cuStreamSetAttribute", "cuStreamSetAttribute_ptsz") \
    X(cuStreamCopyAttributes, "cuStreamCopyAttributes", 13000, "cuStreamCopyAttributes",                  \
      "cuStreamCopyAttributes_ptsz")                                                                     \
    X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset", 13000, "cuDevicePrimaryCtxReset_v2",            \
      "cuDevicePrimaryCtxReset_v2")                                                                      \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 13000, "cuDevicePrimaryCtxRelease_v2",      \
      "cuDevicePrimaryCtxRelease_v2")                                                                    \
    X(cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode", 13000,                       \
      "cuThreadExchangeStreamCaptureMode", "cuThreadExchangeStreamCaptureMode")                          \
    X(cuLaunchHostFunc, "cuLaunchHostFunc", 13000, "cuLaunchHostFunc", "cuLaunchHostFunc_ptsz")

struct prog_drv {
#define PROG_DRV_FIELD(sym, pname, ver, dname, dname_pt) __typeof__(sym) *sym;
    PROG_ENTRY_POINTS(PROG_DRV_FIELD)
#undef PROG_DRV_FIELD
};

/* How the table is filled:
 *   PROG_ACCESS_PROCADDR       cudart-style: dlopen libcuda.so.1, dlsym cuGetProcAddress_v2, ask it for
 *                              "cuGetProcAddress", then every entry point through that (flags 0)
 *   PROG_ACCESS_PROCADDR_PTDS  the same with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
 *   PROG_ACCESS_DLSYM          Triton-style: dlopen + dlsym of every exported name
 *   PROG_ACCESS_DLSYM_PTSZ     the same with the _ptsz/_ptds exports */
enum prog_access {
    PROG_ACCESS_PROCADDR,
    PROG_ACCESS_PROCADDR_PTDS,
    PROG_ACCESS_DLSYM,
    PROG_ACCESS_DLSYM_PTSZ,
};

extern struct prog_drv drv;

/* Fills `drv`; exits with a message naming the entry point on failure. */
void prog_drv_load(enum prog_access how);
/* Fills another table (a program may hold a per-thread-stream table beside `drv`). */
void prog_drv_load_into(struct prog_drv *table, enum prog_access how);
/* Parses "procaddr", "procaddr-ptds", "dlsym", "dlsym-ptsz"; exits on anything else. */
enum prog_access prog_access_parse(const char *s);

#endif
