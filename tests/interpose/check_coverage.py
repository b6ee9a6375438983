#!/usr/bin/env python3
"""Coverage of the generated hooks against the installed CUDA headers.

1. every PFN_<name>_v<version>[_ptsz|_ptds] typedef in cudaTypedefs.h has a
   variant wrapper in the generated table;
2. every function the toolkit's stub libcuda.so exports is exported by
   libencore.so (so -lcuda programs and dlsym callers reach a wrapper);
3. libencore.so exports nothing but CUDA driver names and dlsym.
"""
import argparse, os, re, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("--cuda-include", required=True)
ap.add_argument("--cc", default="cc")
ap.add_argument("--generated", required=True)
ap.add_argument("--lib", required=True)
a = ap.parse_args()

failed = passed = 0
def check(name, ok, detail=""):
    global failed, passed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if ok: passed += 1
    else: failed += 1

pp = subprocess.run([a.cc, "-E", "-P", "-D__CUDA_API_VERSION_INTERNAL", "-I", a.cuda_include, "-x", "c", "-"],
                    input="#include <cudaTypedefs.h>\n", capture_output=True, text=True, check=True).stdout
typedefs = set(re.findall(r"\(\s*(?:CUDAAPI\s*)?\*\s*(PFN_cu\w+)\s*\)", pp))
generated = open(a.generated).read()
wrapped = set(re.findall(r'"(PFN_cu\w+)"', generated))
missing = sorted(typedefs - wrapped)
check("every PFN typedef of cudaTypedefs.h (%d) has a wrapper" % len(typedefs), not missing and len(typedefs) > 300,
      ", ".join(missing[:10]))

def dynsyms(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    return set(l.split()[-1].split("@")[0] for l in out.splitlines() if l.strip())

stub = os.path.join(os.path.dirname(a.cuda_include.rstrip("/")), "lib64", "stubs", "libcuda.so")
ours = dynsyms(a.lib)
if os.path.exists(stub):
    stub_syms = set(s for s in dynsyms(stub) if s.startswith("cu"))
    missing = sorted(stub_syms - ours)
    check("every export of the stub libcuda (%d) is exported by libencore.so" % len(stub_syms), not missing,
          ", ".join(missing[:10]))
else:
    print("skip stub libcuda comparison: %s not found" % stub)
extra = sorted(s for s in ours if not (s.startswith("cu") or s == "dlsym"))
check("libencore.so exports only CUDA driver names and dlsym", not extra, ", ".join(extra[:10]))
check("libencore.so exports dlsym, cuGetProcAddress and cuGetProcAddress_v2",
      {"dlsym", "cuGetProcAddress", "cuGetProcAddress_v2"} <= ours)

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
