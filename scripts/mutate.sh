#!/usr/bin/env bash
# Mutation testing of the given modules with the tests that cover them (docs/testing.md).
#
#   scripts/mutate.sh MODULE...          e.g. scripts/mutate.sh harness_tasks/parsing.py generation.identity
#
# For each MODULE (a path, or a dotted name), one module at a time: cosmic-ray (the `dev` extra:
# pip install -e '.[dev]') plants one mutant at a time into a scratch copy of the checkout and runs the
# module's tests there (scripts/mutate_targets.txt: module -> test files; MUTATE_TESTS overrides it,
# which is how a module not listed there is run). A mutant is killed when the tests fail or time out.
# Prints one line per module (mutants, killed, survived) and writes, under MUTATE_OUT, each survivor's
# diff (MODULE.survivors.txt) and the session (MODULE.sqlite).
#
# Bounded on a shared 2-core machine: runs under `nice`, one mutant at a time, each test run limited
# to MUTATE_TIMEOUT seconds (a mutant that makes the tests hang counts as killed), and MUTATE_SAMPLE=N
# runs a deterministic sample of N mutants (the N whose operator and occurrence hash lowest: the same
# N for the same source) instead of all of them.
#
# Environment: MUTATE_TESTS ("tests/a.py tests/b.py::test_x"), MUTATE_SAMPLE (0 = all), MUTATE_TIMEOUT
# (seconds per mutant, default 120), MUTATE_NICE (default 10), MUTATE_OUT (default ./mutation-results),
# MUTATE_KEEP=1 keeps the scratch copy.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARGETS="$ROOT/scripts/mutate_targets.txt"
SAMPLE=${MUTATE_SAMPLE:-0}
TIMEOUT=${MUTATE_TIMEOUT:-120}
NICE=${MUTATE_NICE:-10}
OUT=$(mkdir -p "${MUTATE_OUT:-$PWD/mutation-results}" && cd "${MUTATE_OUT:-$PWD/mutation-results}" && pwd)
PY=${PYTHON:-python3}

if [ $# -eq 0 ]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
if ! "$PY" -c "import cosmic_ray" 2>/dev/null; then
  echo "mutate.sh: cosmic-ray is not installed; install the dev extra: pip install -e '.[dev]'" >&2
  exit 2
fi

# Operators: cosmic-ray's core set, with one replacement per binary/comparison/unary operator site kind
# instead of every one (the arithmetic neighbour, the boundary and the negation of a comparison), and
# without the two variable operators (they need arguments and draw random numbers).
EXCLUDE_OPERATORS='[
  "core/ReplaceBinaryOperator_(?!(Add_Sub|Sub_Add|Mul_Div|Div_Mul|FloorDiv_Div|Mod_FloorDiv|Pow_Mul|BitOr_BitAnd|BitAnd_BitOr)$)",
  "core/ReplaceComparisonOperator_(?!(Eq_NotEq|NotEq_Eq|Lt_LtE|LtE_Lt|Gt_GtE|GtE_Gt|Lt_GtE|LtE_Gt|Gt_LtE|GtE_Lt|Is_IsNot|IsNot_Is)$)",
  "core/ReplaceUnaryOperator_(?!(USub_UAdd|UAdd_USub|Delete_Not|Delete_USub)$)",
  "core/Variable"]'

tests_for() {  # the test selection of module path $1
  if [ -n "${MUTATE_TESTS:-}" ]; then echo "$MUTATE_TESTS"; return; fi
  awk -v m="$1" '$1 == m { $1 = ""; print; found = 1 } END { exit !found }' "$TARGETS"
}

status=0
for arg in "$@"; do
  module=$arg
  case "$module" in *.py) ;; *) module="$(echo "$module" | tr . /).py" ;; esac
  module=${module#./}
  if [ ! -f "$ROOT/$module" ]; then
    echo "mutate.sh: $arg: no such module ($ROOT/$module)" >&2; status=2; continue
  fi
  if ! tests=$(tests_for "$module"); then
    echo "mutate.sh: $module: not in scripts/mutate_targets.txt; add a line 'MODULE TEST_FILE...' or set MUTATE_TESTS" >&2
    status=2; continue
  fi
  name=$(echo "${module%.py}" | tr / .)
  work=$(mktemp -d "${TMPDIR:-/tmp}/vocalgrad-mutate.XXXXXX")
  # the checkout as it is now (tracked and untracked files, not ignored ones)
  (cd "$ROOT" && git ls-files -co --exclude-standard -z | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) \
    | tar -xf - -C "$work"
  cat > "$work/mutate.toml" <<EOF
[cosmic-ray]
module-path = "$module"
timeout = $TIMEOUT
excluded-modules = []
test-command = "$PY -m pytest -x -q -p no:cacheprovider $tests"

[cosmic-ray.distributor]
name = "local"

[cosmic-ray.filters.operators-filter]
exclude-operators = $EXCLUDE_OPERATORS
EOF
  db="$OUT/$name.sqlite"
  rm -f "$db"
  echo "mutate.sh: $module with: $tests" >&2
  (
    cd "$work"
    export PYTHONPATH="$work" HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 MPLBACKEND=Agg \
      OMP_NUM_THREADS=1 VOCALGRAD_ANSWER_LOG=none
    cosmic-ray init mutate.toml "$db" >/dev/null
    cr-filter-operators "$db" mutate.toml >/dev/null
    "$PY" - "$db" "$SAMPLE" "$module" <<'EOF'
import hashlib, sys
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import WorkerOutcome, WorkResult

db_path, n, module = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, "scripts")
from mutate_annotations import annotation_spans, inside

spans = annotation_spans(open(module, encoding="utf-8").read())


def in_annotation(item):
    return all(inside(m.start_pos, m.end_pos, spans) for m in item.mutations)


with use_db(db_path, WorkDB.Mode.open) as db:
    items = list(db.pending_work_items)
    notes = [item for item in items if spans and in_annotation(item)]
    for item in notes:
        db.set_result(item.job_id, WorkResult(output="in an annotation", worker_outcome=WorkerOutcome.SKIPPED))
    if notes:
        print(f"mutate.sh: {len(notes)} mutants in annotations left out (never evaluated: "
              "from __future__ import annotations)", file=sys.stderr)
    items = [item for item in items if item not in notes]
    if 0 < n < len(items):
        def key(item):
            text = "|".join(f"{m.operator_name}:{m.occurrence}" for m in item.mutations)
            return hashlib.sha256(text.encode()).hexdigest()
        keep = {item.job_id for item in sorted(items, key=key)[:n]}
        for item in items:
            if item.job_id not in keep:
                db.set_result(item.job_id, WorkResult(output="not in the sample", worker_outcome=WorkerOutcome.SKIPPED))
    print(f"mutate.sh: {min(n, len(items)) if n > 0 else len(items)} of {len(items)} mutants to run", file=sys.stderr)
EOF
    if ! nice -n "$NICE" timeout "$TIMEOUT" $PY -m pytest -x -q -p no:cacheprovider $tests >baseline.log 2>&1; then
      echo "mutate.sh: $module: the tests fail (or take over ${TIMEOUT}s) without any mutant; see $work/baseline.log" >&2
      exit 3
    fi
    nice -n "$NICE" cosmic-ray exec mutate.toml "$db"
  ) || { status=$?; [ -n "${MUTATE_KEEP:-}" ] || rm -rf "$work"; continue; }
  "$PY" - "$db" "$module" "$OUT/$name.survivors.txt" "$SAMPLE" <<'EOF'
import sys
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import TestOutcome, WorkerOutcome

db_path, module, survivors_path, sample = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ran = killed = timeouts = total = notes = 0
survivors = []
with use_db(db_path, WorkDB.Mode.open) as db:
    for item, result in db.completed_work_items:
        if result.worker_outcome == WorkerOutcome.SKIPPED:
            total += result.output == "not in the sample"
            notes += result.output == "in an annotation"
            continue
        total += 1
        ran += 1
        if result.worker_outcome == WorkerOutcome.ABNORMAL or result.test_outcome != TestOutcome.SURVIVED:
            killed += 1
            timeouts += result.worker_outcome == WorkerOutcome.ABNORMAL
        else:
            m = item.mutations[0]
            survivors.append(f"--- {m.operator_name} #{m.occurrence} line {m.start_pos[0]}\n{result.diff}\n")
with open(survivors_path, "w") as fh:
    fh.writelines(survivors)
share = f"{100 * killed / ran:.0f} %" if ran else "-"
what = f"a sample of {ran} of {total}" if ran < total else f"{ran}"
print(f"{module}: {what} mutants, {killed} killed ({timeouts} by timeout), {len(survivors)} survived ({share} killed)"
      + (f"; {notes} in annotations left out" if notes else "")
      + (f"; survivors' diffs in {survivors_path}" if survivors else ""))
EOF
  [ -n "${MUTATE_KEEP:-}" ] && echo "mutate.sh: scratch copy kept in $work" >&2 || rm -rf "$work"
done
exit $status
