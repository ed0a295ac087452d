#!/usr/bin/env bash
# tests/sh/test_workers.sh - secho serve --workers 2: two data-path workers, each on a
# receive queue of its own, on a veth pair with two queues at each end.
#
#   +--- ns $NS_H (host) --------------------+        +--- ns $NS_E (endpoint) ----------+
#   | secho host, raw frames, pinned to      |        | secho serve --workers 2          |
#   | CPU 0 or CPU 1: on veth the sender's   |========|   AF_XDP: a socket on queue 0,   |
#   | CPU picks the queue                    |  veth  |   another on queue 1             |
#   | $IF_H 192.0.2.1, 2 RX + 2 TX queues    |        |   AF_PACKET: a fanout group by   |
#   +----------------------------------------+        |   flow hash; $IF_E 2 + 2 queues  |
#                                                      +----------------------------------+
# For AF_XDP and for AF_PACKET:
#  1. both workers answer, the host verifies every response, and the endpoint answered
#     each request once (AF_XDP: the requests sent from CPU q reach worker q and only it;
#     AF_PACKET: each host run is a new flow, runs until both workers had some);
#  2. no sequence number is seen twice across the workers (secho host --seq-log);
#  3. the counters add up: in a live counters report the workers' shares sum to the totals
#     and rx_frames = tx_frames + drops + 1 (the report's own request); in the summary at
#     exit the workers' lines sum to the totals and rx = tx + drops;
#  4. one flow stays on one worker, in order: a load on one path from one CPU is received
#     by one worker, and its sequence numbers only increase.
# Then (AF_PACKET, then AF_XDP): kill -9 during a load from both CPUs, restart with two
# workers, more traffic: no sequence number seen twice over both runs, and the restart
# numbers above everything the first run used.
# The wire is tests/sh/netns.sh's (`secho lab up --queues 2`: two RX and two TX queues at
# each end), with its names, addresses, clean-up and helpers (running, stop_job).
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
S=${SECHO_BIN:-$ROOT/build/secho}
# shellcheck source=tests/sh/netns.sh
. "$ROOT/tests/sh/netns.sh"

if why=$(netns_unavailable); then
	echo "UNAVAILABLE workers: $why"
	exit 0
fi
D=$(mktemp -d /tmp/secho-workers.XXXXXX)
chmod 700 "$D"
EP=
cleanup() { stop_ep TERM; netns_cleanup; rm -rf "$D"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; }
check() { # description, shell condition (one string, evaluated)
	if eval "$2"; then pass "$1"; else fail "$1"; fi
}

netns_setup --queues 2 || { echo "FAIL workers: cannot build the two-queue veth pair"; exit 1; }

# Two CPUs to pin the workers and the senders to (the sender's CPU picks the veth queue).
CPUS=$(taskset -pc $$ 2>/dev/null | sed 's/.*: //')
C0=$(echo "$CPUS" | tr ',-' '  ' | awk '{print $1}')
C1=$(for c in $(seq 0 255); do taskset -c "$c" true 2>/dev/null && [ "$c" != "$C0" ] && { echo "$c"; break; }; done)
if [ -z "$C1" ]; then
	echo "UNAVAILABLE workers: one CPU only ($CPUS): two queues are fed from two CPUs"
	exit 0
fi
"$S" keygen --key-id 61 --out "$D/key" >/dev/null || { fail "keygen"; exit 1; }

start_ep() { # LOG serve-args...: the endpoint up with two workers (netns.sh: serve_start)
	local log=$1
	shift
	serve_start endpoint "$log" --iface "$IF_E" --ip "$IP_E/24" --key "$D/key" \
		--state "$D/seq.state" --workers 2 --cpus "$C0,$C1" --report-rate 50 "$@"
	local rc=$?
	EP=$SERVE_PID
	return $rc
}
# start_ep_retry LOG args...: start_ep, again (bounded) while the kernel is still releasing
# the AF_XDP queues of a killed endpoint (EBUSY: released asynchronously, see af_xdp.c)
start_ep_retry() {
	local i
	for i in 1 2 3 4 5 6; do
		start_ep "$@" && return 0
		stop_ep KILL
		grep -q 'already has an AF_XDP socket' "$1" || return 1
		echo "  (restart $i: the kernel is still releasing the killed endpoint's AF_XDP queues)"
		sleep 0.5
	done
	return 1
}
host_on() { # CPU subcommand args...: the host tool in raw mode, pinned
	local cpu=$1 sub=$2
	shift 2
	in_h taskset -c "$cpu" "$S" host "$sub" --key "$D/key" --iface "$IF_H" --dst-mac "$MAC_E" \
		--src-ip "$IP_H" --dst-ip "$IP_E" --quiet --timeout 1000 "$@"
}
counters() { host_on "$C0" counters --json >"$1" 2>/dev/null; }
jqn() { jq -r "$1" "$2" 2>/dev/null; }
dups() { sort -n "$1" | uniq -d | wc -l; }
# paired CPU LOG JSON: 100 packets per path; prints the number verified (0 on failure)
paired() {
	host_on "$1" paired --count 100 --json --seq-log "$2" >"$3" 2>"$3.err" || {
		echo "  (host paired on CPU $1 failed: $(jq -c '[.paths[] | {lost, failed}]' "$3" 2>/dev/null) $(head -c 200 "$3.err"))" >&2
	}
	jqn '[.paths[].verified] | add // 0' "$3"
}
# adds_up JSON: the live report's shares against its totals, and rx = tx + drops + 1
adds_up() {
	jq -e '.report as $r | $r.workers.n == 2 and
		([$r.workers.rx_frames[]] | add) == $r.rx_frames and
		([$r.workers.tx_frames[]] | add) == $r.tx_frames and
		([$r.workers.streaming[]] | add) == $r.engines.streaming.packets and
		([$r.workers.offload[]] | add) == $r.engines.offload.packets and
		([$r.workers.drops[]] | add) == ([$r.drops[]] | add // 0) and
		$r.rx_frames == $r.tx_frames + ([$r.drops[]] | add // 0) + 1' "$1" >/dev/null
}
# summary_adds_up LOG: the exit summary's worker lines against its totals
summary_adds_up() {
	awk '/^  frames/ {rx = $3; tx = $5}
		/^  drops/ {d = $2 + 0}
		/^  worker/ {n++; wrx += $6; wtx += $8; wd += $14}
		END {exit !(n == 2 && rx > 0 && wrx == rx && wtx == tx && wd == d && rx == tx + d)}' "$1"
}

for io in xdp packet; do
	L=$D/$io
	if ! start_ep "$L.log" --io "$io"; then
		fail "$io: endpoint with two workers started"
		sed 's/^/  /' "$L.log" | head -5
		stop_ep TERM
		continue
	fi
	grep '^secho serve: workers' "$L.log" | sed 's/^/  /'
	# 1. both workers answer, everything verified
	v0=$(paired "$C0" "$L.seqs" "$L.p0.json")
	v1=$(paired "$C1" "$L.seqs" "$L.p1.json")
	total=$((v0 + v1))
	runs=2
	if [ "$io" = packet ]; then
		# each run is a new flow (a new source port): until both workers had one
		while counters "$L.c.json" && [ "$(jqn '[.report.workers.rx_frames[] | select(. > 1)] | length' "$L.c.json")" != 2 ] &&
			[ "$runs" -lt 10 ]; do
			v=$(paired "$((runs % 2 ? C1 : C0))" "$L.seqs" "$L.p.json")
			total=$((total + v))
			runs=$((runs + 1))
		done
	fi
	counters "$L.c.json"
	shares=$(jqn '.report.workers | "rx \(.rx_frames) streaming \(.streaming) offload \(.offload)"' "$L.c.json")
	echo "  $io: $runs host runs, $total of $((runs * 200)) verified; per worker: $shares"
	answers=$(jqn '.report.engines.streaming.packets + .report.engines.offload.packets' "$L.c.json")
	check "$io, 2 workers: every response verified ($total of $((runs * 200))), each request answered once ($answers answers)" \
		'[ "$total" = $((runs * 200)) ] && [ "$answers" = "$total" ]'
	if [ "$io" = xdp ]; then
		check "xdp: the requests from CPU $C0 answered by worker 0, from CPU $C1 by worker 1 (queue = sender's CPU)" \
			'[ "$(jqn ".report.workers | [.streaming, .offload] | flatten | join(\",\")" "$L.c.json")" = "100,100,100,100" ]'
	else
		check "packet: both workers of the fanout group answered" \
			'[ "$(jqn "[.report.workers.rx_frames[] | select(. > 1)] | length" "$L.c.json")" = 2 ]'
	fi
	# 2. no number twice
	n=$(wc -l <"$L.seqs")
	check "$io: no sequence number seen twice across the workers ($n seen, $(dups "$L.seqs") repeated)" \
		'[ "$n" -ge 400 ] && [ "$(dups "$L.seqs")" = 0 ]'
	# 3. the live report adds up (and secho host counters shows each worker's share)
	check "$io: live report: the workers' shares sum to the totals, rx = tx + drops + 1" \
		'adds_up "$L.c.json"'
	host_on "$C0" counters >"$L.table" 2>&1
	check "$io: secho host counters prints a row per worker" \
		'[ "$(grep -c "^[01]  *[0-9]" "$L.table")" = 2 ] && grep -q "^worker  *rx_frames" "$L.table"'
	# 4. one flow, one worker, in order (from the second CPU: on AF_XDP, worker 1)
	counters "$L.c1.json"
	host_on "$C1" load --path stream --seconds 1 --rate 3000 --json --seq-log "$L.flow" >"$L.load.json" 2>/dev/null
	lrc=$?
	counters "$L.c2.json"
	ver=$(jqn '.totals.streaming.verified' "$L.load.json")
	d0=$(($(jqn '.report.workers.rx_frames[0]' "$L.c2.json") - $(jqn '.report.workers.rx_frames[0]' "$L.c1.json")))
	d1=$(($(jqn '.report.workers.rx_frames[1]' "$L.c2.json") - $(jqn '.report.workers.rx_frames[1]' "$L.c1.json")))
	# (sort compares the 64-bit numbers exactly; awk's doubles would not)
	if sort -n -u -C "$L.flow"; then inc=increasing; else inc="NOT increasing"; fi
	echo "  $io: one flow from CPU $C1: ${ver:-?} verified (exit $lrc); received by the workers: +$d0, +$d1; its $(wc -l <"$L.flow") sequence numbers $inc"
	check "$io: one flow on one worker (the other saw at most the counters request), its numbers increasing" \
		'[ "$lrc" = 0 ] && [ "${ver:-0}" -gt 1000 ] && { [ "$d0" -le 1 ] || [ "$d1" -le 1 ]; } && [ $((d0 + d1)) -ge "$ver" ] && [ "$inc" = increasing ]'
	stop_ep TERM
	check "$io: exit summary: the workers' lines sum to the totals, rx = tx + drops" \
		'summary_adds_up "$L.log"'
	grep -A 9 '^secho serve: summary' "$L.log" | grep '^  \(frames\|drops\|worker\)' | sed 's/^/  /'
done

# 5. kill -9 under load and restart, with two workers
for io in packet xdp; do
	L=$D/k$io
	: >"$L.seqs"
	if ! start_ep "$L.log" --io "$io"; then
		fail "kill -9 ($io): endpoint started"
		stop_ep KILL
		continue
	fi
	host_on "$C0" load --seconds 3 --max-loss 100000000 --seq-log "$L.seqs" >/dev/null 2>&1 &
	l0=$!
	host_on "$C1" load --seconds 3 --max-loss 100000000 --seq-log "$L.seqs.1" >/dev/null 2>&1 &
	l1=$!
	sleep 1.5
	stop_ep KILL
	wait "$l0" "$l1"
	cat "$L.seqs.1" >>"$L.seqs"
	before=$(wc -l <"$L.seqs")
	max1=$(sort -n "$L.seqs" | tail -1)
	if ! start_ep_retry "$L.2.log" --io "$io"; then
		fail "kill -9 ($io): endpoint restarted with two workers"
		sed 's/^/  /' "$L.2.log" | head -5
		stop_ep KILL
		continue
	fi
	v=$(($(paired "$C0" "$L.seqs.2" "$L.p0.json") + $(paired "$C1" "$L.seqs.2" "$L.p1.json")))
	stop_ep TERM
	min2=$(sort -n "$L.seqs.2" | head -1)
	cat "$L.seqs.2" >>"$L.seqs"
	echo "  kill -9 ($io): $before numbers before the kill (up to ${max1:-?}), $v verified after the restart (from ${min2:-?}); $(dups "$L.seqs") repeated"
	check "kill -9 under load and restart ($io, 2 workers): no sequence number reused" \
		'[ "$before" -gt 1000 ] && [ "$v" = 400 ] && [ "$(dups "$L.seqs")" = 0 ] && [ "$min2" -gt "$max1" ]'
done
exit 0
