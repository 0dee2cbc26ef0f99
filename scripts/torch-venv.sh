#!/usr/bin/env bash
# torch-venv VERSION: a virtualenv in .cache/torch-VERSION holding PyPI's
# torch==VERSION (on Linux a CUDA build, which also runs on the CPU), for
# building and testing against that libtorch (make test-torch). Idempotent.
# Prints the venv's bin folder: put it first on PATH and `make deps` finds its
# torch, as it finds a user's `pip install torch`.
set -euo pipefail
v="${1:?usage: torch-venv.sh VERSION (e.g. 2.1.2)}"
[[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "torch-venv: TORCH=$v is not a version like 2.1.2" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.cache/torch-$v"
have() { "$venv/bin/python" -c "import sys, torch; sys.exit(torch.__version__.split('+')[0] != '$v')" 2>/dev/null; }
if ! have; then
	command -v python3 >/dev/null || { echo "torch-venv: python3 not found; install Python with venv and pip" >&2; exit 1; }
	echo "torch-venv: installing torch==$v into $venv (with its CUDA libraries, a few GB)" >&2
	python3 -m venv "$venv" >&2
	"$venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir "torch==$v" >&2 ||
		{ echo "torch-venv: pip could not install torch==$v for $(python3 --version 2>&1); see 'pip index versions torch'" >&2; exit 1; }
	have || { echo "torch-venv: $venv/bin/python does not import torch $v after installing it" >&2; exit 1; }
fi
echo "$venv/bin"
