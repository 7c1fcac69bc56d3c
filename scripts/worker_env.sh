#!/usr/bin/env bash
# Make the locked environment of one worker route (docs/models.md, "Worker environments").
#
#   scripts/worker_env.sh ROUTE DIR          make DIR/venv (+ DIR/src, the authors' code at its commit)
#   scripts/worker_env.sh --print ROUTE DIR  print the commands, run nothing
#
# ROUTE: kimi_audio, mimo_audio, step_audio2, transformers_worker (harness_tasks/workers/envs/ROUTE.txt).
# DIR must not exist (the script makes it and writes DIR/.vocalgrad-worker-env saying what it made).
# PYTHON=/path/to/python overrides the interpreter (default: pythonX.Y of the file's '# python:' line).
set -euo pipefail
prog=worker_env.sh
run=1
if [ "${1:-}" = "--print" ]; then run=0; shift; fi
if [ $# -ne 2 ]; then
  echo "usage: $prog [--print] ROUTE DIR  (ROUTE: kimi_audio, mimo_audio, step_audio2, transformers_worker)" >&2
  exit 2
fi
route=$1 dir=$2
root=$(cd "$(dirname "$0")/.." && pwd)
lock=$root/harness_tasks/workers/envs/$route.txt
if [ ! -f "$lock" ]; then
  echo "$prog: error: no environment file for route '$route' ($lock); routes: kimi_audio, mimo_audio, step_audio2, transformers_worker" >&2
  exit 2
fi
field() { sed -n "s/^# $1: //p" "$lock" | head -n 1; }
python_version=$(field python)
upstream=$(field upstream)
after=$(field after)
worker=$(field worker)
py=${PYTHON:-python$python_version}
if [ $run = 1 ]; then
  if [ -e "$dir" ]; then
    echo "$prog: error: $dir exists; give a new folder (this script only fills a folder it makes)" >&2
    exit 2
  fi
  if ! command -v "$py" > /dev/null; then
    echo "$prog: error: $py not found; install Python $python_version or set PYTHON=/path/to/python$python_version" >&2
    exit 2
  fi
fi
digest=$(sha256sum "$lock" | cut -d' ' -f1)
cmds=("mkdir -p '$dir'"
      "'$py' -m venv '$dir/venv'"
      "'$dir/venv/bin/pip' install --no-cache-dir -r '$lock'")
if [ -n "$after" ]; then
  cmds+=("'$dir/venv/bin/pip' install --no-cache-dir --no-build-isolation $after")
fi
read -r url commit <<< "$upstream"
if [ "$url" != "this" ]; then
  cmds+=("git clone '$url' '$dir/src'"
         "git -C '$dir/src' checkout --quiet '$commit'"
         "git -C '$dir/src' submodule update --init --recursive")
fi
cmds+=("printf 'route: %s\nlock: %s\nsha256: %s\n' '$route' '$lock' '$digest' > '$dir/.vocalgrad-worker-env'")
for c in "${cmds[@]}"; do
  echo "+ $c"
  if [ $run = 1 ]; then eval "$c"; fi
done
w=${worker//\{DIR\}/$dir}
w=${w//\{CHECKOUT\}/$root}
echo "worker environment $route ($digest): run the worker as"
echo "  $w"
