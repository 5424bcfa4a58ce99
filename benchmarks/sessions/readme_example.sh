#!/usr/bin/env bash
# The README's idea (its 30 lines, as written) in a scratch project, run with the command its
# NEXT lines name until none is printed (at most 6 sessions): how many sessions and runs the
# example takes to complete. Prints one JSON object (benchmarks/results/readme_example_sessions.json).
#   PYTHONPATH=$PWD nice -n 15 benchmarks/sessions/readme_example.sh [WORKDIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work" && cd "$work"
python=${PYTHON:-$root/.venv/bin/python}
"$python" - "$root/README.md" <<'PY'
import sys
text = open(sys.argv[1]).read()
code = text.split("## An idea in 30 lines")[1].split("```python\n")[1].split("```")[0]
open("test_l2.py", "w").write(code)
PY
printf '[pytest]\n' > pytest.ini
sessions=()
for i in 1 2 3 4 5 6; do
  rc=0
  "$python" -m pytest test_l2.py -n 2 -q > "s$i.log" 2>&1 || rc=$?
  trained=$(sed -n 's/^benchkit: \([0-9]*\) run(s) trained.*/\1/p' "s$i.log")
  verdict=$(sed -n 's/^l2_decay  *tabular  *\([^ ]*\).*/\1/p' "s$i.log")
  next=$(grep -c '^benchkit: NEXT' "s$i.log" || true)
  sessions+=("{\"session\": $i, \"runs_trained\": ${trained:-0}, \"verdict\": \"$verdict\", \"exit\": $rc, \"next_lines\": $next}")
  [ "$next" = 0 ] && break
done
(IFS=,; echo "{\"command\": \"pytest test_l2.py -n 2 -q\", \"sessions\": [${sessions[*]}]}")
