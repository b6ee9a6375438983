#!/usr/bin/env bash
# Tests of scripts/test and scripts/demo that run no build: usage, the shared
# xxhash.h lookup, and the flags scripts/test configures with (a stand-in
# cmake records them). Usage: test_scripts.sh [source root]
# Prints one line per behaviour and "N passed, N failed".
set -u
root=${1:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)}
tmp=$(mktemp -d /tmp/encore-scripts-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
check() { if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "ok   $1"; else failed=$((failed + 1)); echo "FAIL $1"; [ -n "${3:-}" ] && printf '     %s\n' "$3"; fi; }

# A copy of the scripts in an empty tree, with a cmake that records its arguments and fails.
mkdir -p "$tmp/src/scripts" "$tmp/bin" "$tmp/inc"
cp "$root"/scripts/test "$root"/scripts/demo "$root"/scripts/format "$root"/scripts/build-deps.sh "$tmp/src/scripts/"
printf '#!/bin/sh\necho "$@" >>"%s/cmake.args"\nexit 1\n' "$tmp" >"$tmp/bin/cmake"
chmod +x "$tmp/bin/cmake"
: >"$tmp/cmake.args"
run() { out=$(cd "$tmp" && env PATH="$tmp/bin:$PATH" CUDA_HOME=/nonexistent "$@" 2>&1); rc=$?; }

run "$tmp/src/scripts/test" --help
check "scripts/test --help: usage, exit 0, builds nothing" \
    "$([ $rc -eq 0 ] && grep -q -- "--quick" <<<"$out" && [ ! -s "$tmp/cmake.args" ]; echo $?)" "rc=$rc $out"
run "$tmp/src/scripts/test" --quik
check "scripts/test with an unknown flag: exit 2 naming it, builds nothing" \
    "$([ $rc -eq 2 ] && grep -q -- "unknown argument '--quik'" <<<"$out" && [ ! -s "$tmp/cmake.args" ]; echo $?)" "rc=$rc $out"
run "$tmp/src/scripts/test" --quick
check "scripts/test configures with warnings as errors (-DENCORE_WERROR=ON)" \
    "$(grep -q -- "-B build .*-DENCORE_WERROR=ON" "$tmp/cmake.args"; echo $?)" "cmake args: $(cat "$tmp/cmake.args") out: $out"

# One xxhash.h lookup for both scripts: the system directories and CMAKE_INCLUDE_PATH.
# shellcheck source=scripts/build-deps.sh
. "$root/scripts/build-deps.sh"
touch "$tmp/inc/xxhash.h"
check "build-deps: xxhash.h found through CMAKE_INCLUDE_PATH" \
    "$(CMAKE_INCLUDE_PATH="$tmp/nothing:$tmp/inc" encore_have_xxhash "$tmp/empty"; echo $?)"
check "build-deps: xxhash.h found in a system directory" "$(CMAKE_INCLUDE_PATH= encore_have_xxhash "$tmp/inc"; echo $?)"
check "build-deps: xxhash.h missing everywhere" "$(! CMAKE_INCLUDE_PATH="$tmp/empty" encore_have_xxhash "$tmp/empty"; echo $?)"
for s in test demo; do
    check "scripts/$s looks for xxhash.h through build-deps.sh" \
        "$(grep -q '^\. scripts/build-deps.sh' "$root/scripts/$s" && grep -q 'encore_have_xxhash ||' "$root/scripts/$s" &&
           ! grep -q '/usr/include/xxhash.h' "$root/scripts/$s"; echo $?)"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
