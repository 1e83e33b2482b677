#!/usr/bin/env bash
# Nightly job: run the nightly scenario set, compare each run with its baseline, write the reports.
# Usage: ci/nightly.sh [OUT_DIR]   (env NIGHTLY_SCENARIOS overrides the set, space-separated)
# Exit code: 0 all passed, 1 a threshold was crossed or a run failed.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${1:-results/runs/nightly-$(date -u +%Y%m%d)}"
SCENARIOS="${NIGHTLY_SCENARIOS:-quick}"
KQBENCH="${KQBENCH:-kqbench}"
THRESHOLDS="ci/thresholds.yaml"
BASELINES="results/baselines"
status=0

mkdir -p "$OUT"
for scenario in $SCENARIOS; do
  echo "::group::run $scenario"
  before=$(ls -1 "$OUT" 2>/dev/null | sort)
  if ! "$KQBENCH" run "$scenario" --out "$OUT"; then
    echo "run of $scenario failed (partial results kept)" >&2
    status=1
  fi
  run_dir=$(comm -13 <(echo "$before") <(ls -1 "$OUT" | sort) | tail -n 1)
  echo "::endgroup::"
  [ -n "$run_dir" ] || { echo "no run folder for $scenario" >&2; status=1; continue; }
  baseline="$BASELINES/$scenario.summary.json"
  if [ -f "$baseline" ]; then
    "$KQBENCH" compare "$baseline" "$OUT/$run_dir" --thresholds "$THRESHOLDS" || status=1
  else
    echo "no baseline $baseline: copy $OUT/$run_dir/summary.json there once the run looks right" >&2
  fi
  "$KQBENCH" report "$OUT/$run_dir" --out "$OUT/$run_dir/report.html"
done
exit $status
