#!/usr/bin/env bash
# tests/run.sh - run every test and print the totals.
#
# Runs, each under a time limit:
#   $BUILD/tests/test_*          unit and differential test programs
#   $BUILD/asan/tests/test_*     the same programs built with ASan+UBSan (when present)
#   $BUILD/tsan/tests/test_*     the multi-threaded ones built with TSan (when present): a
#                                data race or a lock-order problem fails the program
#   tests/sh/test_*.sh           command-line, end-to-end and network tests
# Every program prints PASS/FAIL/UNAVAILABLE lines (tests/unit/harness.h); this script
# counts them. A program that exits non-zero without printing FAIL counts as one failure.
# The closing line is "N passed, N failed, N skipped" (skipped = UNAVAILABLE here).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD SECHO_BIN="$PWD/$BUILD/secho" SECHO_ROOT="$PWD"
ONLY=${1:-}

pass=0 fail=0 unavail=0
log=$(mktemp /tmp/secho-test.XXXXXX)
trap 'rm -f "$log"' EXIT

run_one() { # label limit_seconds command...
	local label=$1 limit=$2
	shift 2
	[ -n "$ONLY" ] && [[ "$label" != *"$ONLY"* ]] && return 0
	printf '== %s\n' "$label"
	local t0=$SECONDS
	timeout --signal=TERM --kill-after=10 "$limit" "$@" >"$log" 2>&1
	local rc=$?
	sed 's/^/   /' "$log" | grep -v '^   PASS \|^   FAIL \|^   UNAVAILABLE ' | head -200
	grep '^PASS \|^FAIL \|^UNAVAILABLE ' "$log" | sed "s|^|   |"
	local p f u
	p=$(grep -c '^PASS ' "$log")
	f=$(grep -c '^FAIL ' "$log")
	u=$(grep -c '^UNAVAILABLE ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		if [ "$rc" -eq 124 ]; then
			echo "   FAIL $label (timed out after ${limit}s)"
		else
			echo "   FAIL $label (exited with status $rc)"
		fi
		f=1
	fi
	pass=$((pass + p)) fail=$((fail + f)) unavail=$((unavail + u))
	printf '   -- %s: %d passed, %d failed, %d unavailable (%ds)\n' "$label" "$p" "$f" "$u" \
		$((SECONDS - t0))
}

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" 600 "$t"
done
for t in "$BUILD"/asan/tests/test_*; do
	[ -x "$t" ] || continue
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
		SECHO_TEST_QUICK=1 run_one "asan/$(basename "$t")" 600 "$t"
done
for t in "$BUILD"/tsan/tests/test_*; do
	[ -x "$t" ] || continue
	TSAN_OPTIONS=halt_on_error=0:exitcode=66:second_deadlock_stack=1 \
		SECHO_TEST_QUICK=1 run_one "tsan/$(basename "$t")" 600 "$t"
done
for t in tests/sh/test_*.sh; do
	[ -f "$t" ] || continue
	run_one "$(basename "$t")" 600 bash "$t"
done

echo
[ "$unavail" -gt 0 ] && echo "$unavail unavailable here (not counted as passed; reasons above)"
echo "$pass passed, $fail failed, $unavail skipped"
[ "$fail" -eq 0 ]
