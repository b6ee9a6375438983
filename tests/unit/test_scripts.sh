#!/usr/bin/env bash
# Tests of scripts/test and scripts/demo that run no build: usage, the shared
# check of the build tools (it names what is missing and installs nothing),
# and the flags scripts/test configures with (a stand-in cmake records them). Usage: test_scripts.sh [source root]
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
    "$([ $rc -eq 0 ] && grep -q -- "--full" <<<"$out" && [ ! -s "$tmp/cmake.args" ]; echo $?)" "rc=$rc $out"
run "$tmp/src/scripts/test" --quik
check "scripts/test with an unknown flag: exit 2 naming it, builds nothing" \
    "$([ $rc -eq 2 ] && grep -q -- "unknown argument '--quik'" <<<"$out" && [ ! -s "$tmp/cmake.args" ]; echo $?)" "rc=$rc $out"
run "$tmp/src/scripts/test"
check "scripts/test configures with warnings as errors (-DENCORE_WERROR=ON)" \
    "$(grep -q -- "-B build .*-DENCORE_WERROR=ON" "$tmp/cmake.args"; echo $?)" "cmake args: $(cat "$tmp/cmake.args") out: $out"

# The build tools: missing ones are named with their package, nothing is installed.
# shellcheck source=scripts/build-deps.sh
. "$root/scripts/build-deps.sh"
check "build-deps: nothing missing here" "$([ -z "$(encore_missing_tools)" ]; echo $?)" "$(encore_missing_tools)"
check "build-deps: a missing compiler and cmake are named as packages" \
    "$([ "$(CC=no-such-cc PATH=/nonexistent encore_missing_tools)" = "cmake make gcc python3" ]; echo $?)" \
    "$(CC=no-such-cc PATH=/nonexistent encore_missing_tools)"
mkdir -p "$tmp/nocmake"
for t in cc make python3 bash sed id nproc dirname mkdir cat; do
    p=$(command -v "$t") && ln -sf "$p" "$tmp/nocmake/$t"
done
out=$(cd "$tmp" && env PATH="$tmp/nocmake" "$tmp/src/scripts/test" 2>&1)
rc=$?
check "scripts/test without cmake: exit 2 naming it, installs nothing" \
    "$([ $rc -eq 2 ] && grep -q "please install: cmake" <<<"$out"; echo $?)" "rc=$rc $out"
for s in test demo; do
    check "scripts/$s checks the tools through build-deps.sh and never runs apt-get" \
        "$(grep -q '^\. scripts/build-deps.sh' "$root/scripts/$s" && grep -q 'encore_missing_tools' "$root/scripts/$s" &&
           ! grep -q 'apt-get install -y' "$root/scripts/$s"; echo $?)"
done
check ".ci/run runs README's test command with --full, checked by scripts/leaves-machine-alone" \
    "$(grep -q '^exec scripts/leaves-machine-alone scripts/test --full$' "$root/.ci/run" &&
       grep -q '^scripts/test --full' "$root/README.md"; echo $?)"

# scripts/leaves-machine-alone, in a scratch tree: a command that changes nothing passes with its own
# status; one that deletes a package a user built fails, naming it.
mkdir -p "$tmp/alone/scripts"
cp "$root/scripts/leaves-machine-alone" "$tmp/alone/scripts/"
out=$("$tmp/alone/scripts/leaves-machine-alone" true 2>&1); rc=$?
check "leaves-machine-alone: a command that changes nothing passes" \
    "$([ $rc -eq 0 ] && [ ! -e "$tmp/alone/build/encore_0.0.0-user-sentinel_all.deb" ]; echo $?)" "rc=$rc $out"
out=$("$tmp/alone/scripts/leaves-machine-alone" false 2>&1); rc=$?
check "leaves-machine-alone: the command's failure is its status" "$([ $rc -eq 1 ]; echo $?)" "rc=$rc $out"
out=$("$tmp/alone/scripts/leaves-machine-alone" sh -c 'rm -f build/encore_*.deb' 2>&1); rc=$?
check "leaves-machine-alone: a command that deletes a user's built package fails, naming it" \
    "$([ $rc -eq 1 ] && grep -q 'encore_0.0.0-user-sentinel_all.deb' <<<"$out"; echo $?)" "rc=$rc $out"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
