#!/usr/bin/env bash
# bench/endpoint_bench.sh - the endpoint on a veth pair between two namespaces, in ONE run,
# beside the references it is measured against:
#
#   bare      bench/bare_echo --grow: header-swap echo over the same I/O backend, no crypto,
#             responses 32 bytes longer like ours (the I/O limit)
#   stream    secho serve, port 4000 (streaming engine)
#   offload   secho serve, port 4001 (offload engine, OpenSSL EVP)
#   naive     bench/naive_peer: UDP socket server, OpenSSL EVP per packet, kernel IP stack
#
# Each of bare, stream and offload runs with every worker count of the workers axis
# (ENDPOINT_BENCH_WORKERS, default "1 2 2p"): N data-path workers (secho serve --workers N,
# bare_echo --workers N: each a thread with its own socket in an AF_PACKET fanout group by
# flow hash), unpinned, or with "Np" pinned to CPUs 0..N-1 (--cpus). The ratios compare each
# target with the bare echo of the same workers, and each worker count with one worker.
#
# Load: bench/udp_load in raw AF_PACKET mode from the host namespace (the same generator for
# every target), flat out with a window of 1024, from 64 source ports (--flows 64: flows the
# fanout can spread; the same for one worker), for SECONDS per point; replies to secho are
# matched with --secho-key. Then the in-endpoint latency per engine with the data path
# busy-polling and one packet in flight (udp_load --window 1, blocking: on 2 cores a third
# spinning thread would take turns with the endpoint's two), read from the endpoint's own
# counters report, beside the cost of moving one cache line between the two CPUs
# (bench/xcore, before and after: the floor under that latency on veth). Prints markdown
# tables (docs/PERFORMANCE.md).
#
# usage: bench/endpoint_bench.sh [--latency-only] [SECONDS (default 4)] [REPEAT (default 3;
#        the median is kept)]
set -u
usage() {
	sed -n 's/^# \{0,1\}//; 2,/^usage/p' "$0" | sed '$d'
	echo "usage: bench/endpoint_bench.sh [--latency-only] [SECONDS (default 4)] [REPEAT (default 3)]"
	echo "  --latency-only   skip the sustained-rate table"
}
RATE=1
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--latency-only) RATE=0; shift ;;
	-*) echo "endpoint_bench: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) break ;;
	esac
done
SECS=${1:-4}
REP=${2:-3}
case $SECS$REP in *[!0-9]*) echo "endpoint_bench: SECONDS and REPEAT are whole numbers (see --help)" >&2; exit 2 ;; esac
[ "$SECS" -gt 0 ] && [ "$REP" -gt 0 ] || { echo "endpoint_bench: SECONDS and REPEAT must be above 0" >&2; exit 2; }
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
S=$ROOT/$BUILD/secho
B=$ROOT/$BUILD/bench
# shellcheck source=tests/sh/netns.sh
. "$ROOT/tests/sh/netns.sh"
if why=$(netns_unavailable); then echo "endpoint_bench: needs $why" >&2; exit 1; fi
D=$(mktemp -d /tmp/secho-bench.XXXXXX)
P=
stop_p() { [ -n "$P" ] && kill -TERM "$P" 2>/dev/null && wait "$P" 2>/dev/null; P=; }
# ENDPOINT_BENCH_LOGS=DIR keeps the last run's logs (serve, load, counters report) there.
# LAT_SERVE_ARGS="..." adds secho serve options for the latency part (e.g. --packet-tx sendmmsg).
# ENDPOINT_BENCH_SIZES="1440", ENDPOINT_BENCH_TARGETS="bare stream" and
# ENDPOINT_BENCH_WORKERS="1 2" narrow the rate table (the ratios need bare and 1, and the
# naive column naive).
cleanup() {
	stop_p
	netns_cleanup
	[ -n "${ENDPOINT_BENCH_LOGS:-}" ] && mkdir -p "$ENDPOINT_BENCH_LOGS" && cp "$D"/*.log "$D"/*.json "$ENDPOINT_BENCH_LOGS"/ 2>/dev/null
	rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
netns_setup || exit 1
"$S" keygen --key-id 9 --out "$D/key" >/dev/null || exit 1
GEN_MAC=02:00:00:00:01:01 # udp_load's source MAC (not the host interface's)

wait_file() { for _ in $(seq 1 50); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }

load() { # port size [extra udp_load args]: prints replies/s
	local port=$1 size=$2
	shift 2
	in_h "$B/udp_load" --mode packet --iface "$IF_H" --dst-mac "$MAC_E" --dst "$IP_E" \
		--port "$port" --size "$size" --count 100000000 --seconds "$SECS" --window 1024 \
		--timeout-ms 500 --flows 64 "$@" 2>&1 | sed -n 's/.* \([0-9.]*\) replies\/s.*/\1/p'
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 0)}'; }
# worker_args AXIS-VALUE: "N" -> --workers N; "Np" -> --workers N --cpus 0-(N-1)
worker_args() {
	case $1 in
	*p) echo "--workers ${1%p} --cpus $(seq -s, 0 $((${1%p} - 1)))" ;;
	*) echo "--workers $1" ;;
	esac
}
# shares of the packets answered per worker, as percentages ("51/49"), from their counts
shares() { awk '{for (i = 1; i <= NF; i++) t += $i; for (i = 1; i <= NF; i++) printf "%s%.0f", (i > 1 ? "/" : ""), (t ? 100 * $i / t : 0)}'; }

run_bare() { # size workers -> "pps cpu_ns shares"
	# shellcheck disable=SC2046
	ip netns exec "$NS_E" "$B/bare_echo" --io packet --iface "$IF_E" --seconds $((SECS + 3)) --grow \
		$(worker_args "$2") >"$D/bare.log" 2>&1 &
	P=$!
	wait_file "$D/bare.log" 'bare_echo: AF_' || true
	local pps
	pps=$(load 4000 "$1" --grow --no-check) # the same per-reply generator work as for secho
	stop_p
	echo "$pps $(sed -n 's/.* = \([0-9]*\) ns.*/\1/p' "$D/bare.log" | tail -1)" \
		"$(sed -n 's/^bare_echo: echoed per worker://p' "$D/bare.log" | shares)"
}
run_secho() { # port size workers [serve args] -> "pps cpu_ns shares"
	local port=$1 size=$2 w=$3
	shift 3
	# shellcheck disable=SC2046
	serve_start endpoint "$D/serve.log" --iface "$IF_E" --ip "$IP_E/24" --key "$D/key" \
		--state "$D/seq.state" --io packet $(worker_args "$w") "$@"
	local up=$?
	P=$SERVE_PID
	[ "$up" = 0 ] || { cat "$D/serve.log" >&2; return 1; }
	local pps
	pps=$(load "$port" "$size" --secho-key "$D/key")
	stop_p
	echo "$pps $(sed -n 's/.*, \([0-9]*\) ns per answered packet/\1/p' "$D/serve.log")" \
		"$(awk '/^  worker/ {printf "%s ", $6}' "$D/serve.log" | shares)"
}
run_naive() { # size -> "pps cpu_ns"
	in_e ip addr add "$IP_E/24" dev "$IF_E"
	in_e ip neigh replace "$IP_H" lladdr "$GEN_MAC" dev "$IF_E" nud permanent
	ip netns exec "$NS_E" "$B/naive_peer" --key "$D/key" --ip "$IP_E" --seconds $((SECS + 3)) >"$D/naive.log" 2>&1 &
	P=$!
	sleep 0.5
	local pps
	pps=$(load 4000 "$1" --secho-key "$D/key")
	stop_p
	in_e ip addr del "$IP_E/24" dev "$IF_E"
	echo "$pps $(sed -n 's/.*, \([0-9]*\) ns cpu per packet/\1/p' "$D/naive.log")"
}

run_target() { # name size workers -> "pps cpu_ns shares"
	case $1 in
	bare) run_bare "$2" "$3" ;;
	stream) run_secho 4000 "$2" "$3" ;;
	offload) run_secho 4001 "$2" "$3" ;;
	naive) run_naive "$2" ;;
	esac
}
# median_of "v1 v2 ...": the median; shares_of MEDIAN "pps:shares ...": the median run's shares
median_of() { printf '%s\n' $1 | median; }
# ratio_of "a1 a2 ..." "b1 b2 ...": the median of the runs' ratios a_i / b_i ("-" without b)
ratio_of() {
	[ -n "$2" ] || { echo -; return; }
	awk -v a="$1" -v b="$2" 'BEGIN {
		n = split(a, x, " "); split(b, y, " "); m = 0
		for (i = 1; i <= n; i++) if (y[i] > 0) r[++m] = x[i] / y[i]
		if (!m) { print "-"; exit }
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
		printf "%.2f", r[int((m + 1) / 2)] }'
}
shares_of() { printf '%s\n' $2 | awk -F: -v m="$1" '$1 == m {print $2; exit}'; }

if [ "$RATE" = 1 ]; then
WORKERS=${ENDPOINT_BENCH_WORKERS:-1 2 2p}
TARGETS=${ENDPOINT_BENCH_TARGETS:-bare stream offload naive}
echo "## Sustained rate on a veth pair (AF_PACKET, blocking; ${SECS} s per point, median of $REP)"
echo
echo "Workers: N = --workers N, unpinned; Np = pinned to CPUs 0..N-1 (--cpus). Ratios: the"
echo "median over the $REP rounds of each run's ratio to its peer in the same round (every"
echo "round runs every target and worker count once). Shares: each worker's part of the"
echo "packets answered (%), in the median run. $(nproc) CPUs, shared with the load generator."
echo
echo "| payload | workers | target | answered pps | endpoint CPU per packet (ns) | rate vs bare | CPU vs bare | rate vs 1 worker | rate vs naive | worker shares (%) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for size in ${ENDPOINT_BENCH_SIZES:-64 1440}; do
	# The repetitions go round every target and worker count in turn, so that a change in
	# the shared machine's load over the run falls on all of them alike. (PP: runs' pps,
	# CC: their CPU ns per packet, HH: their shares, RR: the medians; P is the PID.)
	declare -A PP CC HH RR
	for _ in $(seq 1 "$REP"); do
		for t in $TARGETS; do
			for w in $WORKERS; do
				[ "$t" = naive ] && [ "$w" != "${WORKERS%% *}" ] && continue
				read -r a b c <<<"$(run_target "$t" "$size" "$w")"
				PP[$t$w]+="${a:-0} " CC[$t$w]+="${b:-0} " HH[$t$w]+="${a:-0}:${c:--} "
			done
		done
	done
	for k in "${!PP[@]}"; do
		RR[$k]=$(median_of "${PP[$k]}")
		HH[$k]=$(shares_of "${RR[$k]}" "${HH[$k]}")
	done
	# Ratios: the median of each run's ratio to its peer of the same round.
	n1=${WORKERS%% *}
	for w in $WORKERS; do
		for t in $TARGETS; do
			[ "$t" = naive ] && [ "$w" != "$n1" ] && continue
			k=$t$w
			rb=$(ratio_of "${PP[$k]}" "${PP[bare$w]:-}")
			cb=$(ratio_of "${CC[$k]}" "${CC[bare$w]:-}")
			r1=$(ratio_of "${PP[$k]}" "${PP[$t$n1]:-}")
			rn=$(ratio_of "${PP[$k]}" "${PP[naive$n1]:-}")
			echo "| $size | $w | $t | ${RR[$k]} | $(median_of "${CC[$k]}") | $rb | $cb | $r1 | $rn | ${HH[$k]:--} |"
		done
	done
	unset PP CC HH RR
done
echo
fi

echo "## In-endpoint latency (secho serve --busy-poll, one packet in flight, 64 B)"
echo
xc1=$("$B/xcore" --rounds 100000 --repeat 3 --json | jq -r '"\(.one_way_ns | floor) ns (\(.one_way_cycles | floor) TSC cycles)"')
echo "| engine | p50 ns | p99 ns | p50 TSC cycles | mean ns | headroom pps |"
echo "|---|---|---|---|---|---|"
# shellcheck disable=SC2086
serve_start endpoint "$D/serve.log" --iface "$IF_E" --ip "$IP_E/24" --key "$D/key" \
	--state "$D/seq.state" --io packet --busy-poll ${LAT_SERVE_ARGS:-}
P=$SERVE_PID
for port in 4000 4001; do
	in_h "$B/udp_load" --mode packet --iface "$IF_H" --dst-mac "$MAC_E" --dst "$IP_E" \
		--port "$port" --size 64 --count 5000 --seconds 20 --window 1 \
		--secho-key "$D/key" >"$D/lat$port.log" 2>&1
done
in_h "$S" host counters --key "$D/key" --iface "$IF_H" --dst-mac "$MAC_E" --json >"$D/c.json"
stop_p
for e in streaming offload; do
	jq -r --arg e "$e" '.report.engines[$e] | "| \($e) | \(.latency_ns.p50) | \(.latency_ns.p99) | \(.latency_cycles.p50) | \(.latency_ns.mean) | \(.headroom_pps) |"' "$D/c.json"
done
ratio=$(jq -r '.report.engines | (.offload.latency_ns.p50 / .streaming.latency_ns.p50 * 10 | floor / 10)' "$D/c.json")
xc2=$("$B/xcore" --rounds 100000 --repeat 3 --json | jq -r '"\(.one_way_ns | floor) ns (\(.one_way_cycles | floor) TSC cycles)"')
echo
echo "one cache line moved between the two CPUs (bench/xcore, before / after): $xc1 / $xc2;"
echo "on veth the RX frame is written on the sending CPU, so every p50 above includes at least one."
echo
echo "offload/streaming p50 latency ratio: ${ratio}x (the seed's: 14.7x)"
echo
echo "host RTT with one packet in flight (udp_load, blocking): streaming $(sed -n 's/.*rtt \(p50 [0-9.]* us p99 [0-9.]* us\).*/\1/p' "$D/lat4000.log"); offload $(sed -n 's/.*rtt \(p50 [0-9.]* us p99 [0-9.]* us\).*/\1/p' "$D/lat4001.log")"
