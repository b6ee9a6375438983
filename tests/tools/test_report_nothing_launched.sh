#!/usr/bin/env bash
# tools.launcher_report_says_nothing_launched: `encore --report` on a process
# that loaded encore but launched no kernel prints one line saying so (before,
# it printed nothing, and a user could not tell whether encore was loaded):
# a program that makes no CUDA call (true), one that only calls cuInit (on the
# simulated driver), the same with --report-file; the helper processes such a
# program starts stay silent; a program that launches still gets the table.
# Usage: test_report_nothing_launched.sh LAUNCHER LIBENCORE SIM-DIR PROGRAM
set -u
launcher=$1 lib=$2 sim=$3 prog=$4
passed=0 failed=0
check() { if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "ok   $1"; else failed=$((failed + 1)); echo "FAIL $1"; printf '     %s\n' "${3:-}"; fi; }
line='^encore report \(pid [0-9]+, version [^)]+\): encore was loaded; this process launched no kernels, so there is nothing to report$'
tmp=$(mktemp -d /tmp/encore-nothing-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

out=$("$launcher" --lib "$lib" --report -- true 2>&1)
check "report: 'encore --report -- true' prints the one line" \
    "$([ "$(wc -l <<<"$out")" = 1 ] && grep -Eq "$line" <<<"$out"; echo $?)" "$out"
out=$(LD_LIBRARY_PATH=$sim "$launcher" --lib "$lib" --report -- python3 -c \
    'import ctypes; assert ctypes.CDLL("libcuda.so.1").cuInit(0) == 0' 2>&1)
check "report: a program that only calls cuInit prints the one line" \
    "$([ "$(wc -l <<<"$out")" = 1 ] && grep -Eq "$line" <<<"$out"; echo $?)" "$out"
"$launcher" --lib "$lib" --report-file "$tmp/r.txt" -- true
check "report: --report-file gets the line" "$(grep -Eq "$line" "$tmp/r.txt"; echo $?)" "$(cat "$tmp/r.txt" 2>&1)"
out=$("$launcher" --lib "$lib" --report -- bash -c '/bin/true; /bin/true; exit 0' 2>&1)
check "report: the helpers a program starts stay silent (one line, the program's)" \
    "$([ "$(grep -Ec "$line" <<<"$out")" = 1 ]; echo $?)" "$out"
out=$("$launcher" --lib "$lib" -- true 2>&1)
check "report: without --report nothing is printed" "$([ -z "$out" ]; echo $?)" "$out"
out=$(LD_LIBRARY_PATH=$sim "$launcher" --lib "$lib" --report -- "$prog" 20 2>&1 >/dev/null)
check "report: a program that launches gets the table, not the line" \
    "$(grep -q "^encore report (pid" <<<"$out" && grep -Eq "kernel launches seen +[1-9]" <<<"$out" &&
       ! grep -q "launched no kernels" <<<"$out"; echo $?)" "$out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
