#!/usr/bin/env python3
"""Check what `test_report --emit DIR` wrote:

  DIR/summary.json  one line, parses with json.loads, has every documented
                    key, and its numbers equal the ones in DIR/table.txt
  DIR/events.jsonl  every line parses, has event/time/pid and the keys its
                    event documents; start comes first, summary last

Prints one line per check and "N passed, N failed"; exit status 1 on failure.
"""
import json
import re
import sys

from checks import check, finish


def num(text):
    return int(text.replace(",", ""))


EVENT_KEYS = {
    "start": {"ppid", "version", "exe", "cmdline", "started", "options"},
    "capture": {"seq", "length", "first_kernel", "capture_us", "instantiate_us"},
    "capture_failure": {"seq", "what", "cuda_error"},
    "divergence": {"kind", "expected", "got", "arg_index", "position", "count", "n", "suppressed"},
    "evict": {"seq", "hits"},
    "hold_given_up": {"replayed", "holds", "skip"},
    "hold_resumed": {"why"},
    "warning": {"message"},
    "summary": {"version", "launches_seen", "launches_replayed", "launches_eager", "replay_pct",
                "graphs_captured", "graph_launches", "graph_launches_patched", "graphs_evicted", "capture_failures", "divergences",
                "divergences_by_kind", "flushes", "flushes_by_call", "calls", "holds", "holds_replayed",
                "held_unpaid_ns", "holds_given_up", "holds_resumed", "streams_left_alone", "streams_rested",
                "launches_unrecorded", "switched_off",
                "launches_passive", "deferred_ns", "deferred_samples", "release_ns", "release_samples", "disabled",
                "top_sequences", "never_replayed", "top_divergences"},
}
DIV_LABELS = {"a different kernel came": "kernel", "launch config differed": "config",
              "arguments differed": "args", "ended early": "short"}
FLUSH_LABELS = {"call on the same stream": "stream_call", "device-wide call": "all_call",
                "legacy default stream order": "legacy_order", "deadline passed": "deadline",
                "sequence full (ENCORE_MAX_SEQUENCE)": "sequence_full", "program began a capture": "capture",
                "launch without parameter info": "opaque_launch", "process exit": "exit",
                "a graph's end where the host paused": "pause"}
CALL_LABELS = {"pass (straight through)": "pass", "launch": "launch", "flush-stream": "flush_stream",
               "flush-all": "flush_all"}
TOP_LABELS = {"kernel launches seen": "launches_seen", "replayed through graphs": "launches_replayed",
              "launched eagerly (one by one)": "launches_eager", "graphs captured": "graphs_captured",
              "graph launches (replays)": "graph_launches", "with arguments patched in": "graph_launches_patched",
              "evicted (ENCORE_MAX_GRAPHS)": "graphs_evicted",
              "capture failures": "capture_failures", "divergences": "divergences",
              "holds (held launches released)": "holds", "ended in a replay": "holds_replayed",
              "given up where holds did not pay": "holds_given_up",
              "tried again later": "holds_resumed",
              "streams left alone (MAX_GAP)": "streams_left_alone",
              "streams resting (nothing repeated)": "streams_rested",
              "launches passed through meanwhile": "launches_unrecorded",
              "switched off by the program": "switched_off", "launches while off (program, check)": "launches_passive",
              "self-checks (steps timed on and off)": "self_checks", "slower on: launches passed through": "self_checks_aside"}
WHAT_KIND = {"kernel": "kernel", "launch config": "config", "ended early": "short"}


def parse_table(text):
    """Numbers of the table, keyed like the JSON summary."""
    t = {"divergences_by_kind": {}, "flushes": {}, "flushes_by_call": {}, "calls": {}, "top_sequences": [],
         "never_replayed": [], "top_divergences": []}
    section = "main"
    for line in text.splitlines():
        if line.startswith("  top sequences"):
            section = "seqs"
            continue
        if line.startswith("  captured, never replayed"):
            section = "unreplayed"
            continue
        if line.startswith("  most frequent divergences"):
            section = "divs"
            continue
        if line.startswith("  hook calls by class"):
            section = "calls"
            continue
        if line.startswith("    flush points, by the CUDA call"):
            section = "flushcalls"
            continue
        m = re.match(r"^  (\s*)(\S.*?)\s+([\d,]+)(?:\s+([\d.]+)%)?$", line)
        if section == "flushcalls" and m:
            t["flushes_by_call"][m.group(2)] = num(m.group(3))
            continue
        if section in ("main", "calls") and m:
            label, value, pct = m.group(2), num(m.group(3)), m.group(4)
            if section == "calls":
                t["calls"][CALL_LABELS[label]] = value
            elif label in TOP_LABELS:
                t[TOP_LABELS[label]] = value
                if label == "replayed through graphs":
                    t["replay_pct"] = float(pct)
            elif label in DIV_LABELS:
                t["divergences_by_kind"][DIV_LABELS[label]] = value
            elif label in FLUSH_LABELS:
                t["flushes"][FLUSH_LABELS[label]] = value
            continue
        m = re.match(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d,]+)\s+([\d,]+)  (.*)$", line)
        if section in ("seqs", "unreplayed") and m:
            t["top_sequences" if section == "seqs" else "never_replayed"].append(
                {"seq": int(m.group(2)), "length": int(m.group(3)), "hits": num(m.group(4)),
                 "saved": num(m.group(5)), "evicted": m.group(6).endswith("(evicted)")})
            continue
        m = re.match(r"^\s+(\d+)\s+([\d,]+)  (.{18})\s+(\d+)  (.*)$", line)
        if section == "divs" and m:
            what = m.group(3).strip()
            kind = WHAT_KIND.get(what, "args" if what.startswith("argument") else "?")
            arg = int(what.split()[1]) if what.startswith("argument ") else -1
            t["top_divergences"].append({"kind": kind, "count": num(m.group(2)), "position": int(m.group(4)),
                                         "arg_index": arg})
    return t


def main():
    d = sys.argv[1]
    table = open(f"{d}/table.txt", encoding="utf-8").read()
    raw = open(f"{d}/summary.json", "rb").read()
    check("summary: exactly one line ending in a newline", raw.count(b"\n") == 1 and raw.endswith(b"\n"))
    try:
        s = json.loads(raw.decode("utf-8"))
        check("summary: parses with json.loads", True)
    except (ValueError, UnicodeDecodeError) as e:
        check("summary: parses with json.loads", False, str(e))
        return
    check("summary: event is summary", s.get("event") == "summary")
    missing = EVENT_KEYS["summary"] - set(s)
    check("summary: has every documented key", not missing, f"missing {sorted(missing)}")
    check("summary: flush reasons are the documented keys",
          set(s["flushes"]) == set(FLUSH_LABELS.values()), str(s["flushes"]))
    check("summary: divergence kinds are the documented keys",
          set(s["divergences_by_kind"]) == set(DIV_LABELS.values()))
    check("summary: call classes are the documented keys", set(s["calls"]) == set(CALL_LABELS.values()))

    t = parse_table(table)
    check("table: header names the pid", table.startswith(f"encore report (pid {s['pid']}, version {s['version']})\n"))
    for key in TOP_LABELS.values():
        check(f"table == summary: {key}", t.get(key) == s[key], f"table {t.get(key)} json {s[key]}")
    check("table == summary: replay_pct", t.get("replay_pct") == s["replay_pct"],
          f"table {t.get('replay_pct')} json {s['replay_pct']}")
    check("table == summary: divergences_by_kind", t["divergences_by_kind"] == s["divergences_by_kind"],
          f"table {t['divergences_by_kind']} json {s['divergences_by_kind']}")
    nonzero = {k: v for k, v in s["flushes"].items() if v}
    check("table == summary: flushes (non-zero reasons)", t["flushes"] == nonzero,
          f"table {t['flushes']} json {nonzero}")
    check("table == summary: calls", t["calls"] == s["calls"], f"table {t['calls']} json {s['calls']}")
    check("table == summary: flush points by CUDA call", t["flushes_by_call"] == s["flushes_by_call"],
          f"table {t['flushes_by_call']} json {s['flushes_by_call']}")
    check("summary: flush points by CUDA call are listed", len(s["flushes_by_call"]) == 2)
    ju = [{k: q[k] for k in ("seq", "length", "hits", "saved", "evicted")} for q in s["never_replayed"]]
    check("table == summary: graphs never replayed, same order", t["never_replayed"] == ju and len(ju) > 0,
          f"table {t['never_replayed']}\n     json  {ju}")
    check("summary: graphs never replayed have no hits, the first captured first",
          all(q["hits"] == 0 for q in ju) and [q["seq"] for q in ju] == sorted(q["seq"] for q in ju))
    js = [{k: q[k] for k in ("seq", "length", "hits", "saved", "evicted")} for q in s["top_sequences"]]
    check("table == summary: top sequences, same order", t["top_sequences"] == js,
          f"table {t['top_sequences']}\n     json  {js}")
    check("summary: saved = (length - 1) * hits",
          all(q["saved"] == (q["length"] - 1) * q["hits"] for q in s["top_sequences"]))
    jd = [{k: q[k] for k in ("kind", "count", "position", "arg_index")} for q in s["top_divergences"]]
    check("table == summary: top divergences, same order", t["top_divergences"] == jd,
          f"table {t['top_divergences']}\n     json  {jd}")
    check("summary: kernel names survive escaping",
          any('"quoted"\\back\tslash\nnewline\x01\x7f' in k for q in s["top_sequences"] for k in q["kernels"]))

    lines = open(f"{d}/events.jsonl", "rb").read().split(b"\n")
    check("events: file ends with a newline", lines[-1] == b"")
    events, bad = [], []
    for i, line in enumerate(lines[:-1]):
        try:
            events.append(json.loads(line.decode("utf-8")))
        except (ValueError, UnicodeDecodeError) as e:
            bad.append(f"line {i + 1}: {e}: {line[:120]!r}")
    check("events: every line parses with json.loads", not bad, "\n     ".join(bad[:5]))
    check("events: start first, summary last",
          events and events[0]["event"] == "start" and events[-1]["event"] == "summary")
    wrong = []
    for e in events:
        keys = EVENT_KEYS.get(e.get("event"))
        if keys is None or not {"time", "pid"} <= set(e) or not keys <= set(e):
            wrong.append(e)
    check("events: each has event, time, pid and its documented keys", not wrong, str(wrong[:2]))
    opts = events[0].get("options", {}) if events else {}
    check("events: start lists the effective options",
          opts.get("min_repeats") == 3 and opts.get("enabled") is True and opts.get("log_level") == "warn")
    check("events: 800 threaded captures, none torn",
          sum(1 for e in events if e["event"] == "capture" and e["first_kernel"] == "threaded_kernel") == 800)


if __name__ == "__main__":
    main()
    finish()
