#!/usr/bin/env bash
# pkg.host_state_recorded / pkg.host_state_unchanged: the CTest fixture around
# the package tests (the only tests that build and unpack packages). Before
# them, records the host's package database (/var/lib/dpkg/status, the length
# of /var/log/dpkg.log) and the user's packages in the build directory
# (build/encore_*.deb, with a sentinel package planted there); after them,
# checks that all of it is unchanged and removes the sentinel. The package
# tests run with tests/tools/shims first in PATH: dpkg -i/-r, apt-get, apt and
# sudo are refused and recorded in STATE-FILE.calls, which must stay empty. As
# root this is what shows that README's test command installs and removes
# nothing. On a shared host another process may change the package database
# meanwhile: with no such call from the tests, that is reported, not failed.
# Usage: host_state.sh record|compare BUILD-DIR STATE-FILE
set -u
mode=$1 build=$2 state=$3
sentinel="$build/encore_0.0.0-sentinel_all.deb"

snapshot() {
    local f
    for f in /var/lib/dpkg/status; do
        [ -f "$f" ] && echo "$f $(sha256sum <"$f" | cut -d' ' -f1)"
    done
    [ -f /var/log/dpkg.log ] && echo "/var/log/dpkg.log $(stat -c %s /var/log/dpkg.log) bytes"
    for f in "$build"/encore_*.deb; do
        [ -f "$f" ] && echo "$f $(sha256sum <"$f" | cut -d' ' -f1)"
    done
    echo "uid $(id -u)"
}

case "$mode" in
    record)
        echo "a package the user built; the package tests must leave it" >"$sentinel" || exit 1
        snapshot >"$state"
        : >"$state.calls"
        cat "$state"
        ;;
    compare)
        now=$(snapshot)
        [ -f "$sentinel" ] || echo "FAIL the package tests deleted $sentinel"
        rm -f "$sentinel"
        rc=0
        if [ -s "$state.calls" ]; then
            echo "FAIL the package tests tried to change the host's packages:"
            sed 's/^/     /' "$state.calls"
            rc=1
        else
            echo "ok   the package tests called no dpkg -i/-r, apt-get, apt or sudo"
        fi
        if [ "$(grep "^$build/" <<<"$now")" != "$(grep "^$build/" "$state")" ]; then
            echo "FAIL the package tests changed the build directory's packages:"
            diff <(grep "^$build/" "$state") <(grep "^$build/" <<<"$now")
            rc=1
        else
            echo "ok   the build directory's packages are unchanged"
        fi
        if [ "$(grep -v "^$build/" <<<"$now")" = "$(grep -v "^$build/" "$state")" ]; then
            echo "ok   the package database is unchanged (as uid $(id -u)):"
            grep -v "^$build/" "$state" | sed 's/^/     /'
        elif [ $rc = 0 ]; then
            echo "note the package database changed meanwhile, not by these tests (another process on this host):"
            diff <(grep -v "^$build/" "$state") <(grep -v "^$build/" <<<"$now") | sed 's/^/     /'
        else
            diff <(grep -v "^$build/" "$state") <(grep -v "^$build/" <<<"$now")
        fi
        rm -f "$state" "$state.calls"
        exit $rc
        ;;
    *) echo "usage: host_state.sh record|compare BUILD-DIR STATE-FILE" >&2; exit 2 ;;
esac
