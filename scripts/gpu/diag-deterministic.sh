#!/usr/bin/env bash
# Issue 28: which of encore's knobs changes the deterministic ResNet-18's outcome (replays, holds)?
# OUT=dir scripts/gpu/diag-deterministic.sh [LIB]   (LIB default build-gpu/libencore.so)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
L=${1:-$ROOT/build-gpu/libencore.so}
: "${OUT:?}"
for v in "default:" "maxgap1ms:ENCORE_MAX_GAP=1000us" "budget0:ENCORE_HOLD_BUDGET=0" "holdrule0:ENCORE_HOLD_RULE=0" \
         "patch0:ENCORE_PATCH=0" "budget0-maxgap1ms:ENCORE_HOLD_BUDGET=0 ENCORE_MAX_GAP=1000us"; do
  name=${v%%:*}; envs=${v#*:}
  for m in det nodet; do
    env $envs ENCORE_REPORT=1 ENCORE_LOG=$OUT/$name-$m.jsonl LD_PRELOAD=$L timeout 120 python3 "$ROOT/scripts/gpu/diag-deterministic.py" $m >"$OUT/$name-$m.txt" 2>&1
    printf '%-20s %-6s %s | %s | %s | %s\n' "$name" "$m" "$(grep -m1 'replayed through graphs' $OUT/$name-$m.txt | tr -s ' ')" \
      "$(grep -m1 'graphs captured' $OUT/$name-$m.txt | tr -s ' ')" "$(grep -m1 'ended in a replay' $OUT/$name-$m.txt | tr -s ' ')" \
      "$(grep -m1 'held, then released' $OUT/$name-$m.txt | tr -s ' ')"
  done
done | tee $OUT/table.txt
