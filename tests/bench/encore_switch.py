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

The launch-free bound in the same process (LD_PRELOAD=libskiplaunch.so:libencore.so
SKIPLAUNCH_SWITCH=1, tests/bench/skip_launch.c) answers "skiplaunchSetActive":

    encore_switch.skiplaunch_available()  # True with a switchable libskiplaunch.so
    encore_switch.set_block("B")          # a block letter's state (as encore_switch.h's encore_block_set):
                                          # P encore passive, A active, B passive and every launch skipped,
                                          # T active with ENCORE_TRIAL's settings (a trial block),
                                          # E nothing, any other letter as P
With libskiplaunch.so alone (variant launch-free) "encoreSetActive" is skiplaunch's switch.
"""
import ctypes

_fns = {}  # name -> the switch, or None where nothing answers it


def _lookup(name=b"encoreSetActive"):
    try:
        lib = ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return None
    fn = ctypes.c_void_p()
    for entry in ("cuGetProcAddress_v2", "cuGetProcAddress"):
        try:
            gpa = getattr(lib, entry)
        except AttributeError:
            continue
        gpa.restype = ctypes.c_int
        if entry.endswith("_v2"):
            status = ctypes.c_int(0)
            gpa.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64,
                            ctypes.POINTER(ctypes.c_int)]
            r = gpa(name, ctypes.byref(fn), 12000, 0, ctypes.byref(status))
        else:
            gpa.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64]
            r = gpa(name, ctypes.byref(fn), 12000, 0)
        if r == 0 and fn.value:
            return ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(fn.value)
    return None


def _get(name=b"encoreSetActive"):
    if name not in _fns:
        _fns[name] = _lookup(name)
    return _fns[name]


def available():
    """True when encore is preloaded and answers the switch."""
    return _get() is not None


def set_active(active, trial=False):
    """Switch encore on (True) or off (False), on with ENCORE_TRIAL's settings (trial=True); a no-op without
    encore. Raises on a CUDA error."""
    fn = _get()
    if fn is None:
        return
    v = (2 if trial else 1) if active else 0
    r = fn(v)
    if r != 0:
        raise RuntimeError(f"encoreSetActive({v}) returned CUDA error {r}")


def skiplaunch_available():
    """True when libskiplaunch.so is preloaded with SKIPLAUNCH_SWITCH=1 and answers its switch."""
    return _get(b"skiplaunchSetActive") is not None


def set_skipping(on):
    """libskiplaunch.so skips every kernel launch (True) or passes them on (False); raises without it."""
    fn = _get(b"skiplaunchSetActive")
    if fn is None:
        raise RuntimeError("skiplaunchSetActive: libskiplaunch.so is not preloaded with SKIPLAUNCH_SWITCH=1")
    r = fn(1 if on else 0)
    if r != 0:
        raise RuntimeError(f"skiplaunchSetActive({int(bool(on))}) returned CUDA error {r}")


def set_block(letter):
    """Encore and libskiplaunch.so in the state of block `letter`: E nothing; B encore passive, then every
    launch skipped; A skipping off, then encore active; T as A, with ENCORE_TRIAL's settings; any other letter
    skipping off, encore passive."""
    if letter == "E":
        return
    if letter == "B":
        set_active(False)
        set_skipping(True)
        return
    if skiplaunch_available():
        set_skipping(False)
    set_active(letter in "AT", trial=letter == "T")
