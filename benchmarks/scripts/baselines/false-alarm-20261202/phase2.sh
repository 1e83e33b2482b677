#!/usr/bin/env bash
# After same-2: stop the alternation, record this machine's baseline (quick, 2 repeats), then the rest.
set -uo pipefail
OUT=/tmp/falsealarm; SNAP=/tmp/s; PY=/work/main/.venv/bin/python
for i in $(seq 1 200); do grep -q "compare same 2" $OUT/progress.log && break; sleep 5; done
pkill -f falsealarm.sh
sleep 1
pkill -INT -f "harness run quick" ; sleep 20
for i in $(seq 1 30); do pgrep -f "harness run quick" >/dev/null || break; sleep 2; done
pkill -9 -f "harness run quick"
echo "$(date -u +%H:%M:%S) stopped the alternation after same 2" >> $OUT/progress.log
rm -rf $OUT/changed-2
cd $SNAP; export PYTHONPATH=$SNAP
CHANGE=(--set scheduler.page_cache=false --set load.users.querier=8 --set load.rates.query_per_second=10)
mkdir -p $OUT/baseline
echo "$(date -u +%H:%M:%S) start baseline" >> $OUT/progress.log
timeout 3000 $PY -m harness run quick --repeat 2 --out $OUT/baseline > $OUT/baseline/run.log 2>&1
echo "$(date -u +%H:%M:%S) end baseline rc=$?" >> $OUT/progress.log
for pair in changed-2 same-3 changed-3 same-4 changed-4 same-5 changed-5; do
  arm=${pair%-*}; dir=$OUT/$pair; mkdir -p $dir
  if [ $arm = same ]; then extra=(); else extra=("${CHANGE[@]}"); fi
  echo "$(date -u +%H:%M:%S) start $pair" >> $OUT/progress.log
  timeout 1800 $PY -m harness run quick "${extra[@]}" --out $dir > $dir/run.log 2>&1
  echo "$(date -u +%H:%M:%S) end $pair rc=$?" >> $OUT/progress.log
  run=$(ls -d $dir/*-quick | tail -n 1)
  COLUMNS=260 $PY -m harness compare results/baselines/quick.summary.json "$run" --thresholds ci/thresholds.yaml \
    --json $dir/compare-with-baseline.json > $dir/compare-with-baseline.txt 2>&1
done
echo done >> $OUT/progress.log
