#!/usr/bin/env python3
"""Tests of scripts/check-includes on small synthetic source trees.

Usage: test_check_includes.py [path/to/check-includes]
Prints one line per behaviour and "N passed, N failed". A tree with a cycle or
a layer violation must give exit status 1 exactly (a crash of the checker
gives 3, a usage error 2) and name the problem.
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "scripts", "check-includes")
from checks import check, finish


def run_tree(files):
    """Write {path: text} into a fresh directory and run the checker on it."""
    with tempfile.TemporaryDirectory() as d:
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
            with open(os.path.join(d, path), "wb") as fh:
                fh.write(text if isinstance(text, bytes) else text.encode())
        p = subprocess.run([sys.executable, TOOL, "--root", d], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


def inc(*names):
    return "".join(f'#include "{n}"\n' for n in names)


CLEAN = {
    "base/log.h": "#include <stdarg.h>\n",
    "base/log.c": inc("base/log.h"),
    "base/enums.h": "",
    "policy/options.h": inc("base/enums.h"),
    "policy/options.c": inc("policy/options.h", "base/log.h"),
    "core/stats.h": inc("base/enums.h"),
    "core/report.c": inc("core/stats.h", "policy/options.h", "base/log.h", "cuda.h"),
    "interpose/hooks.c": inc("core/stats.h", "policy/options.h", "base/log.h", "hooks_gen.h"),
}

rc, out = run_tree(CLEAN)
check("check-includes: a tree in layer order without cycles passes (exit 0)", rc == 0 and "no cycles" in out,
      f"rc={rc} {out}")

rc, out = run_tree({**CLEAN, "base/a.h": inc("base/b.h"), "base/b.h": inc("base/a.h")})
check("check-includes: a cycle between two files fails with exit 1 and names it",
      rc == 1 and "include cycle between files: base/a.h -> base/b.h -> base/a.h" in out, f"rc={rc} {out}")

rc, out = run_tree({**CLEAN, "core/a.h": inc("core/b.h"), "core/b.h": inc("core/c.h"), "core/c.h": inc("core/a.h")})
check("check-includes: a longer cycle is named in include order",
      rc == 1 and "core/a.h -> core/b.h -> core/c.h -> core/a.h" in out, f"rc={rc} {out}")

rc, out = run_tree({**CLEAN, "core/self.h": inc("core/self.h")})
check("check-includes: a file including itself is a cycle",
      rc == 1 and "core/self.h -> core/self.h" in out, f"rc={rc} {out}")

rc, out = run_tree({**CLEAN, "base/x.h": inc("y.h"), "base/y.h": inc("x.h")})
check("check-includes: an include is looked for next to the including file first",
      rc == 1 and "base/x.h -> base/y.h -> base/x.h" in out, f"rc={rc} {out}")

rc, out = run_tree({**CLEAN, "policy/bad.h": inc("core/stats.h")})
check("check-includes: policy/ including core/ breaks the layer order (exit 1, named)",
      rc == 1 and "layer order: policy/bad.h includes core/stats.h" in out, f"rc={rc} {out}")

rc, out = run_tree({**CLEAN, "base/bad.c": inc("policy/options.h")})
check("check-includes: base/ includes nothing of the others",
      rc == 1 and "layer order: base/bad.c includes policy/options.h" in out, f"rc={rc} {out}")

rc, out = run_tree({**CLEAN, "core/x.c": inc("interpose/hooks.h"), "interpose/hooks.h": ""})
check("check-includes: core/ including interpose/ breaks the layer order",
      rc == 1 and "layer order: core/x.c includes interpose/hooks.h" in out, f"rc={rc} {out}")

rc, out = run_tree({**CLEAN, "core/gen.c": inc("hooks_gen.h")})
check("check-includes: the generated hooks_gen.h counts as interpose/",
      rc == 1 and "core/gen.c includes interpose/hooks_gen.h" in out, f"rc={rc} {out}")

rc, out = run_tree({**CLEAN, "core/x.c": inc("policy/p.h"), "policy/p.h": "", "policy/q.c": inc("core/y.h"),
                    "core/y.h": ""})
check("check-includes: a cycle between folders is named with the includes that make it",
      rc == 1 and "include cycle between folders: core -> policy -> core (core/" in out
      and "; policy/q.c includes core/y.h)" in out, f"rc={rc} {out}")

rc, out = run_tree({**CLEAN, "base/c.h": "/* #include \"core/stats.h\"\n   #include \"policy/options.h\" */\n"})
check("check-includes: includes inside comments are not includes", rc == 0, f"rc={rc} {out}")

rc, out = run_tree({**CLEAN, "base/bin.c": b"\xff\xfe binary \x00 junk\n#include \"base/log.h\"\n"})
check("check-includes: odd bytes in a source file do not crash it", rc == 0, f"rc={rc} {out}")

# core/'s floors, top to bottom: core/path, core/streams, core/graphs, core/state, core/observe.
FLOORS = {
    "core/observe/stats.h": inc("base/enums.h"),
    "core/observe/stats.c": inc("core/observe/stats.h") + "int enc_stats_count;\nvoid enc_stats_add(int n) {}\n",
    "core/state/gate.h": inc("core/observe/stats.h"),
    "core/graphs/graphs.h": inc("core/state/gate.h"),
    "core/graphs/replay.c": inc("core/graphs/graphs.h") + "void enc_release(void) { enc_stats_add(1); }\n",
    "core/streams/streams.h": inc("core/graphs/graphs.h"),
    "core/streams/stream.c": inc("core/streams/streams.h") + "void enc_stream_end(void) { enc_release(); }\n",
    "core/path/launch.c": inc("core/streams/streams.h") + "void enc_core_launch(void) { enc_stream_end(); }\n",
}
FLAT = {k: v for k, v in CLEAN.items() if not k.startswith(("core/", "interpose/"))}
FLAT["interpose/hooks.c"] = inc("core/observe/stats.h", "policy/options.h", "base/log.h", "hooks_gen.h")
rc, out = run_tree({**FLAT, **FLOORS})
check("check-includes: floors calling and including downwards pass", rc == 0 and "core/path -> core/streams" in out,
      f"rc={rc} {out}")

rc, out = run_tree({**FLAT, **FLOORS, "core/graphs/bad.c": inc("core/streams/streams.h")})
check("check-includes: a floor including a header of a floor above it fails, named",
      rc == 1 and "layer order: core/graphs/bad.c includes core/streams/streams.h, but core/graphs/ is below "
      "core/streams/" in out, f"rc={rc} {out}")

rc, out = run_tree({**FLAT, **FLOORS,
                    "core/observe/bad.c": inc("core/observe/stats.h") + "void f(void) { enc_release(); }\n"})
check("check-includes: a call from a lower floor to a higher one fails, naming the function and both files",
      rc == 1 and "call against the layer order: core/observe/bad.c uses enc_release of core/graphs/replay.c" in out,
      f"rc={rc} {out}")

rc, out = run_tree({**FLAT, **FLOORS, "core/state/gate.h": inc("core/observe/stats.h") + "int enc_stream_end2;\n",
                    "core/state/bad.c": "/* enc_core_launch() */ static const char *s = \"enc_core_launch\";\n"
                                        "void enc_x(void) { enum enc_core_launch k; (void)k; }\n"})
check("check-includes: names in comments, strings and enum tags are not calls", rc == 0, f"rc={rc} {out}")

rc, out = run_tree({**FLAT, **FLOORS, "core/loose.c": ""})
check("check-includes: a file directly in core/ once it has floors is named",
      rc == 1 and "floors: core/loose.c is directly in core/" in out, f"rc={rc} {out}")

with tempfile.TemporaryDirectory() as d:
    p = subprocess.run([sys.executable, TOOL, "--root", d], capture_output=True, text=True)
    check("check-includes: a root without the layer folders is a usage error (exit 2)", p.returncode == 2,
          f"rc={p.returncode} {p.stdout}{p.stderr}")

finish()
