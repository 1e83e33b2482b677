#!/usr/bin/env bash
# Out-of-sample false-alarm measurement: this machine's baseline (quick, one repeat, as make bench),
# then changed and same-code runs alternated. Each run bounded on its own (30 min); nothing else runs.
set -u
SRC=/tmp/fa; KQ="/work/main/.venv/bin/python -m harness"
cd /tmp/fa/repo
export PYTHONPATH=/tmp/fa/repo
log() { echo "$(date -u +%H:%M:%S) $*" >> $SRC/progress.log; }
run() {  # name, extra args...
  local name=$1; shift
  log "start $name"
  timeout 1800 $KQ run quick --out $SRC/$name "$@" > $SRC/$name.out 2>&1
  log "end $name rc=$?"
}
run baseline
for i in 1 2 3 4 5; do
  run changed-$i --set scheduler.page_cache=false --set load.users.querier=8 --set load.rates.query_per_second=10
  [ -f $SRC/stop ] && break
  run same-$i
  [ -f $SRC/stop ] && break
done
log "done"
