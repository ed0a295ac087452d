#!/usr/bin/env bash
# tests/sh/test_fuzz.sh - run each libFuzzer target for a bounded time.
#
#   fuzz_parse     the endpoint's request parse + rebuild invariants   (tests/fuzz/corpus)
#   fuzz_dissect   the L2-L4 dissector, and the endpoint parse against it
#                  (tests/fuzz/corpus-dissect and tests/fuzz/corpus)
#   fuzz_keyfile   the key file parser                        (tests/fuzz/corpus-keyfile)
#   fuzz_seqstate  the sequence state file parser             (tests/fuzz/corpus-seqstate)
#   fuzz_verify    the host tool's verifier on untrusted frames (tests/fuzz/corpus-verify)
#   fuzz_flow      the flow table's update: frame streams through tiny tables, one at a
#                  time and in bursts, every frame accounted for   (tests/fuzz/corpus-flow)
#   fuzz_capfile   the capture reader: pcap and pcapng blocks, interface options (if_tsresol,
#                  if_tsoffset), Linux cooked records       (tests/fuzz/corpus-capfile)
#   fuzz_tls       the tls feature set: ClientHello (with JA3/JA4), ServerHello, Certificate
#                  and DER parses, the per-flow state over segments   (tests/fuzz/corpus-tls)
#   fuzz_quic      the quic feature set: datagrams of a flow, the header and frame
#                  parsers, Initials sealed here that must open   (tests/fuzz/corpus-quic)
#   fuzz_dns       the dns feature set: messages, names, UDP and TCP flows, JSON
#                  (tests/fuzz/corpus-dns)
#   fuzz_http      the http feature set: first lines, field lines, TCP flows, JSON
#                  (tests/fuzz/corpus-http)
#   fuzz_wg        the wg feature set: messages, datagram flows   (tests/fuzz/corpus-wg)
#   fuzz_ipfix_feat  the feature sets' IPFIX encoding: every set's data, from states fed a
#                  flow of packets, walked against its template; stale bytes never read
#                                                        (tests/fuzz/corpus-ipfix-feat)
#
# Uses $BUILD/fuzz/<target> (built by `make fuzz`), starting from a temporary copy of the
# seed corpora so the repository's are never modified. Prints PASS, FAIL (with the crash
# input's path kept for replay) or UNAVAILABLE per target.
#   SECHO_FUZZ_SECONDS   time budget of fuzz_parse (default 20); fuzz_dissect gets half of
#                        it, the parsers of files and the verifier 10 s each, the feature
#                        parsers 5 s each (at most it)
#   SECHO_FUZZ_JOBS      targets run at once (default: the CPUs, nproc): each fuzzer is one
#                        process on one CPU, and its budget is time, so running them side by
#                        side shortens the test without shortening any target's run; their
#                        reports are printed in the order below
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
SECS=${SECHO_FUZZ_SECONDS:-20}
HALF=$(((SECS + 1) / 2))
TEN=$((SECS < 10 ? SECS : 10))
FIVE=$((SECS < 5 ? SECS : 5)) # the feature parsers: each fuzzed for minutes when written
JOBS=${SECHO_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
case "$JOBS" in '' | *[!0-9]* | 0) JOBS=1 ;; esac
rc_all=0
OUT=$(mktemp -d /tmp/secho-fuzz-out.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$OUT"' EXIT

# run_target NAME SECONDS MAX_LEN TITLE CORPUS_DIR...
run_target() {
	local target=$1 secs=$2 maxlen=$3 title=$4
	shift 4
	local fuzz="$BUILD/fuzz/$target" name="fuzz: $title (${secs}s)"
	if [ ! -x "$fuzz" ]; then
		echo "UNAVAILABLE $name: $fuzz not built (run make fuzz; needs clang and libclang-rt-14-dev)"
		return 0
	fi
	local work
	work=$(mktemp -d /tmp/secho-fuzz.XXXXXX)
	mkdir -p "$work/corpus" "$work/artifacts"
	local d
	for d in "$@"; do
		cp "$ROOT/$d"/* "$work/corpus/"
	done
	local nseed
	nseed=$(ls "$work/corpus" | wc -l)
	(
		cd "$work" &&
			timeout --signal=TERM --kill-after=10 $((secs + 60)) "$fuzz" \
				-max_total_time="$secs" -max_len="$maxlen" -timeout=10 -rss_limit_mb=1024 \
				-print_final_stats=1 -artifact_prefix="$work/artifacts/" corpus \
				>"$work/log" 2>&1
	)
	local rc=$?
	local runs
	runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$')
	if [ "$rc" -eq 0 ] && [ -n "$runs" ] && [ "$runs" -gt 0 ]; then
		echo "  $target: $runs executions from $nseed seeds, corpus now $(ls "$work/corpus" | wc -l) inputs"
		echo "PASS $name"
		rm -rf "$work"
		return 0
	fi
	grep -B2 -A20 'ERROR\|invariant failed\|SUMMARY' "$work/log" | head -60
	local keep=/tmp/secho-fuzz-crash.$target.$$
	cp -r "$work/artifacts" "$keep" 2>/dev/null && echo "  crash inputs kept in $keep"
	echo "FAIL $name (fuzzer exit status $rc)"
	rm -rf "$work"
	return 1
}

# start NAME ARGS...: run_target in the background, its report in $OUT/N (N: the order),
# at most $JOBS at once.
n=0
start() {
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
	done
	local i
	i=$(printf '%02d' "$n")
	n=$((n + 1))
	(
		run_target "$@"
		echo $? >"$OUT/$i.rc"
	) >"$OUT/$i" 2>&1 &
}

start fuzz_parse "$SECS" 2048 "wire parse + rebuild invariants" tests/fuzz/corpus
start fuzz_dissect "$HALF" 2048 "L2-L4 dissector invariants, endpoint parse agrees" \
	tests/fuzz/corpus-dissect tests/fuzz/corpus
start fuzz_keyfile "$TEN" 4096 "key file parser" tests/fuzz/corpus-keyfile
start fuzz_seqstate "$TEN" 256 "sequence state file parser" tests/fuzz/corpus-seqstate
start fuzz_verify "$TEN" 9100 "host verifier on untrusted frames" tests/fuzz/corpus-verify
start fuzz_flow "$HALF" 4096 "flow table update: bounded, consistent, every frame counted" \
	tests/fuzz/corpus-flow
start fuzz_capfile "$TEN" 4096 "capture files: pcap and pcapng blocks, interface options" \
	tests/fuzz/corpus-capfile
start fuzz_tls "$FIVE" 4096 "tls: hello, certificate and DER parses, the per-flow state" \
	tests/fuzz/corpus-tls
start fuzz_quic "$FIVE" 4096 "quic: Initials, frames, reassembly, sealed Initials open" \
	tests/fuzz/corpus-quic
start fuzz_dns "$FIVE" 2048 "dns feature set: names, records, TCP reassembly, JSON" \
	tests/fuzz/corpus-dns
start fuzz_http "$FIVE" 4096 "http feature set: heads, lines, TCP streams, JSON" \
	tests/fuzz/corpus-http
start fuzz_wg "$FIVE" 2048 "wg feature set: messages, flows" tests/fuzz/corpus-wg
start fuzz_ipfix_feat "$FIVE" 8192 "feature sets' IPFIX data against their templates" \
	tests/fuzz/corpus-ipfix-feat
wait
for f in "$OUT"/[0-9][0-9]; do
	cat "$f"
	[ "$(cat "$f.rc" 2>/dev/null)" = 0 ] || rc_all=1
done
[ "$n" -eq "$(ls "$OUT" | grep -c '^[0-9][0-9]$')" ] || { echo "FAIL fuzz: a target left no report"; rc_all=1; }
exit $rc_all
