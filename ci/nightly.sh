#!/usr/bin/env bash
# Nightly job: run the nightly scenario set (NIGHTLY_REPEAT repeats, 3 by default: rates get intervals
# over repeats), compare each run with this machine's baseline (on a machine's first night, record the
# run as its baseline: results/baselines/machines/<fingerprint>/), append its summary to results/history/<scenario>/
# (one file per night, with the git sha), look for change points in the history, write the reports
# (each with the history's series and change points). Raw data goes to the results store ($KQBENCH_STORE):
# only history rows and a new machine's baseline summary are committed.
# Usage: ci/nightly.sh [OUT_DIR]   (env NIGHTLY_SCENARIOS overrides the set, space-separated)
# Exit code: 0 all passed, 1 a metric regressed (beyond its threshold and significant) or a run failed.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${1:-results/runs/nightly-$(date -u +%Y%m%d)}"
SCENARIOS="${NIGHTLY_SCENARIOS:-quick}"
KQBENCH="${KQBENCH:-kqbench}"
THRESHOLDS="ci/thresholds.yaml"
BASELINES="results/baselines"
HISTORY="results/history"
REPEAT="${NIGHTLY_REPEAT:-3}"
status=0

mkdir -p "$OUT"
for scenario in $SCENARIOS; do
  echo "::group::run $scenario"
  before=$(ls -1 "$OUT" 2>/dev/null | sort)
  if ! "$KQBENCH" run "$scenario" --repeat "$REPEAT" --out "$OUT"; then
    echo "run of $scenario failed (partial results kept)" >&2
    status=1
  fi
  run_dir=$(comm -13 <(echo "$before") <(ls -1 "$OUT" | sort) | tail -n 1)
  echo "::endgroup::"
  [ -n "$run_dir" ] || { echo "no run folder for $scenario" >&2; status=1; continue; }
  # A baseline of this machine only (same CPU model, CPUs, memory, kernel): the committed one when it
  # was recorded here, else the one this machine recorded on its first night.
  if baseline=$("$KQBENCH" baseline find "$scenario" --dir "$BASELINES"); then
    "$KQBENCH" compare "$baseline" "$OUT/$run_dir" --thresholds "$THRESHOLDS" || status=1
  else
    echo "first night of $scenario on this machine: its run becomes the machine's baseline, nothing is gated tonight"
    "$KQBENCH" baseline record "$OUT/$run_dir" --dir "$BASELINES" || status=1
  fi
  "$KQBENCH" history --record "$OUT/$run_dir" --dir "$HISTORY" || status=1
  # Change points are for reading, not for failing the night: one step needs nights after it to be seen.
  "$KQBENCH" history --scenario "$scenario" --dir "$HISTORY" --plot "$OUT/history-$scenario.png" || true
  "$KQBENCH" report "$OUT/$run_dir" --out "$OUT/$run_dir/report.html" --history "$HISTORY/$scenario"
  # The run pushed its raw data when it ended; this adds the report just made with the history.
  "$KQBENCH" results push "$OUT/$run_dir" || status=1
done
exit $status
