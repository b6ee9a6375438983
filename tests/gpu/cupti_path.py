"""Where the pip nvidia CUPTI is (the one PyTorch brings): for the GPU tests' audit (run_gpu_test.py)
and the per-step breakdown's tracer (tests/bench/breakdown.py). Standard library only."""
import glob
import os
import re
import site
import sys


def pip_cupti():
    """The libcupti of the pip nvidia packages, newest major first (.so.13 before .so.12), the
    shortest name first within one; None if there is none."""
    dirs = []
    try:
        dirs += site.getsitepackages()
    except Exception:
        pass
    try:
        dirs.append(site.getusersitepackages())
    except Exception:
        pass
    dirs += [p for p in sys.path if p.endswith("-packages")]
    found = []
    for d in dict.fromkeys(dirs):
        for pat in ("nvidia/cu13/lib/libcupti.so*", "nvidia/cuda_cupti/lib/libcupti.so*", "nvidia/*/lib/libcupti.so*"):
            found += glob.glob(os.path.join(d, pat))
    found = [f for f in dict.fromkeys(found) if os.path.isfile(f)]
    found.sort(key=lambda f: (-int((re.search(r"\.so\.(\d+)", f) or [0, 0])[1]), len(f)))
    return found[0] if found else None
