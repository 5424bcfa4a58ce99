#!/usr/bin/env bash
# One fresh pytest process of the kind the suite's e2e tests start (benchkit's plugin, torch, an
# idea module collected), without benchkit's bytecode and with it (`compileall`), interleaved:
# user+sys CPU seconds of each, REPS pairs.  PYTHONPATH=$PWD benchmarks/suite/bytecode_process.sh 10
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
clean() { find benchkit tests -name __pycache__ -prune -exec rm -rf {} +; }
for r in $(seq "$1"); do
  for mode in cold compiled; do
    clean
    [ $mode = compiled ] && "$PY" -m compileall -q benchkit tests/standins
    t=$( { /usr/bin/time -f "%U %S" "$PY" -m pytest -q -p no:cacheprovider --collect-only \
           ideas/test_task_visible_pruning.py >/dev/null; } 2>&1 | tail -1)
    echo "$r $mode $t" | awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}'
  done
done
clean
