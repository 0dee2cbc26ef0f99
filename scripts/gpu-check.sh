#!/usr/bin/env bash
# gpu-check: prove the CUDA path in one short call on a lent GPU machine
# (one H200, python3 3.12 with torch 2.11.0+cu130 and transformers 5.17, no
# Go, no network, 64 MiB carried per call).
#
#   scripts/gpu-check.sh prepare
#       here: builds the ragen binary against PyPI's torch==2.11.0 (the
#       version there, so the same C++ symbols; scripts/torch-venv.sh) into
#       .cache/gpu-check/ with the Qwen tokenizer.json, and prints the device
#       call to make. bin/ragen is left alone, but third_party/gotch stays
#       prepared for 2.11 until the next `make` (which prepares it again).
#   scripts/gpu-check.sh run [--device cuda|cpu] [--small] [--out DIR]
#                            [--ragen BIN] [--python PY] [--tokenizer FILE]
#       there (or here with --device cpu --small, the rehearsal `make parity`
#       runs): points the loader at the lib/ folder of the torch that PY
#       imports and runs scripts/gpu_check.py under an 8-minute limit; the
#       results go to DIR/gpu-check.json (DIR defaults to $OUT, the device
#       call's output folder) and DIR/bench*.json.
#
# The device call (from this machine's `run` tool), after `prepare`:
#   command: scripts/gpu-check.sh run --device cuda
#   carry:   [".cache/gpu-check"]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bundle="$root/.cache/gpu-check"
tokdefault="$root/.cache/tokenizer-data/qwen2.5/tokenizer.json"
die() { echo "gpu-check: $*" >&2; exit 2; }

prepare() {
	[ -f "$tokdefault" ] || "$root/scripts/fetch-tokenizer-data.sh" >&2
	bin=$("$root/scripts/torch-venv.sh" 2.11.0)
	# The CUDA-graph shim includes CUDA runtime headers that torch's wheels
	# leave out (crt/host_config.h): the nvidia-cuda-crt wheel of the same
	# CUDA release as the nvidia-cuda-runtime wheel torch depends on.
	if ! "$bin/pip" show -q nvidia-cuda-crt >/dev/null 2>&1; then
		rt=$("$bin/pip" show nvidia-cuda-runtime 2>/dev/null | sed -n 's/^Version: //p')
		[ -n "$rt" ] || die "the torch venv $bin has no nvidia-cuda-runtime wheel: is its torch a CUDA build?"
		"$bin/pip" install -q --disable-pip-version-check "nvidia-cuda-crt==${rt%.*}.*" >&2 ||
			die "pip could not install nvidia-cuda-crt ${rt%.*} (the CUDA-graph shim needs its headers)"
	fi
	mkdir -p "$bundle"
	# make deps prepares third_party/gotch for the venv's libtorch (found
	# first on PATH, as a user's pip install is); the binary goes to the
	# bundle, bin/ragen is left alone.
	(cd "$root" && PATH="$bin:$PATH" scripts/deps.sh && PATH="$bin:$PATH" go build -o "$bundle/ragen" ./cmd/ragen)
	cp "$tokdefault" "$bundle/tokenizer.json"
	du -sh "$bundle" >&2
	size=$(du -sm "$bundle" | cut -f1)
	[ "$size" -lt 56 ] || die "the bundle $bundle is ${size} MiB, too close to the 64 MiB a device call carries"
	echo "gpu-check: ready. Device call: command 'scripts/gpu-check.sh run --device cuda', carry ['.cache/gpu-check']" >&2
}

run() {
	local device=cuda small= out="${OUT:-}" ragen="$bundle/ragen" python=python3 tok="$bundle/tokenizer.json"
	while [ $# -gt 0 ]; do
		case "$1" in
		--device) device="${2:?--device needs a value}"; shift 2 ;;
		--small) small=--small; shift ;;
		--out) out="${2:?--out needs a folder}"; shift 2 ;;
		--ragen) ragen="${2:?--ragen needs a binary}"; shift 2 ;;
		--python) python="${2:?--python needs an interpreter}"; shift 2 ;;
		--tokenizer) tok="${2:?--tokenizer needs a file}"; shift 2 ;;
		*) die "unknown argument $1 (see the header of $0)" ;;
		esac
	done
	[ -n "$out" ] || die "no output folder: give --out DIR (on the device machine \$OUT is used)"
	[ -x "$ragen" ] || die "--ragen $ragen is not an executable (run 'scripts/gpu-check.sh prepare' here and carry .cache/gpu-check)"
	[ -f "$tok" ] || [ "$tok" != "$bundle/tokenizer.json" ] || tok="$tokdefault"
	[ -f "$tok" ] || die "--tokenizer $tok not found"
	lib=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))') ||
		die "--python $python does not import torch"
	"$python" -c 'import transformers' 2>/dev/null || die "--python $python does not import transformers"
	# The binary links libcudart itself (the CUDA-graph shim), so the
	# nvidia wheels' lib folders beside torch go on the path too.
	for d in "$lib"/../../nvidia/*/lib; do
		[ -d "$d" ] && lib="$lib:$(cd "$d" && pwd)"
	done
	export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	mkdir -p "$out"
	echo "gpu-check: $ragen on $device, libtorch from $lib, results in $out" >&2
	timeout 480 "$python" "$root/scripts/gpu_check.py" --ragen "$ragen" --tokenizer "$tok" --out "$out" --device "$device" $small
}

case "${1:-}" in
prepare) shift; prepare "$@" ;;
run) shift; run "$@" ;;
*) die "usage: scripts/gpu-check.sh prepare | run [--device cuda|cpu] [--small] [--out DIR] [--ragen BIN] [--python PY] [--tokenizer FILE]" ;;
esac
