#!/usr/bin/env bash
# fuzz: run every Fuzz* target of the module for FUZZTIME each (make fuzz
# FUZZTIME=10m), one after the other, and print a table of target, package,
# execs and result. `go test` (make test) already runs each target's seed
# corpus, and every input a run saves under testdata/fuzz/ after a failure,
# as ordinary tests.
#
#   scripts/fuzz.sh [FUZZTIME] [TARGET-REGEXP]
#
# Minimising each new interesting input is capped at 100 runs
# (-fuzzminimizetime 100x): with go's default, a minute per input, targets
# whose seeds are whole files (tokenizer.json) spent their time shrinking
# inputs and ran about ten inputs in 30 s.
#
# A failing target leaves its input in PKG/testdata/fuzz/TARGET/ (commit it
# with the fix: it becomes a regression test); the log of each run is in
# $FUZZLOG (default .cache/fuzz/). Exit status 1 when any target failed.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
fuzztime="${1:-30s}"
only="${2:-.}"
go="${GO:-go}"
logs="${FUZZLOG:-$root/.cache/fuzz}"
mkdir -p "$logs"

# package<TAB>target for every func FuzzX(f *testing.F) outside third_party/.
targets=$(grep -rHE --include='*_test.go' --exclude-dir=third_party --exclude-dir=.cache --exclude-dir=node_modules \
	'^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . |
	sed -E 's|^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*|./\1\t\2|' | sort -u | grep -E "$only")
[ -n "$targets" ] || { echo "fuzz: no target matches $only" >&2; exit 2; }

failed=0
table=""
while IFS=$'\t' read -r pkg name; do
	log="$logs/$(echo "${pkg#./}" | tr / -)-$name.log"
	echo "$go test $pkg -run '^\$' -fuzz '^$name\$' -fuzztime $fuzztime -fuzzminimizetime 100x" >&2
	"$go" test "$pkg" -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" -fuzzminimizetime 100x >"$log" 2>&1
	rc=$?
	# "fuzz: elapsed: 30s, execs: 123456 (4115/sec), new interesting: 12 (total: 40)"
	execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
	if [ $rc -eq 0 ]; then
		result=ok
	else
		result="FAIL (see $log)"
		failed=1
		tail -20 "$log" >&2
	fi
	table+=$(printf '%-22s %-26s %12s  %s' "$name" "$pkg" "${execs:-?}" "$result")$'\n'
done <<<"$targets"

printf '\n%-22s %-26s %12s  %s\n' target package execs result
printf '%s' "$table"
exit $failed
