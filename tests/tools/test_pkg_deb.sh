#!/usr/bin/env bash
# pkg.deb_installs_and_runs_launcher: README's Debian lines: `(cd build && cpack
# -G DEB)` in this build directory, the package written into a private
# directory (never into build/, where the user's own package may lie), then
# unpacked with `dpkg -x` into a scratch root (never `dpkg -i`: the host's
# package database is left alone, as root too); the unpacked `encore` runs a
# program on the simulated driver and prints encore's report. Checks the
# package's contents: the licence as its copyright file, python3 among its
# dependencies (encore-log-summary), a stripped library.
# Usage: test_pkg_deb.sh SOURCE-ROOT BUILD-DIR SIM-DIR PROGRAM VERSION
set -u
root=$1 build=$2 sim=$3 prog=$4 version=$5
. "$(dirname "$0")/pkg_common.sh"

PACK_LINE='(cd build && cpack -G DEB)'
DPKG_LINE='sudo dpkg -i build/encore_*.deb'
for l in "$PACK_LINE" "$DPKG_LINE"; do
    readme_has "$l" || { echo "FAIL README.md lacks the install line: $l"; exit 1; }
done
ok "deb: README gives the lines this test runs"
command -v dpkg-deb >/dev/null || skip "no dpkg-deb here (not Debian/Ubuntu)"
command -v cpack >/dev/null || skip "no cpack"

tmp=$(mktemp -d /tmp/encore-deb-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# README's line, with the package directory moved out of build/ (-B)
out=$(cd "$build" && cpack -G DEB -B "$tmp/out" 2>&1)
check "deb: '$PACK_LINE' (with -B DIR) writes the package" "$?" "$out"
deb=$(ls "$tmp"/out/encore_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { finish; exit 1; }
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
list=$(dpkg-deb -c "$deb")
missing=""
for f in ./usr/bin/encore ./usr/bin/encore-log-summary ./usr/lib/"$ma"/libencore.so \
         ./usr/share/doc/encore/README.md ./usr/share/doc/encore/copyright; do
    grep -q " $f\$" <<<"$list" || missing="$missing $f"
done
check "deb: the package holds the launcher, the log reader, the library, README and copyright" \
    "$([ -z "$missing" ]; echo $?)" "missing:$missing"
depends=$(dpkg-deb -f "$deb" Depends)
check "deb: python3 (for encore-log-summary) is a dependency" "$(grep -Eq '(^|, )python3($|[ ,])' <<<"$depends"; echo $?)" "$depends"

dpkg -x "$deb" "$tmp/root"
check "deb: dpkg -x unpacks it into a scratch root" "$?"
check "deb: the copyright file is LICENSE" "$(cmp -s "$root/LICENSE" "$tmp/root/usr/share/doc/encore/copyright"; echo $?)"
lib="$tmp/root/usr/lib/$ma/libencore.so"
if command -v readelf >/dev/null; then
    check "deb: the library is stripped (no debug sections)" \
        "$(! readelf -S "$lib" | grep -Eq '\.debug_|\.symtab'; echo $?)" "$(readelf -S "$lib" | grep -E 'debug|symtab')"
fi
run_installed "deb (dpkg -x)" "$tmp/root/usr/bin/encore"
finish
