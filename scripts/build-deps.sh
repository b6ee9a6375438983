# shellcheck shell=bash
# Sourced by scripts/demo and scripts/test: how both find what the build needs.

# encore_have_xxhash [SYSTEM_DIRS]: is xxhash.h where CMake looks for it? In
# the system include directories (colon-separated; default /usr/include and
# /usr/local/include) or in CMAKE_INCLUDE_PATH.
encore_have_xxhash() {
    local d
    local -a dirs
    IFS=: read -r -a dirs <<<"${1-/usr/include:/usr/local/include}:${CMAKE_INCLUDE_PATH:-}"
    for d in "${dirs[@]}"; do [[ -n $d && -f $d/xxhash.h ]] && return 0; done
    return 1
}
