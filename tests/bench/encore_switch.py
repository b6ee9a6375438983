"""encore's in-process switch, from Python (ctypes; no other dependency).

encore answers cuGetProcAddress for "encoreSetActive" (a name the real driver
never has) with CUresult fn(int active): set_active(False) issues everything
encore holds and lets launches pass straight through (only counted) from then
on; set_active(True) resumes learning and replay, keeping what was learnt.
Benchmarks alternate blocks of the two in one process, so that the
process-to-process noise cancels out of the ratio.

    import encore_switch
    encore_switch.available()     # True only with libencore.so preloaded
    encore_switch.set_active(False)
    encore_switch.set_active(True)

Without encore preloaded (or on a machine without libcuda) the look-up fails
and set_active does nothing. The look-up asks libcuda.so.1 for
cuGetProcAddress_v2 (or cuGetProcAddress) through dlsym, which encore
interposes, so the call reaches encore's hook; it creates no CUDA context.
"""
import ctypes

_fn = None
_looked = False


def _lookup():
    try:
        lib = ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return None
    fn = ctypes.c_void_p()
    for name in ("cuGetProcAddress_v2", "cuGetProcAddress"):
        try:
            gpa = getattr(lib, name)
        except AttributeError:
            continue
        gpa.restype = ctypes.c_int
        if name.endswith("_v2"):
            status = ctypes.c_int(0)
            gpa.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64,
                            ctypes.POINTER(ctypes.c_int)]
            r = gpa(b"encoreSetActive", ctypes.byref(fn), 12000, 0, ctypes.byref(status))
        else:
            gpa.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64]
            r = gpa(b"encoreSetActive", ctypes.byref(fn), 12000, 0)
        if r == 0 and fn.value:
            return ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(fn.value)
    return None


def _get():
    global _fn, _looked
    if not _looked:
        _fn = _lookup()
        _looked = True
    return _fn


def available():
    """True when encore is preloaded and answers the switch."""
    return _get() is not None


def set_active(active):
    """Switch encore on (True) or off (False); a no-op without encore. Raises on a CUDA error."""
    fn = _get()
    if fn is None:
        return
    r = fn(1 if active else 0)
    if r != 0:
        raise RuntimeError(f"encoreSetActive({int(bool(active))}) returned CUDA error {r}")
