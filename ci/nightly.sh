#!/usr/bin/env bash
# Nightly job: run the nightly scenario set (NIGHTLY_REPEAT repeats, 3 by default: rates get intervals
# over repeats), compare each run with this machine's baseline (on a machine's first night, record the
# run as its baseline: results/baselines/machines/<fingerprint>/, and gate only its counts, against the
# newest baseline of another machine: ci/thresholds.yaml `kind`), append its summary to results/history/<scenario>/
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
  # A baseline of this machine (same CPU model, CPUs, memory, kernel) gates everything: the committed one
  # when it was recorded here, else the one this machine recorded on its first night. Without one (a hosted
  # runner whose image changed its kernel is a new machine), the newest baseline of any machine gates the
  # counts (compare marks the timings unchecked), and tonight's run becomes this machine's baseline.
  if baseline=$("$KQBENCH" baseline find "$scenario" --dir "$BASELINES"); then
    "$KQBENCH" compare "$baseline" "$OUT/$run_dir" --thresholds "$THRESHOLDS" || status=1
  else
    if counts_baseline=$("$KQBENCH" baseline find "$scenario" --dir "$BASELINES" --counts); then
      echo "first night of $scenario on this machine: counts gated against $counts_baseline, timings from the next night"
      counts_ok=1
      "$KQBENCH" compare "$counts_baseline" "$OUT/$run_dir" --thresholds "$THRESHOLDS" || { status=1; counts_ok=0; }
    else
      echo "first night of $scenario on any machine: nothing to gate against tonight"
      counts_ok=1
    fi
    # A run whose counts regressed does not become the baseline: the next night meets the old counts again.
    if [ "$counts_ok" = 1 ]; then
      "$KQBENCH" baseline record "$OUT/$run_dir" --dir "$BASELINES" || status=1
    else
      echo "counts regressed: tonight's run is not recorded as this machine's baseline" >&2
    fi
  fi
  "$KQBENCH" history --record "$OUT/$run_dir" --dir "$HISTORY" || status=1
  # Change points are for reading, not for failing the night: one step needs nights after it to be seen.
  "$KQBENCH" history --scenario "$scenario" --dir "$HISTORY" --plot "$OUT/history-$scenario.png" || true
  "$KQBENCH" report "$OUT/$run_dir" --out "$OUT/$run_dir/report.html" --history "$HISTORY/$scenario"
  # The run pushed its raw data when it ended; this adds the report just made with the history.
  "$KQBENCH" results push "$OUT/$run_dir" || status=1
done
exit $status
