#!/usr/bin/env bash
# The prepared GPU check (docs/models.md, "GPU check"): one command, at most 10 minutes on one GPU.
#
#   bash benchmarks/device_check.sh [OUT_DIR]        (default OUT_DIR: device_check/)
#
# Through vocalgrad-hf in bfloat16 on CUDA: every tiny family (built from tests/_family_helpers.py) and
# every 7B-class checkpoint found locally (VOCALGRAD_DEVICE_MODELS="path1 path2 ...", or the paper's models
# when they are in the Hugging Face cache) answers the same clips at batch sizes 1, 8 and 32 (a CUDA
# out-of-memory error halves the batch, the adapter's own path); it reports clips/s per family and batch
# size and whether the answers are identical across batch sizes; then `vocalgrad finetune` runs on CUDA
# on a tiny AF3. Writes OUT_DIR/device_check.json and prints one line per check; exit 1 when a check
# fails, 2 when there is no GPU (nothing is run then).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-device_check}
py=${PYTHON:-python}
if ! "$py" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "device_check.sh: no CUDA GPU here (torch.cuda.is_available() is false); nothing was run." \
       "Run it on a machine with an NVIDIA GPU and a CUDA build of torch." >&2
  exit 2
fi
exec timeout 590 "$py" benchmarks/device_check.py --out "$out"
