"""encore: replays repeating CUDA kernel launch sequences as CUDA graphs.

This package carries libencore.so and the `encore` launcher. Run a program
with encore through the console command (or `python -m encore`):

    encore --report -- python train.py

`library_path()` gives libencore.so's path, for setting LD_PRELOAD by hand.
"""
import os

__all__ = ["library_path", "launcher_path", "__version__"]

_HERE = os.path.dirname(os.path.abspath(__file__))

try:
    from importlib.metadata import version as _version

    __version__ = _version("encore-cuda")
except Exception:  # not installed as a distribution (a source tree)
    __version__ = "unknown"


def library_path():
    """The path of this package's libencore.so."""
    return os.path.join(_HERE, "lib", "libencore.so")


def launcher_path():
    """The path of the launcher script the `encore` command runs."""
    return os.path.join(_HERE, "bin", "encore")
