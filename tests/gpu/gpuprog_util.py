"""Shared helpers for encore's Python GPU test programs (tests/gpu/prog_*.py).

Every program: sets the determinism knobs before torch is imported, exits 77
(the CTest skip code) when torch, a needed package or a GPU is missing, prints
deterministic checksums to stdout (diagnostics go to stderr) and saves its
outputs with torch.save to the path given by --save, so the runner can
torch.equal the results of two runs.
"""
import argparse
import hashlib
import os
import sys

SKIP = 77


def setup_env():
    # Must happen before cuBLAS is initialised.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    os.environ.setdefault("PYTHONHASHSEED", "0")


def parse_args(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--save", default=None, help="torch.save the outputs to this path")
    return p.parse_args()


def skip(msg):
    print(f"SKIP: {msg}", file=sys.stderr)
    sys.stdout.flush()
    sys.exit(SKIP)


def import_torch():
    setup_env()
    try:
        import torch  # noqa: F401
    except Exception as e:  # ImportError, or a broken install
        skip(f"cannot import torch: {e}")
    if not torch.cuda.is_available():
        skip("torch.cuda.is_available() is False")
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True, warn_only=True)
    return torch


def tensor_bytes(t):
    t = t.detach().contiguous().cpu().reshape(-1)
    try:
        return t.numpy().tobytes()
    except Exception:  # no numpy, or a dtype numpy lacks
        import torch

        return bytes(t.view(torch.uint8).tolist())


def digest(*tensors):
    h = hashlib.sha256()
    for t in tensors:
        h.update(str(tuple(t.shape)).encode())
        h.update(str(t.dtype).encode())
        h.update(tensor_bytes(t))
    return h.hexdigest()[:16]


def save(obj, path):
    if path:
        import torch

        torch.save(obj, path)
