#!/usr/bin/env bash
# Five same-code quick runs and five with a deliberate change, alternating, each compared with the
# committed baseline. Run from a snapshot clone; results under $OUT.
set -uo pipefail
SNAP=/tmp/s; PY=/work/main/.venv/bin/python; OUT=${OUT:-/tmp/falsealarm}
CHANGE=(--set scheduler.page_cache=false --set load.users.querier=8 --set load.rates.query_per_second=10)
mkdir -p "$OUT"
cd "$SNAP"
export PYTHONPATH=$SNAP
for i in 1 2 3 4 5; do
  for arm in same changed; do
    dir="$OUT/$arm-$i"; mkdir -p "$dir"
    echo "$(date -u +%H:%M:%S) start $arm $i" >> "$OUT/progress.log"
    if [ $arm = same ]; then extra=(); else extra=("${CHANGE[@]}"); fi
    timeout 1800 $PY -m harness run quick "${extra[@]}" --out "$dir" > "$dir/run.log" 2>&1
    echo "$(date -u +%H:%M:%S) end $arm $i rc=$?" >> "$OUT/progress.log"
    run=$(ls -d "$dir"/*-quick | tail -n 1)
    COLUMNS=260 $PY -m harness compare results/baselines/quick.summary.json "$run" --thresholds ci/thresholds.yaml \
      --json "$dir/compare-with-baseline.json" > "$dir/compare-with-baseline.txt" 2>&1
    echo "$(date -u +%H:%M:%S) compare $arm $i rc=$?" >> "$OUT/progress.log"
  done
done
echo done >> "$OUT/progress.log"
