#!/usr/bin/env bash
# pkg.wheel_installs_and_runs_launcher: README's pip lines, run as given in
# a copy of the source tree: `pip install .` into a fresh virtual environment,
# then a wheel built once and installed offline into another; each installed
# `encore` command (and `python -m encore`) runs a program on the simulated
# driver and prints encore's report; the wheel carries LICENSE. Everything
# happens in a scratch directory and throwaway virtual environments. Skips
# (77, one line) when scikit-build-core cannot be had (offline, no PyPI).
# Usage: test_pkg_wheel.sh SOURCE-ROOT SIM-DIR PROGRAM VERSION
set -u
root=$1 sim=$2 prog=$3 version=$4
. "$(dirname "$0")/pkg_common.sh"

PIP_LINE='pip install .'
WHEEL_LINE='pip wheel --no-deps -w dist .'
OFFLINE_LINE='pip install --no-index dist/encore_cuda-*.whl'
for l in "$PIP_LINE" "$WHEEL_LINE" "$OFFLINE_LINE"; do
    readme_has "$l" || { echo "FAIL README.md lacks the install line: $l"; exit 1; }
done
ok "wheel: README gives the pip lines this test runs"

py=$(command -v python3) || skip "no python3"
"$py" -m venv --help >/dev/null 2>&1 || skip "python3 has no venv module (apt-get install python3-venv)"
tmp=$(mktemp -d /tmp/encore-wheel-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

export PIP_CACHE_DIR=$tmp/pip-cache PIP_DISABLE_PIP_VERSION_CHECK=1 # nothing kept in ~/.cache
"$py" -m venv "$tmp/probe" >/dev/null || skip "cannot create a virtual environment"
if ! timeout 120 "$tmp/probe/bin/pip" download -q --timeout 15 --retries 1 --no-deps -d "$tmp/probe-dl" scikit-build-core >"$tmp/probe.log" 2>&1; then
    skip "offline: scikit-build-core (the wheel's build backend) cannot be downloaded; the wheel is not tested"
fi

# a clean copy of the sources (no build directories): dist/ goes there
mkdir -p "$tmp/src"
tar -C "$root" --exclude='./build*' --exclude=./.git --exclude=./dist -cf - . | tar -C "$tmp/src" -xf -
export SKBUILD_BUILD_DIR=$tmp/skbuild # both pip builds share one CMake build directory

"$py" -m venv "$tmp/a"
out=$(cd "$tmp/src" && PATH=$tmp/a/bin:$PATH && eval "$PIP_LINE" 2>&1)
check "wheel: '$PIP_LINE' into a fresh virtual environment" "$?" "$(tail -20 <<<"$out")"
run_installed "wheel (pip install .)" "$tmp/a/bin/encore"
run_installed "wheel (python -m encore)" "$tmp/a/bin/python" -m encore
lib=$("$tmp/a/bin/python" -c 'import encore; print(encore.library_path())')
check "wheel: libencore.so inside the package needs nothing but libc" \
    "$([ -f "$lib" ] && ! ldd "$lib" | grep -v -E 'linux-vdso|libc\.so|ld-linux|libdl\.so|libpthread\.so' | grep -q .; echo $?)" \
    "$(ldd "$lib" 2>&1)"

lic=$("$tmp/a/bin/python" - <<'PY' 2>&1
import importlib.metadata as m
d = m.distribution("encore-cuda")
files = [str(f) for f in d.files or [] if "LICENSE" in str(f)]
text = "".join(f.locate().read_text() for f in d.files or [] if str(f).endswith("LICENSE"))
print("ok" if files and "MIT License" in text and "MIT" in (d.metadata.get("License") or "") + " ".join(d.metadata.get_all("Classifier") or []) else "missing: %s" % files)
PY
)
check "wheel: the installed package carries LICENSE in its metadata" "$([ "$lic" = ok ]; echo $?)" "$lic"

out=$(cd "$tmp/src" && PATH=$tmp/a/bin:$PATH && eval "$WHEEL_LINE" 2>&1)
check "wheel: '$WHEEL_LINE' builds a wheel" "$?" "$(tail -20 <<<"$out")"
"$py" -m venv "$tmp/b"
out=$(cd "$tmp/src" && PATH=$tmp/b/bin:$PATH && eval "$OFFLINE_LINE" 2>&1)
check "wheel: '$OFFLINE_LINE' installs it offline into another fresh environment" "$?" "$(tail -20 <<<"$out")"
run_installed "wheel (offline)" "$tmp/b/bin/encore"
finish
