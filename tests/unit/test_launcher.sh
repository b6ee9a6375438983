#!/usr/bin/env bash
# Tests of scripts/encore (the launcher), with `env` as the program and small
# stand-in libencore.so files built here with the C compiler (they do nothing).
# Usage: test_launcher.sh [path/to/scripts/encore] [cc]
# Prints one line per behaviour and "N passed, N failed".
set -u

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)
launcher=${1:-$root/scripts/encore}
cc=${2:-${CC:-cc}}
tmp=$(mktemp -d /tmp/encore-launcher-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && printf '     %s\n' "$2"; }
# check NAME COND-STATUS [DETAIL]
check() { if [ "$2" -eq 0 ]; then ok "$1"; else fail "$1" "${3:-}"; fi; }

mklib() { # mklib PATH
    mkdir -p "$(dirname "$1")"
    echo 'int encore_test_dummy_symbol;' >"$tmp/dummy.c"
    "$cc" -shared -fPIC -o "$1" "$tmp/dummy.c" || { echo "cannot build a test library with $cc"; exit 1; }
}

lib=$tmp/testlib/libencore.so
other=$tmp/other/libother.so
mklib "$lib"
mklib "$other"

# run the launcher with a clean environment plus the given assignments
# (before --) and arguments (after); output in $out, status in $rc
run() {
    local -a assigns=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do assigns+=("$1"); shift; done
    shift
    out=$(env -i PATH="$PATH" HOME="${HOME:-/tmp}" ${assigns[@]+"${assigns[@]}"} "$launcher" "$@" 2>&1)
    rc=$?
}
has() { grep -qxF -- "$2" <<<"$1"; }

# --- help and usage errors ----------------------------------------------------------
run -- --help
missing=""
for f in --off --min-repeats --max-sequence --min-sequence --max-graphs --deadline --include --exclude --report \
         --report-file --log --log-level --print-config --stats --nvtx --lib --version --help Examples ENCORE_BUILD_DIR; do
    grep -q -- "$f" <<<"$out" || missing="$missing $f"
done
check "launcher: --help exits 0 and documents every flag" "$([ $rc -eq 0 ] && [ -z "$missing" ]; echo $?)" "rc=$rc missing:$missing"

run -- -h
check "launcher: -h is --help" "$([ $rc -eq 0 ] && grep -q "^Usage:" <<<"$out"; echo $?)"

run -- --lib "$lib"
check "launcher: no program -> exit 2 with a message" "$([ $rc -eq 2 ] && grep -q "no program given" <<<"$out"; echo $?)" "rc=$rc $out"

run -- --lib "$lib" --
check "launcher: '--' and no program -> exit 2" "$([ $rc -eq 2 ]; echo $?)" "rc=$rc"

run -- --lib "$lib" --frobnicate -- env
check "launcher: unknown option -> exit 2" "$([ $rc -eq 2 ] && grep -q "unknown option --frobnicate" <<<"$out"; echo $?)" "rc=$rc $out"

run -- --lib "$lib" --min-repeats
check "launcher: option without its value -> exit 2" "$([ $rc -eq 2 ] && grep -q -- "missing value for --min-repeats" <<<"$out"; echo $?)" "rc=$rc $out"

# '--' (or the next option) is not taken as the value: every flag that takes one says so
for f in --min-repeats --max-sequence --min-sequence --max-graphs --deadline --include --exclude --report-file \
         --log --log-level --lib --max-chunk --min-chunk; do
    run -- --lib "$lib" "$f" -- env
    check "launcher: $f -- prog -> exit 2, missing value" \
        "$([ $rc -eq 2 ] && grep -q -- "missing value for $f" <<<"$out" && ! grep -q "^ENCORE" <<<"$out"; echo $?)" "rc=$rc $out"
done
run -- --lib "$lib" --max-sequence --report -- env
check "launcher: --max-sequence --report -> exit 2, missing value" \
    "$([ $rc -eq 2 ] && grep -q -- "missing value for --max-sequence" <<<"$out"; echo $?)" "rc=$rc $out"

run -- --lib "$tmp/nope/libencore.so" -- env
check "launcher: --lib to a missing file -> exit 2" "$([ $rc -eq 2 ] && grep -q "no such file" <<<"$out"; echo $?)" "rc=$rc $out"

mkdir -p "$tmp/lonely"
cp "$launcher" "$tmp/lonely/encore"
launcher_saved=$launcher
launcher=$tmp/lonely/encore
run -- -- env
check "launcher: libencore.so not found -> exit 2 listing where it looked" "$([ $rc -eq 2 ] && grep -q "cannot find libencore.so" <<<"$out" && grep -q "lonely/libencore.so" <<<"$out"; echo $?)" "rc=$rc $out"
run ENCORE_BUILD_DIR="$tmp/empty" -- -- env
check "launcher: ENCORE_BUILD_DIR without the library -> exit 2" "$([ $rc -eq 2 ] && grep -q "ENCORE_BUILD_DIR=.* has no libencore.so" <<<"$out"; echo $?)" "rc=$rc $out"
launcher=$launcher_saved

run -- --lib "$lib" -- no-such-program-xyz
check "launcher: program not found -> exit 127" "$([ $rc -eq 127 ] && grep -q "no-such-program-xyz: program not found" <<<"$out"; echo $?)" "rc=$rc $out"
run -- --lib "$lib" -- "$tmp/no-such-dir/prog"
check "launcher: a path that does not exist -> exit 127" "$([ $rc -eq 127 ] && grep -q "prog: program not found" <<<"$out"; echo $?)" "rc=$rc $out"
echo 'not a program' >"$tmp/plain.txt"
run -- --lib "$lib" -- "$tmp/plain.txt"
check "launcher: a file that is not executable -> exit 126, 'not executable'" \
    "$([ $rc -eq 126 ] && grep -q "plain.txt: not executable$" <<<"$out"; echo $?)" "rc=$rc $out"
run -- --lib "$lib" -- "$tmp"
check "launcher: a directory -> exit 126, 'not executable (a directory)'" \
    "$([ $rc -eq 126 ] && grep -q "not executable (a directory)" <<<"$out"; echo $?)" "rc=$rc $out"

# --- exit status and arguments pass through ----------------------------------------------
for code in 0 1 7 42 255; do
    run -- --lib "$lib" -- sh -c "exit $code"
    check "launcher: exit status $code passes through" "$([ $rc -eq "$code" ]; echo $?)" "rc=$rc"
done

# shellcheck disable=SC2016 # literal $HOME on purpose
run -- --lib "$lib" -- sh -c 'printf "%s|" "$@"' sh "a b" "" "--report" '$HOME' "*"
# shellcheck disable=SC2016
check "launcher: arguments reach the program unchanged" "$([ "$out" = 'a b||--report|$HOME|*|' ]; echo $?)" "got: $out"

run -- --lib "$lib" sh -c 'echo no-dashes'
check "launcher: the program may follow the options without --" "$([ $rc -eq 0 ] && [ "$out" = no-dashes ]; echo $?)" "rc=$rc $out"

run -- --lib "$lib" -- sh -c 'kill -TERM $$'
check "launcher: death by signal shows in the status (exec, no wrapper)" "$([ $rc -eq 143 ]; echo $?)" "rc=$rc"

# --- LD_PRELOAD ------------------------------------------------------------------------------
run -- --lib "$lib" -- env
check "launcher: LD_PRELOAD is the absolute library path" "$(has "$out" "LD_PRELOAD=$lib"; echo $?)" "$out"

run LD_PRELOAD="$other" -- --lib "$lib" -- env
check "launcher: an existing LD_PRELOAD entry is kept, encore first" "$(has "$out" "LD_PRELOAD=$lib:$other"; echo $?)" "$(grep LD_PRELOAD <<<"$out")"

run LD_PRELOAD="$other $tmp/x.so:$tmp/y.so" -- --lib "$lib" -- env
check "launcher: space- and colon-separated entries are all kept" "$(has "$out" "LD_PRELOAD=$lib:$other:$tmp/x.so:$tmp/y.so"; echo $?)" "$(grep LD_PRELOAD <<<"$out")"

run LD_PRELOAD="$other:$lib" -- --lib "$lib" -- env
check "launcher: the library is not preloaded twice" "$(has "$out" "LD_PRELOAD=$lib:$other"; echo $?)" "$(grep LD_PRELOAD <<<"$out")"

(cd "$tmp" && env -i PATH="$PATH" "$launcher" --lib testlib/libencore.so -- env) >"$tmp/rel.out" 2>&1
check "launcher: a relative --lib is made absolute" "$(grep -qxF "LD_PRELOAD=$lib" "$tmp/rel.out"; echo $?)" "$(cat "$tmp/rel.out")"

run LD_PRELOAD="*" -- --lib "$lib" -- env
check "launcher: LD_PRELOAD entries are not glob-expanded" "$(has "$out" "LD_PRELOAD=$lib:*"; echo $?)" "$(grep LD_PRELOAD <<<"$out")"

# --- finding the library -------------------------------------------------------------------------
mkdir -p "$tmp/prefix/bin"
cp "$launcher" "$tmp/prefix/bin/encore"
mklib "$tmp/prefix/lib/libencore.so"
launcher=$tmp/prefix/bin/encore
run -- -- env
check "launcher: installed layout <prefix>/bin/encore finds <prefix>/lib/libencore.so" "$(has "$out" "LD_PRELOAD=$tmp/prefix/lib/libencore.so"; echo $?)" "$out"
rm "$tmp/prefix/lib/libencore.so"
mklib "$tmp/prefix/lib64/libencore.so"
run -- -- env
check "launcher: installed layout with lib64" "$(has "$out" "LD_PRELOAD=$tmp/prefix/lib64/libencore.so"; echo $?)" "$out"
ln -s "$tmp/prefix/bin/encore" "$tmp/encore-link"
launcher=$tmp/encore-link
run -- -- env
check "launcher: found through a symlink to the installed script" "$(has "$out" "LD_PRELOAD=$tmp/prefix/lib64/libencore.so"; echo $?)" "$out"

mkdir -p "$tmp/src/scripts"
cp "$launcher_saved" "$tmp/src/scripts/encore"
mklib "$tmp/src/build/libencore.so"
launcher=$tmp/src/scripts/encore
run -- -- env
check "launcher: source tree scripts/encore finds <source>/build/libencore.so" "$(has "$out" "LD_PRELOAD=$tmp/src/build/libencore.so"; echo $?)" "$out"
mklib "$tmp/src/build-debug/libencore.so"
run ENCORE_BUILD_DIR="$tmp/src/build-debug" -- -- env
check "launcher: ENCORE_BUILD_DIR picks another build directory" "$(has "$out" "LD_PRELOAD=$tmp/src/build-debug/libencore.so"; echo $?)" "$out"
run ENCORE_BUILD_DIR="$tmp/src/build-debug" -- --lib "$lib" -- env
check "launcher: --lib wins over ENCORE_BUILD_DIR" "$(has "$out" "LD_PRELOAD=$lib"; echo $?)" "$out"

mkdir -p "$tmp/bt"
cp "$launcher_saved" "$tmp/bt/encore"
mklib "$tmp/bt/libencore.so"
launcher=$tmp/bt/encore
run -- -- env
check "launcher: a copy inside a build directory uses the library next to it" "$(has "$out" "LD_PRELOAD=$tmp/bt/libencore.so"; echo $?)" "$out"
launcher=$launcher_saved

# --- every flag sets its variable ------------------------------------------------------------------
flag_case() { # flag_case "FLAGS..." "VAR=VALUE" [more VAR=VALUE]
    local flags=$1
    shift
    # shellcheck disable=SC2086
    run -- --lib "$lib" $flags -- env
    local want miss=""
    for want in "$@"; do has "$out" "$want" || miss="$miss $want"; done
    check "launcher: $flags sets $*" "$([ $rc -eq 0 ] && [ -z "$miss" ]; echo $?)" "missing:$miss"
}
flag_case "--off" "ENCORE=0"
flag_case "--min-repeats 5" "ENCORE_MIN_REPEATS=5"
flag_case "--max-sequence 64" "ENCORE_MAX_SEQUENCE=64"
flag_case "--min-sequence 3" "ENCORE_MIN_SEQUENCE=3"
flag_case "--max-graphs 16" "ENCORE_MAX_GRAPHS=16"
flag_case "--deadline 2ms" "ENCORE_FLUSH_DEADLINE=2ms"
flag_case "--include gemm*,relu*" "ENCORE_INCLUDE=gemm*,relu*"
flag_case "--exclude *nccl*" "ENCORE_EXCLUDE=*nccl*"
flag_case "--report" "ENCORE_REPORT=1"
flag_case "--nvtx" "ENCORE_NVTX=1"
flag_case "--report-file r-%p.txt" "ENCORE_REPORT_FILE=r-%p.txt" "ENCORE_REPORT=1"
flag_case "--log run-%p.jsonl" "ENCORE_LOG=run-%p.jsonl"
flag_case "--log-level debug" "ENCORE_LOG_LEVEL=debug"
flag_case "--print-config" "ENCORE_PRINT_CONFIG=1"
flag_case "--stats" "ENCORE_STATS=1"
flag_case "--min-repeats=7 --deadline=1s --log=x.jsonl" "ENCORE_MIN_REPEATS=7" "ENCORE_FLUSH_DEADLINE=1s" "ENCORE_LOG=x.jsonl"

run -- --lib "$lib" --max-chunk 64 --min-chunk=3 -- env
check "launcher: the deprecated --max-chunk and --min-chunk set the new variables, one warning each naming both" \
    "$(has "$out" "ENCORE_MAX_SEQUENCE=64" && has "$out" "ENCORE_MIN_SEQUENCE=3" &&
       [ "$(grep -c "is deprecated" <<<"$out")" -eq 2 ] &&
       has "$out" "encore: --max-chunk is deprecated; it is now called --max-sequence" &&
       has "$out" "encore: --min-chunk is deprecated; it is now called --min-sequence" &&
       ! grep -q CHUNK <<<"$out"; echo $?)" "$out"

run -- --lib "$lib" --include "a b,c" -- env
check "launcher: values with spaces are kept whole" "$(has "$out" "ENCORE_INCLUDE=a b,c"; echo $?)" "$out"

run ENCORE_MAX_GRAPHS=9 ENCORE_REPORT=1 -- --lib "$lib" --max-graphs 3 -- env
check "launcher: flags override the environment, other variables are kept" "$(has "$out" "ENCORE_MAX_GRAPHS=3" && has "$out" "ENCORE_REPORT=1"; echo $?)" "$out"

run -- --lib "$lib" -- env
check "launcher: no flags, no ENCORE_ variables" "$(! grep -q "^ENCORE" <<<"$out"; echo $?)" "$out"

run -- --lib "$lib" --min-repeats abc -- env
check "launcher: values are passed as given (encore itself warns)" "$(has "$out" "ENCORE_MIN_REPEATS=abc"; echo $?)" "$out"

# --version: the version the library found carries ("encore-version X.Y.Z"), no program needed
vlib=$tmp/vlib/libencore.so
mkdir -p "$tmp/vlib"
echo 'const char encore_tag[] = "encore-version 9.8.7";' >"$tmp/v.c"
"$cc" -shared -fPIC -o "$vlib" "$tmp/v.c"
run -- --lib "$vlib" --version
check "launcher: --version prints the library's version" \
    "$([ $rc -eq 0 ] && grep -q "^encore 9.8.7 ($vlib)$" <<<"$out"; echo $?)" "rc=$rc $out"
run -- --lib "$lib" --version
check "launcher: --version of a library without one says unknown" \
    "$([ $rc -eq 0 ] && grep -q "^encore unknown " <<<"$out"; echo $?)" "rc=$rc $out"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
