"""The Python tests' checks, as testhelper.h has them for C: one line per
behaviour ("ok   name" or "FAIL name" and the detail), then "N passed, N
failed" and exit status 1 if any failed."""
import sys

_count = {"passed": 0, "failed": 0}


def check(name, cond, detail=""):
    if cond:
        _count["passed"] += 1
        print(f"ok   {name}")
    else:
        _count["failed"] += 1
        print(f"FAIL {name}" + (f"\n     {detail}" if detail else ""))


def finish():
    print(f"{_count['passed']} passed, {_count['failed']} failed")
    sys.exit(1 if _count["failed"] else 0)
