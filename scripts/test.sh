#!/usr/bin/env bash
# The README's test command: installs what it can (system packages, then Python packages) and runs the
# offline test suite. Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/test_render.py -x`).
#
#   system packages  FFmpeg 5.1's shared libraries (torchcodec 0.13 decodes the Hub's Audio column with them),
#                    libsndfile, Chromium + ChromeDriver (listening-page browser tests). Installed with apt-get
#                    when apt-get exists and this runs as root; otherwise one line says what to install, and the
#                    tests that need them are skipped with that reason.
#   Python packages  torch==2.13.0 first (set TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu for the small
#                    CPU wheel: that index is added as an extra index, and its 2.13.0+cpu satisfies ==2.13.0 and
#                    sorts above PyPI's 2.13.0, the CUDA build with triton and the nvidia-* packages, so pip takes
#                    it), then the toolkit with every extra (`pip install -e ".[all]"`), then mistral-common
#                    without its dependency list (Voxtral's tokenizer; see pyproject's `voxtral`) and lmms-eval
#                    0.7.3 without its requirements (the `lmms` extra holds the few its core needs;
#                    docs/lmms-eval.md: its own list would pull torchvision, which replaces the pinned torch), then
#                    the four pretrained encoders of `vocalgrad probe --encoder` without their dependency lists
#                    (they declare torchaudio, which has no build for the pinned torch; the `encoders` extra holds
#                    the rest they need).
#                    Each of the six pip steps says what it installs, then the packages pip collects and
#                    installs as it goes (download bars left out); a failing step shows pip's last lines.
#
# VOCALGRAD_SKIP_APT=1 skips the system step, VOCALGRAD_SKIP_PIP=1 the Python step.
# VOCALGRAD_TEST_WORKERS=N runs the tests in N processes (pytest-xdist, `-n N --dist loadfile`: each test
# file stays on one worker, and the files that read the session's demo share one; tests/conftest.py);
# unset or empty: 2 (the suite's 15-minute budget on 2 cores is measured so); 0: one process, no xdist.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(libavutil57 libavcodec59 libavformat59 libavdevice59 libavfilter8 libswscale6 libswresample4
              libsndfile1 chromium chromium-driver)

missing_apt_packages() {  # prints the packages of APT_PACKAGES that dpkg does not list as installed
  local p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || printf '%s ' "$p"
  done
}

if [ "${VOCALGRAD_SKIP_APT:-0}" != 1 ]; then
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "scripts/test.sh: not a Debian/Ubuntu system: install FFmpeg 5.1's shared libraries, libsndfile and" \
         "Chromium + ChromeDriver yourself; until then the tests that need them are skipped." >&2
  else
    missing="$(missing_apt_packages)"; missing="${missing% }"
    if [ -n "$missing" ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      echo "scripts/test.sh: apt-get install $missing"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      # shellcheck disable=SC2086  # word splitting of the package list is intended
      apt-get install -y -qq --no-install-recommends $missing >/dev/null
      missing="$(missing_apt_packages)"; missing="${missing% }"
    fi
    if [ -n "$missing" ]; then
      echo "scripts/test.sh: missing system packages (tests that need them will be skipped):" \
           "sudo apt-get install $missing" >&2
    fi
  fi
fi

# One pip install, said before it starts and followed as it goes: pip's own lines that name a package it
# fetches or installs ("Collecting ...", "Installing collected packages ...", "Successfully installed ...")
# are printed as they come; the rest (download bars, "Requirement already satisfied") is left out.
pip_step() {
  local n="$1" what="$2" log rc=0
  shift 2
  echo "scripts/test.sh: pip step $n/6: $what"
  log="$(mktemp)"
  python3 -m pip install --progress-bar off "$@" 2>&1 | tee "$log" \
    | { grep --line-buffered -E '^(Collecting|Installing collected|Successfully installed|ERROR)' || true; } \
    | sed -u 's/^/  /' || rc=$?
  if [ "$rc" != 0 ]; then
    echo "scripts/test.sh: pip step $n/6 ($what) failed with exit status $rc; pip's last lines:" >&2
    tail -n 40 "$log" >&2
    rm -f "$log"
    exit "$rc"
  fi
  grep -q '^Successfully installed' "$log" || echo "  nothing to install: already there"
  rm -f "$log"
}

if [ "${VOCALGRAD_SKIP_PIP:-0}" != 1 ]; then
  if ! python3 -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)'; then
    echo "scripts/test.sh: note: not inside a virtual environment (README: python3 -m venv .venv && . .venv/bin/activate)"
  fi
  pip_step 1 "pip itself" --upgrade pip
  # torch first and pinned: anything that pulls torch unpinned would resolve to a multi-GB CUDA build.
  pip_step 2 "torch 2.13.0" ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} "torch==2.13.0"
  pip_step 3 "the toolkit with every extra (the longest step)" -e ".[all]"
  # Voxtral's tokenizer: mistral-common declares numpy<2.4 on Python <= 3.12 only (this project pins
  # numpy 2.4); its other dependencies come with the `voxtral` extra above.
  pip_step 4 "mistral-common 1.13.1 without its dependencies" --no-deps "mistral-common==1.13.1"
  pip_step 5 "lmms-eval 0.7.3 without its dependencies" --no-deps "lmms-eval==0.7.3"
  # Encoders whose wheels ship their weights (docs/probe.md, Encoders): each declares torchaudio (no build for
  # torch 2.13; the probe never calls it), resemblyzer also `webrtcvad` (an sdist; the extra installs webrtcvad-wheels).
  pip_step 6 "the encoders pesto-pitch, torchcrepe, torchfcpe, resemblyzer without their dependencies" --no-deps \
    "pesto-pitch==2.0.1" "torchcrepe==0.0.24" "torchfcpe==0.0.4" "resemblyzer==0.1.4"
fi

export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
workers="${VOCALGRAD_TEST_WORKERS:-2}"
if ! [[ "$workers" =~ ^[0-9]+$ ]]; then
  echo "scripts/test.sh: VOCALGRAD_TEST_WORKERS=$workers: give a number of processes (e.g. 2), or 0 for one" >&2
  exit 2
fi
parallel=()
if [ "$workers" -gt 0 ]; then
  parallel=(-n "$workers" --dist loadfile)
fi
python3 -m pytest -q ${parallel[@]+"${parallel[@]}"} "$@"
