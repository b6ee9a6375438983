#!/usr/bin/env bash
# tools.simulated_report_is_repeatable: on the simulated driver with its jitter
# off (SIMCUDA_JITTER=0) and encore's three rules that read the host clock
# pinned (ENCORE_HOLD_BUDGET=0, ENCORE_MAX_GAP=10s, ENCORE_FLUSH_DEADLINE=1s),
# as docs/simulated.md says, the
# demo's report is the same in every run, but for its timing lines and pid.
# No simulator controls the host clock: unpinned, the counts change from run
# to run (a loaded host's launches come slower, so the hold budget cuts
# sequences elsewhere; "streams left alone (MAX_GAP)" read 192 in one run and
# 0 in the next; under ASan on a loaded host the deadline fired 10 times).
# Usage: test_sim_repeatable.sh LIBENCORE SIM-DIR DEMO-SIM [RUNS]
set -u
lib=$1 sim=$2 demo=$3 runs=${4:-3}
tmp=$(mktemp -d /tmp/encore-sim-repeat.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq "$runs"); do
    LD_LIBRARY_PATH=$sim SIMCUDA_JITTER=0 ENCORE_HOLD_BUDGET=0 ENCORE_MAX_GAP=10s ENCORE_FLUSH_DEADLINE=1s ENCORE_REPORT=1 \
        LD_PRELOAD=$lib "$demo" 2>"$tmp/err.$i" >/dev/null || { echo "FAIL run $i exited $?"; cat "$tmp/err.$i"; exit 1; }
    # timing lines (us, ms, sampled) and the pid differ by nature
    grep -v -e '^encore report (pid' -e ' us ' -e 'sampled' -e ' ms ' -e ' ms$' "$tmp/err.$i" >"$tmp/report.$i"
    grep -q "kernel launches seen" "$tmp/report.$i" || { echo "FAIL run $i printed no report"; cat "$tmp/err.$i"; exit 1; }
done
for i in $(seq 2 "$runs"); do
    if ! diff -u "$tmp/report.1" "$tmp/report.$i"; then
        echo "FAIL the report of run $i differs from run 1's"
        exit 1
    fi
done
echo "ok   $runs simulated runs (jitter off, pace rules pinned) gave the same report:"
sed 's/^/     /' "$tmp/report.1"
