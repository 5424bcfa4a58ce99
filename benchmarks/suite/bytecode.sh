#!/usr/bin/env bash
# Lead 2 of the suite-time brief: does compiling benchkit's bytecode before the suite cut the CPU
# of its subprocess sessions? (The machine sets PYTHONDONTWRITEBYTECODE=1: no process writes
# .pyc, but every process reads one that is there.) Runs the given tests at -n 0, alternately
# without any benchkit/tests __pycache__ and after `python -m compileall -q benchkit tests/standins`,
# REPS times, and prints user+sys CPU seconds of each run (children included).
#   PYTHONPATH=$PWD nice -n 10 benchmarks/suite/bytecode.sh 3 tests/plugin/test_plugin_options.py
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
reps=$1; shift
clean() { find benchkit tests -name __pycache__ -prune -exec rm -rf {} +; }
for r in $(seq "$reps"); do
  for mode in cold compiled; do
    clean
    [ $mode = compiled ] && "$PY" -m compileall -q benchkit tests/standins
    t=$( { /usr/bin/time -f "%U %S" "$PY" -m pytest -q -n 0 -p no:randomly -p no:cacheprovider "$@" >/dev/null; } 2>&1 | tail -1)
    echo "$r $mode $t" | awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}'
  done
done
clean
