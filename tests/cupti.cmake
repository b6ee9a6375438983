# CUPTI for the test-only tools that dlopen libcupti (tests/gpu: the audit and calltrace;
# tests/bench: the timeline tracer): its header, and where the toolkit keeps the library (the
# path is baked in as the tools' default; each can be pointed at another one at run time).
# Sets ENCORE_CUPTI_INCLUDE_DIR (cached; NOTFOUND without cupti.h) and ENCORE_CUPTI_LIBRARY_PATH
# ("" when not found). Included by each directory that needs it: the lookup is cached, the
# path variable is per directory.
if(NOT CUDAToolkit_FOUND)
  find_package(CUDAToolkit QUIET)
endif()
find_path(ENCORE_CUPTI_INCLUDE_DIR NAMES cupti.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include
        $ENV{CUDA_HOME}/include $ENV{CUDA_HOME}/extras/CUPTI/include
        /usr/local/cuda/include /usr/local/cuda/extras/CUPTI/include)
set(ENCORE_CUPTI_LIBRARY_PATH "")
if(TARGET CUDA::cupti)
  get_target_property(_cupti_loc CUDA::cupti IMPORTED_LOCATION)
  if(_cupti_loc)
    set(ENCORE_CUPTI_LIBRARY_PATH ${_cupti_loc})
  endif()
endif()
if(NOT ENCORE_CUPTI_LIBRARY_PATH)
  find_library(ENCORE_CUPTI_LIBRARY NAMES cupti
    HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64
          $ENV{CUDA_HOME}/lib64 $ENV{CUDA_HOME}/extras/CUPTI/lib64
          /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64)
  if(ENCORE_CUPTI_LIBRARY)
    set(ENCORE_CUPTI_LIBRARY_PATH ${ENCORE_CUPTI_LIBRARY})
  endif()
endif()
