# shellcheck shell=bash
# Sourced by test_pkg_wheel.sh and test_pkg_deb.sh: checks in the style of
# tests/unit (one "ok"/"FAIL" line each), README's install lines, and a run of
# an installed launcher against the simulated driver.
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && printf '     %s\n' "$2"; }
check() { if [ "$2" -eq 0 ]; then ok "$1"; else fail "$1" "${3:-}"; fi; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; }
skip() { echo "SKIP: $*"; exit 77; }

# readme_has LINE: README.md has LINE (as a line, or followed by spaces and a # comment).
readme_has() {
    local l
    while IFS= read -r l; do
        l=${l%%  #*}
        l=${l%"${l##*[![:space:]]}"}
        [ "$l" = "$1" ] && return 0
    done <"$root/README.md"
    return 1
}

# run_installed NAME ENCORE-COMMAND...: run the launcher on the hot-loop program
# (simulated driver), with --report, and with --off --report; check both reports.
run_installed() {
    local name=$1
    shift
    local out
    out=$(LD_LIBRARY_PATH=$sim "$@" --report -- "$prog" 100 2>&1 >/dev/null)
    check "$name: the launcher runs the program with encore and prints the report" \
        "$(grep -q "^encore report (pid [0-9]*, version $version)" <<<"$out" &&
            grep -Eq "replayed through graphs +[1-9][0-9,]* " <<<"$out"; echo $?)" "$out"
    out=$(LD_LIBRARY_PATH=$sim "$@" --off --report -- "$prog" 100 2>&1 >/dev/null)
    check "$name: --off --report still counts launches and replays none" \
        "$(grep -Eq "kernel launches seen +502$" <<<"$out" &&
            grep -Eq "replayed through graphs +0 " <<<"$out"; echo $?)" "$out"
    out=$("$@" --version 2>&1)
    check "$name: --version gives CMake's project version" "$(grep -q "^encore $version (" <<<"$out"; echo $?)" "$out"
}
