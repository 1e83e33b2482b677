#!/usr/bin/env bash
# After same-3: drop the remaining changed runs (the change is not caught: the gate cannot see it), run same-4, same-5.
set -uo pipefail
OUT=/tmp/falsealarm; SNAP=/tmp/s; PY=/work/main/.venv/bin/python
for i in $(seq 1 600); do grep -q "start changed-3" $OUT/progress.log && break; sleep 2; done
pkill -f phase2.sh
sleep 1
pkill -INT -f "harness run quick" ; sleep 20
for i in $(seq 1 30); do pgrep -f "harness run quick" >/dev/null || break; sleep 2; done
pkill -9 -f "harness run quick"
rm -rf $OUT/changed-3
echo "$(date -u +%H:%M:%S) stopped after same-3: no more changed runs" >> $OUT/progress.log
cd $SNAP; export PYTHONPATH=$SNAP
for pair in same-4 same-5; do
  dir=$OUT/$pair; mkdir -p $dir
  echo "$(date -u +%H:%M:%S) start $pair" >> $OUT/progress.log
  timeout 1800 $PY -m harness run quick --out $dir > $dir/run.log 2>&1
  echo "$(date -u +%H:%M:%S) end $pair rc=$?" >> $OUT/progress.log
  run=$(ls -d $dir/*-quick | tail -n 1)
  COLUMNS=260 $PY -m harness compare results/baselines/quick.summary.json "$run" --thresholds ci/thresholds.yaml \
    --json $dir/compare-with-baseline.json > $dir/compare-with-baseline.txt 2>&1
done
echo done >> $OUT/progress.log
