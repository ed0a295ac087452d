#!/usr/bin/env bash
# tests/sh/test_fuzz.sh - run every libFuzzer target for a bounded time.
#
# Targets (built by `make fuzz` into $BUILD/fuzz/), each from a temporary copy of its seed
# corpus so that the repository's seeds are never modified:
#   fuzz_parse     the wire parser and the response rebuild   tests/fuzz/corpus/
#   fuzz_keyfile   the key file parser                        tests/fuzz/corpus-keyfile/
#   fuzz_seqstate  the sequence state file parser             tests/fuzz/corpus-seqstate/
#   fuzz_verify    the host tool's response verifier          tests/fuzz/corpus-verify/
# Prints PASS, FAIL (with the crash input's path kept for replay) or UNAVAILABLE per target.
#   SECHO_FUZZ_SECONDS   time budget of the wire parser (default 20); the others get 10
#                        each, or this value when it is smaller
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
SECS=${SECHO_FUZZ_SECONDS:-20}
OTHER=$((SECS < 10 ? SECS : 10))
work=$(mktemp -d /tmp/secho-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
failed=0

# fuzz NAME CORPUS SECONDS MAX_LEN DESCRIPTION
fuzz() {
	local t=$1 corpus=$2 secs=$3 maxlen=$4 name="fuzz: $5 (${3}s)" bin=$BUILD/fuzz/$1 rc runs
	if [ ! -x "$bin" ]; then
		echo "UNAVAILABLE $name: $bin not built (run make fuzz; needs clang and libclang-rt-14-dev)"
		return
	fi
	mkdir -p "$work/$t/corpus" "$work/$t/artifacts"
	cp "$ROOT/tests/fuzz/$corpus"/* "$work/$t/corpus/"
	local nseed
	nseed=$(ls "$work/$t/corpus" | wc -l)
	(cd "$work/$t" && timeout --signal=TERM --kill-after=10 $((secs + 60)) "$bin" \
		-max_total_time="$secs" -max_len="$maxlen" -timeout=10 -rss_limit_mb=1024 \
		-print_final_stats=1 -artifact_prefix="$work/$t/artifacts/" corpus >log 2>&1)
	rc=$?
	runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$t/log" | grep -o '[0-9]*$')
	if [ "$rc" -eq 0 ] && [ -n "$runs" ] && [ "$runs" -gt 0 ]; then
		echo "  $t: $runs executions from $nseed seeds, corpus now $(ls "$work/$t/corpus" | wc -l) inputs"
		echo "PASS $name"
		return
	fi
	grep -B2 -A20 'ERROR\|invariant failed\|SUMMARY' "$work/$t/log" | head -60
	local keep=/tmp/secho-fuzz-crash-$t.$$
	cp -r "$work/$t/artifacts" "$keep" 2>/dev/null && echo "  crash inputs kept in $keep"
	echo "FAIL $name (fuzzer exit status $rc)"
	failed=1
}

fuzz fuzz_parse corpus "$SECS" 2048 "wire parse + rebuild invariants"
fuzz fuzz_keyfile corpus-keyfile "$OTHER" 4096 "key file parser"
fuzz fuzz_seqstate corpus-seqstate "$OTHER" 256 "sequence state file parser"
fuzz fuzz_verify corpus-verify "$OTHER" 9100 "host verifier on untrusted frames"
[ "$failed" -eq 0 ]
