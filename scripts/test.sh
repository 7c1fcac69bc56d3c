#!/usr/bin/env bash
# Install the toolkit with every extra and run the offline test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --upgrade pip
python3 -m pip install -q "torch==2.13.0"   # the CPU wheel; must come before anything that pulls torch
python3 -m pip install -q -e ".[all]"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
python3 -m pytest -q "$@"
