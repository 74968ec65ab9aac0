#!/usr/bin/env bash
# Install everything the workflow and its tests need into the current Python environment
# (use a virtualenv if you prefer; CI uses the machine's Python). Idempotent and offline-safe:
# torch/torchvision come from the machine's local wheel store, the rest from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
pip_install() { "$PY" -m pip install --disable-pip-version-check --no-input -q "$@"; }
# torch first and alone: pinned to the release that pairs with torchvision 0.29.1
pip_install torch==2.14.1 torchvision==0.29.1
pip_install -r requirements.txt
pip_install --no-deps -e .
# papermill needs a Jupyter kernel named python3
if ! "$PY" -m jupyter kernelspec list 2>/dev/null | grep -q '^ *python3 '; then
    "$PY" -m ipykernel install --sys-prefix --name python3
fi
# Debian's headless Chromium for tests/test_report_browser.py (no downloaded browser). Waits for
# the dpkg/apt locks when another apt process holds them; skipped when already installed.
apt_quiet() {  # apt-get with retries while another apt process holds a lock; silent on success
    local out i
    for i in $(seq 60); do
        if out=$(DEBIAN_FRONTEND=noninteractive apt-get -qq -o DPkg::Lock::Timeout=600 "$@" 2>&1); then
            return 0
        fi
        grep -qiE 'could not get lock|unable to (acquire|lock)' <<<"$out" || break
        sleep 10
    done
    echo "$out" >&2
    return 1
}
# Debian's packages the tests use, where apt is available (root): headless Chromium for the
# browser tests, TeX (pdflatex, booktabs, longtable) to compile results/results_section.tex, and
# the Fashion-MNIST data.
apt_need() {  # apt_need COMMAND|/ABSOLUTE/FILE [apt-get install options] PACKAGE...: install
    # unless the command (or the file) exists; $APT_ELSE says what happens without it
    local cmd=$1 else_msg=${APT_ELSE:-"the tests that need $1 will skip"}
    shift
    case $cmd in
    /*) [ -e "$cmd" ] && return 0 ;;
    *) command -v "$cmd" >/dev/null 2>&1 && return 0 ;;
    esac
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        { apt_quiet update && apt_quiet install -y "$@"; } ||
            echo "setup: could not install $*; $else_msg" >&2
    else
        echo "setup: $cmd missing (root: apt-get install -y $*); $else_msg" >&2
    fi
}
apt_need chromium chromium
apt_need pdflatex --no-install-recommends texlive-latex-base texlive-latex-recommended
# Fashion-MNIST (data.dataset: fashion): Debian's package, its files read where
# config/paper_sources.yaml's fashion_* entries say (installed:)
APT_ELSE="the workflow downloads Fashion-MNIST from its upstream URLs instead" \
    apt_need /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz dataset-fashion-mnist
# DVC must never phone home (also committed in .dvc/config)
"$PY" -m dvc config --global core.analytics false >/dev/null 2>&1 || true
echo "setup: ok ($("$PY" --version), torch $("$PY" -c 'import torch; print(torch.__version__)'))"
