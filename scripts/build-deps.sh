# shellcheck shell=bash
# Sourced by scripts/demo and scripts/test: what the build needs, checked
# without installing anything. xxhash.h needs no package: CMake falls back to
# the copy in third_party/xxhash.

# encore_missing_tools: print the Debian/Ubuntu packages of the missing build
# tools (cmake, make, a C compiler, python3), space-separated; nothing if none.
encore_missing_tools() {
    local -a need=()
    command -v cmake >/dev/null || need+=(cmake)
    command -v make >/dev/null || command -v ninja >/dev/null || need+=(make)
    command -v "${CC:-cc}" >/dev/null || need+=(gcc)
    command -v python3 >/dev/null || need+=(python3)
    printf '%s' "${need[*]}"
}

# encore_have_cuda_headers [NVCC]: are the CUDA toolkit headers where CMake looks?
encore_have_cuda_headers() {
    [[ -f /usr/local/cuda/include/cudaTypedefs.h || -n "${CUDA_HOME:-}" || -n "${CUDA_PATH:-}" || -n "${1:-}" ]] ||
        command -v nvcc >/dev/null
}
