#!/usr/bin/env python3
"""unit.launcher_flags_match_options_table: scripts/encore has a flag for every
row of encore's options table (policy/options.h, printed by print_options_md
--tsv), --help lists it, and the flag sets that variable: a switch --name to 1
and --no-name to 0 (the master switch ENCORE: --on, --off), a flag with a value
to that value, in both spellings (--flag VALUE, --flag=VALUE).

Usage: test_launcher_options.py PRINT_OPTIONS_MD LAUNCHER"""
import os
import subprocess
import sys
import tempfile

gen, launcher = sys.argv[1], sys.argv[2]
rows = [l.split("\t", 3) for l in subprocess.run([gen, "--tsv"], check=True, capture_output=True,
                                                  text=True).stdout.splitlines()]
passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name}" + (f"\n     {detail}" if detail else ""))


with tempfile.TemporaryDirectory() as d:
    lib = os.path.join(d, "libencore.so")  # the launcher only needs a file; env ignores the preload
    open(lib, "w").close()

    def run(*args):
        env = {"PATH": os.environ["PATH"], "HOME": d}
        p = subprocess.run([launcher, "--lib", lib, *args, "--", "env"], capture_output=True, text=True, env=env)
        return p.returncode, [l for l in p.stdout.splitlines() if l.startswith("ENCORE")], p.stderr

    helptext = subprocess.run([launcher, "--help"], capture_output=True, text=True).stdout
    check("launcher: the options table has rows", len(rows) >= 20, str(len(rows)))
    for env, typ, default, _ in rows:
        base = env[len("ENCORE_"):].lower().replace("_", "-")
        if typ == "bool":
            flags = [("--on", "1"), ("--off", "0")] if env == "ENCORE" else [("--" + base, "1"), ("--no-" + base, "0")]
            for flag, value in flags:
                rc, out, err = run(flag)
                check(f"launcher: {flag} sets {env}={value}", rc == 0 and f"{env}={value}" in out, f"rc={rc} {out} {err}")
            rc, out, err = run(f"{flags[0][0]}=0")
            check(f"launcher: {flags[0][0]}=0 sets {env}=0", rc == 0 and f"{env}=0" in out, f"rc={rc} {out} {err}")
        else:
            flags = [("--" + base, None)]
            value = {"integer": "7", "duration": "5us", "level": "info"}.get(typ, "x,y*")
            rc, out, err = run(flags[0][0], value)
            check(f"launcher: {flags[0][0]} {value} sets {env}={value}", rc == 0 and f"{env}={value}" in out,
                  f"rc={rc} {out} {err}")
            rc, out, err = run(f"{flags[0][0]}={value}")
            check(f"launcher: {flags[0][0]}={value} sets {env}", rc == 0 and f"{env}={value}" in out,
                  f"rc={rc} {out} {err}")
        missing = [f for f, _ in flags if f not in helptext]
        check(f"launcher: --help lists {', '.join(f for f, _ in flags)} with {env}",
              not missing and env in helptext, f"missing {missing}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
