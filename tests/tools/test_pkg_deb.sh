#!/usr/bin/env bash
# pkg.deb_installs_and_runs_launcher: README's Debian lines, run as given:
# `(cd build && cpack -G DEB)` in this build directory, then `dpkg -i` of the
# package (as root: into the system, removed again afterwards; otherwise, or
# when an encore package is installed already, unpacked with dpkg -x into a
# temporary root); the installed `encore` runs a program on the simulated
# driver and prints encore's report.
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
installed=0
cleanup() {
    [ $installed = 1 ] && dpkg -r encore >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
ln -s "$build" "$tmp/build"
rm -f "$build"/encore_*.deb
# physical cd: cpack may re-run CMake's configure check, which must see the
# build directory's own path, not the link's (it would rewrite the cache)
out=$(set -o physical && cd "$tmp" && eval "$PACK_LINE" 2>&1)
check "deb: '$PACK_LINE' writes the package" "$?" "$out"
deb=$(ls "$build"/encore_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { finish; exit 1; }
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
list=$(dpkg-deb -c "$deb")
for f in ./usr/bin/encore ./usr/lib/"$ma"/libencore.so ./usr/share/doc/encore/README.md; do
    grep -q " $f\$" <<<"$list" || fail "deb: the package has $f" "$list"
done
ok "deb: the package holds /usr/bin/encore, /usr/lib/$ma/libencore.so, /usr/share/doc/encore/README.md"

if [ "$(id -u)" = 0 ] && ! dpkg -s encore >/dev/null 2>&1; then
    line=$DPKG_LINE
    command -v sudo >/dev/null || line=${line#sudo }
    out=$(cd "$tmp" && eval "$line" 2>&1)
    rc=$?
    [ $rc = 0 ] && installed=1
    check "deb: '$line' installs it" "$rc" "$out"
    check "deb: encore is on PATH" "$([ "$(command -v encore)" = /usr/bin/encore ]; echo $?)" "$(command -v encore)"
    run_installed "deb (dpkg -i)" encore
else
    dpkg -x "$deb" "$tmp/root"
    check "deb: dpkg -x unpacks it into a clean root (not root, or encore installed already)" "$?"
    run_installed "deb (dpkg -x)" "$tmp/root/usr/bin/encore"
fi
finish
