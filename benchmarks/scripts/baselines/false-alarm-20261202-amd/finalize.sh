#!/usr/bin/env bash
# Record this machine's baseline from the one-repeat run, compare every other run with it, copy what the README reads.
set -euo pipefail
SRC=/tmp/fa; REPO=/work/main; DEST=$REPO/results/baselines/false-alarm-20261202-amd
KQ=$REPO/.venv/bin/kqbench
cd $REPO
base_run=$(ls -d $SRC/baseline/*-quick | tail -n 1)
$KQ baseline record "$base_run" --dir results/baselines
machine_base=$($KQ baseline find quick --dir results/baselines)
echo "machine baseline: $machine_base"
mkdir -p $DEST/scripts
cp $SRC/sequence.sh $SRC/finalize.sh $DEST/scripts/
copy_run() {
  mkdir -p "$2/tables"
  cp "$1/run.json" "$1/summary.json" "$2/"
  cp "$1/tables/load_hdr.parquet" "$1/tables/calibration.parquet" "$2/tables/"
}
copy_run "$base_run" $DEST/baseline-run
for dir in $SRC/changed-* $SRC/same-*; do
  [ -d "$dir" ] || continue
  run=$(ls -d $dir/*-quick 2>/dev/null | tail -n 1)
  [ -n "$run" ] && [ -f "$run/summary.json" ] || continue
  grep -q '"status": "ok"' "$run/run.json" || { echo "$(basename $dir): not ok, skipped"; continue; }
  name=$(basename $dir)
  copy_run "$run" $DEST/$name
  COLUMNS=260 $KQ compare "$machine_base" "$run" --thresholds ci/thresholds.yaml \
    --json $DEST/$name/compare-with-machine.json > $DEST/$name/compare-with-machine.txt 2>&1 || true
  echo "$name: $(tail -1 $DEST/$name/compare-with-machine.txt)"
done
cp $SRC/progress.log $DEST/
