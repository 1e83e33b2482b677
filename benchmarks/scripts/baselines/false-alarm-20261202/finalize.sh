#!/usr/bin/env bash
# Record this machine's baseline from the 2-repeat run, compare every run with it, copy what the README reads.
set -euo pipefail
SRC=/tmp/falsealarm; REPO=/work/main; DEST=$REPO/results/baselines/false-alarm-20261202
KQ=$REPO/.venv/bin/kqbench
cd $REPO
base_run=$(ls -d $SRC/baseline/*-quick | tail -n 1)
$KQ baseline record "$base_run" --dir results/baselines
machine_base=$($KQ baseline find quick --dir results/baselines)
echo "machine baseline: $machine_base"
mkdir -p $DEST
copy_run() {  # run folder -> destination: what the tables and the gate read
  mkdir -p "$2/tables"
  cp "$1/run.json" "$1/summary.json" "$2/"
  cp "$1/tables/load_hdr.parquet" "$2/tables/"
  [ -f "$1/progress.log" ] && cp "$1/progress.log" "$2/" || true
}
copy_run "$base_run" $DEST/baseline-run
for dir in $SRC/same-* $SRC/changed-*; do
  [ -d "$dir" ] || continue
  [ "$(basename $dir)" = same-3 ] && continue  # interrupted in its last case (see the README)
  name=$(basename $dir); run=$(ls -d $dir/*-quick | tail -n 1)
  copy_run "$run" $DEST/$name
  cp $dir/compare-with-baseline.txt $DEST/$name/compare-with-committed.txt
  cp $dir/compare-with-baseline.json $DEST/$name/compare-with-committed.json
  COLUMNS=260 $KQ compare "$machine_base" "$run" --thresholds ci/thresholds.yaml \
    --json $DEST/$name/compare-with-machine.json > $DEST/$name/compare-with-machine.txt 2>&1 || true
  tail -1 $DEST/$name/compare-with-machine.txt
done
cp $SRC/progress.log $DEST/
