#!/usr/bin/env bash
# tests/sh/test_fuzz.sh - run the wire parser's libFuzzer target for a bounded time.
#
# Uses $BUILD/fuzz/fuzz_parse (built by `make fuzz`), starting from a temporary copy of
# tests/fuzz/corpus so the repository's seed corpus is never modified. Prints PASS, FAIL
# (with the crash input's path kept for replay) or UNAVAILABLE.
#   SECHO_FUZZ_SECONDS   time budget (default 20)
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
FUZZ="$BUILD/fuzz/fuzz_parse"
SECS=${SECHO_FUZZ_SECONDS:-20}
name="fuzz: wire parse + rebuild invariants (${SECS}s)"

if [ ! -x "$FUZZ" ]; then
	echo "UNAVAILABLE $name: $FUZZ not built (run make fuzz; needs clang and libclang-rt-14-dev)"
	exit 0
fi
work=$(mktemp -d /tmp/secho-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/artifacts"
cp "$ROOT"/tests/fuzz/corpus/* "$work/corpus/"
nseed=$(ls "$work/corpus" | wc -l)

cd "$work"
timeout --signal=TERM --kill-after=10 $((SECS + 60)) "$FUZZ" -max_total_time="$SECS" \
	-max_len=2048 -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
	-artifact_prefix="$work/artifacts/" corpus >"$work/log" 2>&1
rc=$?
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$')
if [ "$rc" -eq 0 ] && [ -n "$runs" ] && [ "$runs" -gt 0 ]; then
	echo "  $runs executions from $nseed seeds, corpus now $(ls corpus | wc -l) inputs"
	echo "PASS $name"
	exit 0
fi
grep -B2 -A20 'ERROR\|invariant failed\|SUMMARY' "$work/log" | head -60
keep=/tmp/secho-fuzz-crash.$$
cp -r "$work/artifacts" "$keep" 2>/dev/null && echo "  crash inputs kept in $keep"
echo "FAIL $name (fuzzer exit status $rc)"
exit 1
