#!/usr/bin/env bash
# kill-soak: kill -9 a training run N times at random moments and check
# that the run survives every kill whole.
#
#   scripts/kill-soak.sh N          (make kill-soak KILLS=N)
#
# It trains the tiny model (ragen bench --preset tiny writes it) with
# configs/smoke.yaml for STEPS steps, a checkpoint every SAVE_EVERY and a
# validation every VAL_EVERY, kills the process with SIGKILL a random
# KILL_MIN…KILL_MAX seconds after each launch, and launches it again with
# --resume, N times; then lets the last launch finish. It checks:
#   - every resume is clean: the launch logs "resumed" (or is killed
#     before it gets there, and the next launch resumes instead), and no
#     launch fails on its own;
#   - after every kill, every checkpoint folder step-N matches its
#     manifest.json (each file's SHA-256, no file missing or added) and
#     checkpoints/latest names a whole one;
#   - at the end, metrics.jsonl holds every training step 1…STEPS and every
#     validation exactly once (no lost, no duplicated step), each line
#     whole, and every trajectory file the same number of lines; the export
#     verifies (ragen export checks its manifest);
#   - with EXACT=1 (the default), the metrics equal an uninterrupted run's
#     apart from timing_s/ and perf/ (docs/training.md, TestResumeIsExact);
#   - no log holds a panic.
# It prints a summary and exits 1 when any invariant fails.
#
# Environment: RAGEN (default bin/ragen), WORK (default a new temporary
# folder; the tiny model is made once per WORK), STEPS (200), SAVE_EVERY
# (2), VAL_EVERY (5), KILL_MIN (0.5), KILL_MAX (4) seconds, SEED (the kill
# moments' random seed, default random), EXACT (1).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 2
die() { echo "kill-soak: $*" >&2; exit 2; }

want=${1:-}
[[ "$want" =~ ^[0-9]+$ ]] || die "usage: scripts/kill-soak.sh N (the number of kills)"
ragen=${RAGEN:-$root/bin/ragen}
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/kill-soak.XXXXXX")}
steps=${STEPS:-200}
save_every=${SAVE_EVERY:-2}
val_every=${VAL_EVERY:-5}
kill_min=${KILL_MIN:-0.5}
kill_max=${KILL_MAX:-4}
seed=${SEED:-$((RANDOM * 32768 + RANDOM))}
exact=${EXACT:-1}
[ -x "$ragen" ] || die "$ragen is missing: make build"
command -v jq >/dev/null || die "jq is missing (apt-get install -y jq)"
RANDOM=$seed
mkdir -p "$work/logs"
echo "kill-soak: $want kills of a $steps-step run in $work (seed $seed)"

# The tiny model: a random 2-layer Qwen2 with the reduced vocabulary.
model="$work/tiny"
if [ ! -f "$model/config.json" ]; then
	"$ragen" bench --preset tiny --work "$work" --parts peak --peak-sizes 64 --peak-seconds 0.1 \
		>"$work/logs/bench.log" 2>&1 || die "ragen bench --preset tiny failed: see $work/logs/bench.log"
	[ -f "$model/config.json" ] || die "ragen bench wrote no $model/config.json"
fi

# train_into OUT sets train to the command that trains into OUT.
train_into() {
	train=("$ragen" train --config "$root/configs/smoke.yaml" --model "$model" --out "$1" --log-level debug
		--set "steps=$steps" --set "save_every=$save_every" --set "val_every=$val_every")
}
run="$work/run"
rm -rf "$run"
train_into "$run"

failures=()
fail() { failures+=("$*"); echo "kill-soak: FAIL: $*" >&2; }

# verify_checkpoints checks every step-N folder against its manifest.json
# and that latest names one; it prints the number of corrupt folders.
verify_checkpoints() {
	local ck="$run/checkpoints" bad=0 d name
	[ -d "$ck" ] || { echo 0; return; }
	for d in "$ck"/step-*; do
		[ -d "$d" ] || continue
		case "$d" in *.partial) continue ;; esac
		if [ ! -f "$d/manifest.json" ]; then
			echo "$d: no manifest.json" >&2; bad=$((bad + 1)); continue
		fi
		# Every listed file with its SHA-256 ...
		if ! (cd "$d" && jq -r '.files | to_entries[] | "\(.value)  \(.key)"' manifest.json | sha256sum --check --quiet --strict >/dev/null 2>&1); then
			echo "$d: a file does not match manifest.json" >&2; bad=$((bad + 1)); continue
		fi
		# ... and no file it does not list.
		if [ "$(cd "$d" && ls -A | grep -vx manifest.json | sort)" != "$(jq -r '.files | keys[]' "$d/manifest.json" | sort)" ]; then
			echo "$d: its files are not the ones manifest.json lists" >&2; bad=$((bad + 1)); continue
		fi
		if [ "$(jq -r .step "$d/manifest.json")" != "$((10#${d##*step-}))" ]; then
			echo "$d: manifest.json gives another step" >&2; bad=$((bad + 1))
		fi
	done
	if [ -f "$ck/latest" ]; then
		name=$(tr -d '\n' <"$ck/latest")
		if [ ! -f "$ck/$name/trainer.json" ]; then
			echo "$ck/latest names $name, which is not a whole checkpoint" >&2; bad=$((bad + 1))
		fi
	fi
	echo $bad
}

# latest_step prints the step of checkpoints/latest, or - when none.
latest_step() {
	local f="$run/checkpoints/latest"
	if [ -f "$f" ]; then local n; n=$(tr -d '\n' <"$f"); echo $((10#${n#step-})); else echo -; fi
}

kills=0 launches=0 resumes=0 clean=0 killed_resuming=0 failed=0 corrupt=0 finished=0
while [ $kills -lt "$want" ]; do
	launches=$((launches + 1))
	log="$work/logs/launch-$(printf %03d $launches).log"
	args=()
	[ $launches -gt 1 ] && args=(--resume) && resumes=$((resumes + 1))
	"${train[@]}" "${args[@]}" >"$log" 2>&1 &
	pid=$!
	delay=$(awk -v a="$kill_min" -v b="$kill_max" -v r=$RANDOM 'BEGIN { printf "%.2f", a + (b - a) * r / 32767 }')
	# Sleep in slices, so a run that ends first is seen at once.
	deadline=$(awk -v d="$delay" 'BEGIN { printf "%d", d * 10 }')
	for ((i = 0; i < deadline; i++)); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 $pid 2>/dev/null; then
		kill -9 $pid
		wait $pid 2>/dev/null
		kills=$((kills + 1))
		if [ $launches -gt 1 ]; then
			if grep -q ' resumed ' "$log"; then clean=$((clean + 1)); else killed_resuming=$((killed_resuming + 1)); fi
		fi
		n=$(verify_checkpoints)
		corrupt=$((corrupt + n))
		[ "$n" -eq 0 ] || fail "after kill $kills: $n corrupt checkpoint(s)"
		printf 'kill %2d: launch %d after %5ss, latest checkpoint %s, %d metrics lines\n' \
			$kills $launches "$delay" "$(latest_step)" "$( { wc -l <"$run/metrics.jsonl"; } 2>/dev/null || echo 0)"
	else
		wait $pid
		rc=$?
		if [ $rc -ne 0 ]; then
			failed=$((failed + 1))
			fail "launch $launches exited $rc by itself: $(tail -1 "$log")"
			break
		fi
		[ $launches -gt 1 ] && clean=$((clean + 1))
		finished=1
		echo "launch $launches finished the run before its kill (after ${delay}s): $kills of $want kills done; raise STEPS"
		break
	fi
done

# The last launch runs to the end.
if [ $finished -eq 0 ] && [ $failed -eq 0 ]; then
	launches=$((launches + 1))
	log="$work/logs/launch-$(printf %03d $launches).log"
	resumes=$((resumes + 1))
	if "${train[@]}" --resume >"$log" 2>&1; then
		grep -q ' resumed ' "$log" && clean=$((clean + 1))
	else
		failed=$((failed + 1))
		fail "the final launch failed: $(tail -1 "$log")"
	fi
fi
[ $kills -ge "$want" ] || fail "only $kills of $want kills landed before the run finished (raise STEPS or lower KILL_MAX)"
[ $((clean + killed_resuming)) -eq $resumes ] || fail "$((resumes - clean - killed_resuming)) resume(s) did not resume"

# The record: every line whole, each step once.
metrics="$run/metrics.jsonl"
lost=0 dup=0 torn=0
if [ -f "$metrics" ]; then
	torn=$(jq -R 'fromjson? // "torn" | select(. == "torn")' "$metrics" | wc -l)
	[ "$torn" -eq 0 ] || fail "metrics.jsonl has $torn lines that are not JSON"
	# "train N" or "val N" for each line (validation lines carry timing_s/testing).
	lines=$(jq -R -r 'fromjson? | select(type == "object") | (if has("timing_s/testing") then "val" else "train" end) + " \(.step)"' "$metrics")
	want_lines=$(
		echo "val 0"
		for ((s = 1; s <= steps; s++)); do
			echo "train $s"
			if [ $((s % val_every)) -eq 0 ] || [ $s -eq "$steps" ]; then echo "val $s"; fi
		done
	)
	dup=$(sort <<<"$lines" | uniq -d | wc -l)
	lost=$(comm -13 <(sort -u <<<"$lines") <(sort <<<"$want_lines") | wc -l)
	extra=$(comm -23 <(sort -u <<<"$lines") <(sort <<<"$want_lines") | wc -l)
	[ "$dup" -eq 0 ] || fail "duplicated steps in metrics.jsonl: $(sort <<<"$lines" | uniq -d | tr '\n' ' ')"
	[ "$lost" -eq 0 ] || fail "lost steps in metrics.jsonl: $(comm -13 <(sort -u <<<"$lines") <(sort <<<"$want_lines") | tr '\n' ' ')"
	[ "$extra" -eq 0 ] || fail "unexpected lines in metrics.jsonl: $(comm -23 <(sort -u <<<"$lines") <(sort <<<"$want_lines") | tr '\n' ' ')"
	[ "$lines" = "$want_lines" ] || [ "$dup$lost$extra" != 000 ] || fail "metrics.jsonl's lines are out of order"
else
	fail "no metrics.jsonl"
	lost=$steps
fi
for kind in train val; do
	counts=$(for f in "$run"/trajectories/$kind-step-*.jsonl; do [ -f "$f" ] && wc -l <"$f"; done | sort -u | wc -l)
	[ "$counts" -le 1 ] || fail "the $kind trajectory files do not all have the same number of lines"
done

# The checkpoints and the export.
n=$(verify_checkpoints)
corrupt=$((corrupt + n))
[ "$n" -eq 0 ] || fail "at the end: $n corrupt checkpoint(s)"
if ! "$ragen" export --model "$run/export" --out "$work/export-copy" >"$work/logs/export.log" 2>&1; then
	fail "ragen export of the run's export failed: $(tail -1 "$work/logs/export.log")"
fi

# The same run straight through: the record must match but for timings.
if [ "$exact" = 1 ] && [ ${#failures[@]} -eq 0 ]; then
	straight="$work/straight"
	rm -rf "$straight"
	train_into "$straight"
	if "${train[@]}" >"$work/logs/straight.log" 2>&1; then
		strip='fromjson | with_entries(select(.key | test("^(timing_s|perf)/") | not))'
		if ! cmp -s <(jq -cR "$strip" "$metrics") <(jq -cR "$strip" "$straight/metrics.jsonl"); then
			fail "the killed run's metrics differ from an uninterrupted run's (beyond timing_s/ and perf/)"
		fi
	else
		fail "the uninterrupted run failed: $(tail -1 "$work/logs/straight.log")"
	fi
fi

panics=$(grep -lE '^panic:|fatal error:|SIGSEGV|goroutine [0-9]+ \[' "$work"/logs/*.log 2>/dev/null | wc -l)
[ "$panics" -eq 0 ] || fail "$panics log(s) hold a panic: $(grep -lE '^panic:|fatal error:|SIGSEGV' "$work"/logs/*.log | tr '\n' ' ')"

echo
echo "kill-soak summary ($work, seed $seed)"
printf '  %-30s %s\n' "kills" "$kills of $want" \
	"launches" "$launches" \
	"clean resumes" "$clean of $resumes ($killed_resuming killed before they finished resuming)" \
	"launches that failed" "$failed" \
	"corrupt checkpoints" "$corrupt" \
	"lost steps" "$lost" \
	"duplicated steps" "$dup" \
	"torn metrics lines" "$torn" \
	"logs with a panic" "$panics"
if [ ${#failures[@]} -gt 0 ]; then
	echo "FAILED: ${#failures[@]} invariant(s)"
	printf '  - %s\n' "${failures[@]}"
	exit 1
fi
echo "every invariant held"
