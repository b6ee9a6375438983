#!/usr/bin/env python3
"""Runner for encore's real-GPU tests (CTest label "gpu").

Exits 77 (CTest's skip code here) when there is no usable GPU: no
/dev/nvidiactl, nvidia-smi fails, or cuInit fails via ctypes. Standard
library only; torch is used only in a subprocess for comparing saved tensors.

Modes
  --mode audit   run the program under the CUPTI audit alone (every launch
                 must be unseen: the audit works) and under encore + audit
                 (no launch may be unseen: every launch went through encore).
  --mode diff    run the program twice without encore (the two runs must
                 agree, else the program is nondeterministic: reported as
                 NONDET, not as an encore bug), then once with encore; stdout
                 must be byte-identical and, with --save-tensors, every saved
                 tensor bit-identical. Prints the replay fraction from the
                 ENCORE_LOG summary line.
  --mode selfcheck  run a program that plays encore's side of the audit
                 contract under the audit alone; the counts must be exact.
  --mode skip    print --reason and exit 77 (placeholder tests).

Programs whose first word ends in .py run under this interpreter
(sys.executable). Everything each run printed is kept in
<workdir>/<name>.<mode>.log; when ENCGPU_RESULTS is set, one JSON line
per test is appended there (scripts/gpu-suite builds its table from it).
"""
import argparse
import ctypes
import difflib
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cupti_path import pip_cupti  # noqa: E402  (the GPU tests' and the breakdown's one lookup)

SKIP = 77

COMPARE_SCRIPT = r"""
import json, sys
try:
    import torch
except Exception as e:
    print(json.dumps({"error": "cannot import torch: %s" % e})); sys.exit(0)

def load(p):
    try:
        return torch.load(p, map_location="cpu", weights_only=True)
    except TypeError:
        return torch.load(p, map_location="cpu")

def same_bits(a, b):
    a = a.contiguous().reshape(-1)
    b = b.contiguous().reshape(-1)
    if a.dtype.is_floating_point or a.dtype.is_complex:
        try:
            return torch.equal(a.view(torch.uint8), b.view(torch.uint8))
        except Exception:
            return False
    return False

def cmp(a, b, path, out):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            out.append("%s: tensor vs %s" % (path, type(b).__name__)); return
        if a.dtype != b.dtype or a.shape != b.shape:
            out.append("%s: dtype/shape %s%s vs %s%s" % (path, a.dtype, tuple(a.shape), b.dtype, tuple(b.shape))); return
        if torch.equal(a, b) or same_bits(a, b):
            return
        ne = (a != b)
        n = int(ne.sum())
        try:
            md = float((a.double() - b.double()).abs().max())
        except Exception:
            md = float("nan")
        out.append("%s: %d of %d elements differ, max abs diff %.3g" % (path, n, a.numel(), md)); return
    if isinstance(a, dict) and isinstance(b, dict):
        if sorted(map(str, a)) != sorted(map(str, b)):
            out.append("%s: keys %s vs %s" % (path, sorted(map(str, a)), sorted(map(str, b)))); return
        for k in a:
            cmp(a[k], b[k], "%s.%s" % (path, k), out)
        return
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            out.append("%s: length %d vs %d" % (path, len(a), len(b))); return
        for i, (x, y) in enumerate(zip(a, b)):
            cmp(x, y, "%s[%d]" % (path, i), out)
        return
    if a != b:
        out.append("%s: %r vs %r" % (path, a, b))

res = {}
ref = load(sys.argv[1])
for p in sys.argv[2:]:
    out = []
    cmp(ref, load(p), "out", out)
    res[p] = out
print(json.dumps(res))
"""


class Log:
    def __init__(self, path):
        self.f = open(path, "w") if path else None

    def __call__(self, *args, quiet=False):
        msg = " ".join(str(a) for a in args)
        if not quiet:
            print(msg, flush=True)
        if self.f:
            self.f.write(msg + "\n")
            self.f.flush()

    def block(self, title, text, limit=None):
        """Full text to the log file; the tail (limit lines) to stdout."""
        lines = text.splitlines()
        if self.f:
            self.f.write(f"----- {title} ({len(lines)} lines) -----\n{text}\n----- end {title} -----\n")
            self.f.flush()
        if limit:
            shown = lines[-limit:]
            print(f"----- {title} (last {len(shown)} of {len(lines)} lines) -----")
            for ln in shown:
                print(ln)
            print(f"----- end {title} -----", flush=True)


def gpu_problem():
    """None if a GPU is usable, else the reason it is not."""
    if not os.path.exists("/dev/nvidiactl"):
        return "no /dev/nvidiactl"
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            r = subprocess.run([smi, "-L"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=30, text=True)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"nvidia-smi failed: {e}"
        if r.returncode != 0:
            return f"nvidia-smi -L failed (rc {r.returncode}): {r.stdout.strip()[:200]}"
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return f"cannot load libcuda.so.1: {e}"
    rc = cuda.cuInit(0)
    if rc != 0:
        return f"cuInit(0) returned CUresult {rc}"
    count = ctypes.c_int(0)
    rc = cuda.cuDeviceGetCount(ctypes.byref(count))
    if rc != 0 or count.value <= 0:
        return f"no CUDA device (cuDeviceGetCount rc {rc}, count {count.value})"
    return None


def choose_cupti(args, is_python):
    if os.environ.get("ENCAUDIT_CUPTI"):
        return os.environ["ENCAUDIT_CUPTI"], "ENCAUDIT_CUPTI from the environment"
    pip = pip_cupti()
    default = args.cupti_default if args.cupti_default and os.path.exists(args.cupti_default) else None
    if is_python and pip:
        return pip, "pip package (matches torch)"
    if default:
        return default, "CUDA toolkit (found at configure time)"
    if pip:
        return pip, "pip package"
    return None, "none found; the audit tries libcupti.so.13/.12 by soname"


_CHILD = None   # the program now running (its own process group)
_ARGS = None


def _on_signal(signum, frame):
    """ctest or the suite's time budget is stopping us: take the program down too."""
    if _CHILD is not None:
        try:
            os.killpg(_CHILD.pid, signal.SIGKILL)
        except OSError:
            pass
    if _ARGS is not None:
        result(_ARGS, "FAIL", f"interrupted by signal {signum} (ctest timeout or suite budget)")
    sys.exit(1)


def run(cmd, env, timeout, log, label):
    global _CHILD
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
    except OSError as e:
        log(f"[{label}] cannot start {cmd[0]}: {e}")
        return {"rc": 127, "out": "", "err": str(e), "pid": -1, "secs": 0.0, "timeout": False}
    _CHILD = p
    timed_out = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        out, err = p.communicate()
    _CHILD = None
    secs = time.monotonic() - t0
    res = {"rc": p.returncode, "out": out.decode("utf-8", "replace"),
           "err": err.decode("utf-8", "replace"), "pid": p.pid, "secs": secs, "timeout": timed_out}
    log(f"[{label}] rc={res['rc']}{' TIMEOUT' if timed_out else ''} {secs:.1f}s pid={p.pid}")
    log.block(f"{label} stdout", res["out"])
    log.block(f"{label} stderr", res["err"])
    return res


def base_env():
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    for k in list(env):
        if k.startswith("ENCAUDIT_"):
            env.pop(k)
    env["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def plain_env():
    env = base_env()
    for k in list(env):
        if k.startswith("ENCORE"):
            env.pop(k)  # nothing of encore in the reference runs
    return env


def parse_audit_line(line):
    d = {}
    m = re.search(r'error="(.*)"', line)
    if m:
        d["error"] = m.group(1)
        line = line[:m.start()]
    for tok in line.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            d[k] = int(v) if re.fullmatch(r"\d+", v) else v
    return d


def read_audit(path, pid):
    if not os.path.exists(path):
        return None
    best = None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("encore-audit:"):
                d = parse_audit_line(line[len("encore-audit:"):])
                if d.get("pid") == pid:
                    best = d
    return best


def read_summary(prefix, pid):
    path = f"{prefix}.{pid}.jsonl"
    if not os.path.exists(path):
        cands = glob.glob(prefix + ".*.jsonl")
        if len(cands) != 1:
            return None, path
        path = cands[0]
    last = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if obj.get("event") == "summary":
                last = obj.get("summary", obj) if isinstance(obj.get("summary"), dict) else obj
    return last, path


def replay_text(summ):
    if not summ:
        return "replay n/a (no summary line in ENCORE_LOG)"
    seen = int(summ.get("launches_seen", 0) or 0)
    rep = int(summ.get("launches_replayed", 0) or 0)
    pct = 100.0 * rep / seen if seen else 0.0
    return (f"replay {rep}/{seen} = {pct:.1f}% graphs_captured={summ.get('graphs_captured', '?')} "
            f"graph_launches={summ.get('graph_launches', '?')}")


def clean(pattern):
    for f in glob.glob(pattern):
        try:
            os.remove(f)
        except OSError:
            pass


def result(args, status, detail):
    """Record and exit. status: PASS FAIL NONDET SKIP."""
    path = os.environ.get("ENCGPU_RESULTS")
    if path:
        rec = {"test": args.test or f"gpu.{args.mode}.{args.name}", "mode": args.mode,
               "name": args.name, "status": status, "detail": detail}
        try:
            with open(path, "a") as f:
                f.write(json.dumps(rec) + "\n")
        except OSError:
            pass
    print(f"RESULT {status}: {detail}", flush=True)
    sys.exit({"PASS": 0, "SKIP": SKIP}.get(status, 1))


def mode_audit(args, cmd, is_python, log):
    if not args.audit_lib or not os.path.exists(args.audit_lib):
        result(args, "SKIP", f"audit library not built ({args.audit_lib}): CUPTI header missing at configure time?")
    cupti, why = choose_cupti(args, is_python)
    log(f"CUPTI: {cupti or '(soname search)'} [{why}]")
    work = args.workdir
    env_common = base_env()
    env_common["ENCAUDIT_PARENT_PID"] = str(os.getpid())
    if cupti:
        env_common["ENCAUDIT_CUPTI"] = cupti

    # 1. audit alone: it must see every launch as unseen.
    alone_file = os.path.join(work, f"{args.name}.audit-alone.txt")
    clean(alone_file)
    env = dict(env_common)
    for k in list(env):
        if k.startswith("ENCORE"):
            env.pop(k)
    env["LD_PRELOAD"] = args.audit_lib
    env["ENCAUDIT_FILE"] = alone_file
    r = run(cmd, env, args.timeout, log, "audit-alone")
    if r["rc"] == SKIP:
        result(args, "SKIP", "program skipped: " + last_line(r["err"]))
    a0 = read_audit(alone_file, r["pid"])
    if r["rc"] != 0:
        log.block("audit-alone stderr", r["err"], limit=40)
        result(args, "FAIL", f"program failed under the audit alone (rc {r['rc']}{', timeout' if r['timeout'] else ''})")
    if a0 is None:
        if "CUPTI not available" in r["err"]:
            result(args, "SKIP", "CUPTI not available: " + grep_line(r["err"], "CUPTI not available"))
        if "encore-audit: ERROR" in r["err"]:
            result(args, "FAIL", grep_line(r["err"], "encore-audit: ERROR"))
        log.block("audit-alone stderr", r["err"], limit=40)
        result(args, "FAIL", "the audit printed no summary line (was libencore_audit.so loaded?)")
    if a0.get("status") == "nocupti":
        result(args, "SKIP", f"CUPTI not available: {a0.get('error', '')}")
    if a0.get("status") != "ok":
        result(args, "FAIL", f"audit error: {a0.get('error', a0.get('status'))}")
    n0, u0 = a0.get("launches", 0), a0.get("unseen", -1)
    log(f"audit-alone {args.name}: launches={n0} unseen={u0} graph_launches={a0.get('graph_launches')}")
    if not (n0 > 0 and u0 == n0):
        result(args, "FAIL", f"sanity: the audit alone must see every launch as unseen, got launches={n0} unseen={u0}")

    # 2. encore + audit: nothing may bypass encore.
    enc_file = os.path.join(work, f"{args.name}.audit-encore.txt")
    log_prefix = os.path.join(work, f"{args.name}.audit.encore")
    clean(enc_file)
    clean(log_prefix + ".*.jsonl")
    env = dict(env_common)
    env["LD_PRELOAD"] = f"{args.encore}:{args.audit_lib}"
    env["ENCAUDIT_FILE"] = enc_file
    env["ENCORE_LOG"] = log_prefix + ".%p.jsonl"
    r1 = run(cmd, env, args.timeout, log, "encore+audit")
    a1 = read_audit(enc_file, r1["pid"])
    if r1["rc"] != 0:
        log.block("encore+audit stderr", r1["err"], limit=60)
        result(args, "FAIL", f"program failed under encore + audit (rc {r1['rc']}{', timeout' if r1['timeout'] else ''})")
    if a1 is None:
        log.block("encore+audit stderr", r1["err"], limit=60)
        result(args, "FAIL", "the audit printed no summary line under encore")
    if a1.get("status") != "ok":
        result(args, "FAIL", f"audit error under encore: {a1.get('error', a1.get('status'))}")
    n, u = a1.get("launches", 0), a1.get("unseen", -1)
    g, gu, hooks = a1.get("graph_launches", 0), a1.get("graph_unseen", 0), a1.get("hooks", 0)
    summ, _ = read_summary(log_prefix, r1["pid"])
    same = "yes" if r1["out"] == r["out"] else "NO"
    print(f"audit {args.name}: launches={n} unseen={u}", flush=True)
    log(f"  through_encore={a1.get('through_encore')} graph_launches={g} graph_unseen={gu} hooks={hooks} "
        f"(audit alone: launches={n0}); stdout same as without encore: {same}; {replay_text(summ)}")
    if a1.get("first_unseen"):
        log(f"  first unseen: {a1['first_unseen']}")
    if same == "NO":
        log.block("stdout diff (audit alone vs encore+audit)",
                  "\n".join(difflib.unified_diff(r["out"].splitlines(), r1["out"].splitlines(),
                                                 "without-encore", "with-encore", lineterm="")), limit=30)
    if n <= 0:
        result(args, "FAIL", f"no launches seen under encore + audit (launches={n})")
    if u != 0 or gu != 0:
        hint = ""
        if hooks == 0:
            hint = " (encore never called encore_audit_enter: is the audit contract implemented?)"
        first = f"; first unseen: {a1.get('first_unseen')}" if a1.get("first_unseen") else ""
        result(args, "FAIL", f"launches={n} unseen={u} graph_unseen={gu}: launches bypassed encore{hint}{first}")
    result(args, "PASS", f"launches={n} unseen=0 graph_launches={g} (alone: launches={n0} unseen={u0}); {replay_text(summ)}")


def mode_selfcheck(args, cmd, log):
    """The program plays encore's side of the contract; the audit must count exactly."""
    if not args.audit_lib or not os.path.exists(args.audit_lib):
        result(args, "SKIP", f"audit library not built ({args.audit_lib}): CUPTI header missing at configure time?")
    cupti, why = choose_cupti(args, False)
    log(f"CUPTI: {cupti or '(soname search)'} [{why}]")
    afile = os.path.join(args.workdir, f"{args.name}.audit.txt")
    clean(afile)
    env = plain_env()
    env["ENCAUDIT_PARENT_PID"] = str(os.getpid())
    if cupti:
        env["ENCAUDIT_CUPTI"] = cupti
    env["LD_PRELOAD"] = args.audit_lib
    env["ENCAUDIT_FILE"] = afile
    r = run(cmd, env, args.timeout, log, "selfcheck")
    if r["rc"] != 0:
        log.block("selfcheck stderr", r["err"], limit=40)
        result(args, "FAIL", f"self-check program failed (rc {r['rc']})")
    a = read_audit(afile, r["pid"])
    if a is None:
        if "CUPTI not available" in r["err"]:
            result(args, "SKIP", "CUPTI not available: " + grep_line(r["err"], "CUPTI not available"))
        log.block("selfcheck stderr", r["err"], limit=40)
        result(args, "FAIL", "the audit printed no summary line")
    if a.get("status") != "ok":
        result(args, "FAIL", f"audit error: {a.get('error', a.get('status'))}")
    m = re.search(r"selfcheck launches=(\d+) bracketed=(\d+) enters=(\d+)", r["out"])
    if not m:
        result(args, "FAIL", "self-check program printed no expectation line")
    L, B, E = (int(x) for x in m.groups())
    want = {"launches": L, "through_encore": B, "unseen": L - B, "hooks": E}
    got = {k: a.get(k) for k in want}
    print(f"audit {args.name}: launches={got['launches']} unseen={got['unseen']} "
          f"through_encore={got['through_encore']} hooks={got['hooks']}", flush=True)
    if got != want:
        result(args, "FAIL", f"audit miscounted: expected {want}, got {got}")
    result(args, "PASS", f"audit counts exact: launches={L} through_encore={B} unseen={L - B} hooks={E}")


def last_line(text):
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def grep_line(text, needle):
    for ln in text.splitlines():
        if needle in ln:
            return ln.strip()
    return ""


def compare_tensors(ref, others, timeout, log):
    env = plain_env()
    try:
        p = subprocess.run([sys.executable, "-c", COMPARE_SCRIPT, ref] + others, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, text=True)
    except subprocess.TimeoutExpired:
        return None, "tensor comparison timed out"
    if p.returncode != 0:
        return None, f"tensor comparison failed: {last_line(p.stderr)}"
    try:
        res = json.loads(last_line(p.stdout))
    except ValueError:
        return None, f"tensor comparison printed no result: {last_line(p.stdout)}"
    if "error" in res:
        return None, res["error"]
    return res, None


def stdout_diff(a, b, na, nb):
    return "\n".join(difflib.unified_diff(a.splitlines(), b.splitlines(), na, nb, lineterm=""))


def mode_diff(args, cmd, log):
    work = args.workdir
    saves = {}

    def with_save(tag):
        if not args.save_tensors:
            return cmd
        path = os.path.join(work, f"{args.name}.{tag}.pt")
        clean(path)
        saves[tag] = path
        return cmd + ["--save", path]

    rA = run(with_save("ref1"), plain_env(), args.timeout, log, "without-encore#1")
    if rA["rc"] == SKIP:
        result(args, "SKIP", "program skipped: " + last_line(rA["err"]))
    if rA["rc"] != 0:
        log.block("without-encore#1 stderr", rA["err"], limit=40)
        result(args, "FAIL", f"program failed WITHOUT encore (rc {rA['rc']}{', timeout' if rA['timeout'] else ''}): not an encore problem")
    rB = run(with_save("ref2"), plain_env(), args.timeout, log, "without-encore#2")
    if rB["rc"] != 0:
        log.block("without-encore#2 stderr", rB["err"], limit=40)
        result(args, "FAIL", f"second run WITHOUT encore failed (rc {rB['rc']})")

    log_prefix = os.path.join(work, f"{args.name}.diff.encore")
    clean(log_prefix + ".*.jsonl")
    env = base_env()
    env["LD_PRELOAD"] = args.encore
    env["ENCORE_LOG"] = log_prefix + ".%p.jsonl"
    env.setdefault("ENCORE_REPORT", "1")
    rE = run(with_save("encore"), env, args.timeout, log, "with-encore")
    summ, logpath = read_summary(log_prefix, rE["pid"])
    rtext = replay_text(summ)
    if rE["rc"] != 0:
        log.block("with-encore stderr", rE["err"], limit=60)
        result(args, "FAIL", f"program failed WITH encore (rc {rE['rc']}{', timeout' if rE['timeout'] else ''}) but not without")

    problems_ref, problems_enc = [], []
    if rA["out"] != rB["out"]:
        problems_ref.append("stdout differs between two runs without encore")
        log.block("stdout diff run#1 vs run#2 (no encore)", stdout_diff(rA["out"], rB["out"], "run1", "run2"), limit=30)
    if rA["out"] != rE["out"]:
        problems_enc.append("stdout differs with encore")
        log.block("stdout diff without vs with encore",
                  stdout_diff(rA["out"], rE["out"], "without-encore", "with-encore"), limit=40)
    if args.save_tensors:
        missing = [t for t, p in saves.items() if not os.path.exists(p)]
        if missing:
            result(args, "FAIL", f"saved outputs missing for {missing}")
        res, err = compare_tensors(saves["ref1"], [saves["ref2"], saves["encore"]], args.timeout, log)
        if err:
            result(args, "FAIL", f"could not compare tensors: {err}")
        if res[saves["ref2"]]:
            problems_ref.append("saved tensors differ between two runs without encore: " + "; ".join(res[saves["ref2"]][:5]))
        if res[saves["encore"]]:
            problems_enc.append("saved tensors differ with encore: " + "; ".join(res[saves["encore"]][:5]))
        log(f"tensors compared (torch.equal): ref2 {'same' if not res[saves['ref2']] else 'DIFFERENT'}, "
            f"encore {'same' if not res[saves['encore']] else 'DIFFERENT'}")

    print(f"diff {args.name}: {rtext}", flush=True)
    log(f"  times: without {rA['secs']:.1f}s / {rB['secs']:.1f}s, with encore {rE['secs']:.1f}s; log {logpath}")
    if summ is None:
        log("  WARNING: no ENCORE_LOG summary line (is libencore.so loaded and writing ENCORE_LOG?)")
    report = [ln for ln in rE["err"].splitlines() if ln.startswith("encore")]
    if report:
        log.block("encore stderr lines", "\n".join(report), limit=25)
    if problems_ref:
        msg = "; ".join(problems_ref)
        if problems_enc:
            msg += " | also with encore: " + "; ".join(problems_enc)
        result(args, "NONDET", f"baseline is NONDETERMINISTIC (test-program problem, not an encore bug): {msg}")
    if problems_enc:
        result(args, "FAIL", "ENCORE CHANGED RESULTS: " + "; ".join(problems_enc) + f" ({rtext})")
    tail = "" if summ else " [no ENCORE_LOG summary]"
    result(args, "PASS", f"identical with and without encore; {rtext}{tail}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["audit", "diff", "selfcheck", "skip"], required=True)
    ap.add_argument("--name", required=True, help="short name (file names, messages)")
    ap.add_argument("--test", default=None, help="CTest name for the results file")
    ap.add_argument("--encore", default=None, help="path of libencore.so")
    ap.add_argument("--audit-lib", default=None, help="path of libencore_audit.so")
    ap.add_argument("--cupti-default", default=None, help="libcupti found at configure time")
    ap.add_argument("--workdir", default=".", help="where logs and saved outputs go")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per program run")
    ap.add_argument("--save-tensors", action="store_true", help="the program accepts --save PATH")
    ap.add_argument("--reason", default="", help="for --mode skip")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- program [args]")
    args = ap.parse_args()
    global _ARGS
    _ARGS = args
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)

    if args.mode == "skip":
        print(f"SKIP: {args.reason}", flush=True)
        result(args, "SKIP", args.reason)
    cmd = args.cmd[1:] if args.cmd and args.cmd[0] == "--" else args.cmd
    if not cmd:
        ap.error("no program given (after --)")

    problem = gpu_problem()
    if problem:
        result(args, "SKIP", f"no GPU: {problem}")

    if args.mode != "selfcheck" and (not args.encore or not os.path.exists(args.encore)):
        result(args, "FAIL", f"libencore.so not found at {args.encore}")
    is_python = cmd[0].endswith(".py")
    if is_python:
        cmd = [sys.executable] + cmd
    os.makedirs(args.workdir, exist_ok=True)
    log = Log(os.path.join(args.workdir, f"{args.name}.{args.mode}.log"))
    log(f"{args.mode} {args.name}: {' '.join(cmd)}", quiet=True)
    if args.mode == "audit":
        mode_audit(args, cmd, is_python, log)
    elif args.mode == "selfcheck":
        mode_selfcheck(args, cmd, log)
    else:
        mode_diff(args, cmd, log)


if __name__ == "__main__":
    main()
