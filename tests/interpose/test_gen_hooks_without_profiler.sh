#!/usr/bin/env bash
# scripts/gen_hooks.py against a CUDA include directory without cudaProfiler.h
# (as pip's CUDA runtime packages ship it): the generated hooks must not
# include it, and must compile.
# Usage: test_gen_hooks_without_profiler.sh PYTHON CUDA_INCLUDE CC XXHASH_INCLUDE
set -u
python=$1 cuda=$2 cc=$3 xxh=$4
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)
tmp=$(mktemp -d /tmp/encore-genhooks-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/include" "$tmp/gen"
for f in "$cuda"/*; do
    [ "${f##*/}" = cudaProfiler.h ] || ln -s "$f" "$tmp/include/${f##*/}"
done
"$python" "$root/scripts/gen_hooks.py" --cuda-include "$tmp/include" --cc "$cc" --out "$tmp/gen" ||
    { echo "FAIL gen_hooks.py failed without cudaProfiler.h"; exit 1; }
if grep -n "cudaProfiler.h" "$tmp/gen/hooks_gen.c"; then
    echo "FAIL the generated hooks include cudaProfiler.h, which is not there"; exit 1
fi
"$cc" -std=gnu11 -fsyntax-only -D__CUDA_API_VERSION_INTERNAL=1 -I "$root" -I "$tmp/gen" -I "$tmp/include" -I "$xxh" "$tmp/gen/hooks_gen.c" ||
    { echo "FAIL the generated hooks do not compile without cudaProfiler.h"; exit 1; }
echo "ok   gen_hooks: a CUDA include directory without cudaProfiler.h gives hooks that compile"
