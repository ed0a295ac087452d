#!/usr/bin/env bash
# bench/flow_bench.sh - the flow meter offline beside softflowd and pmacctd (nfprobe), in
# one run, each exporting IPFIX to its own nfcapd from the same capture in the page cache.
#
#   bench/flow_bench.sh [--packets N] [--rounds R] [--profiles "light heavy"] [--dir D]
#                       [--encap KIND[:ID]]
#
# Profiles: the generator's light (about 200,000 connections, mean IP length about 290 B:
# NIX-like) and heavy (about 1,000 connections, Pareto-sized, mean IP length about 1,000 B:
# GEANT-like), N packets each (default 3,000,000), seed 1, written once into D (default
# /tmp/secho-flow-bench) and kept there for the next run; with --encap, every frame in that
# encapsulation (`secho flow gen --encap`: vxlan, mpls, ...; its own files, -KIND in their
# names): one tunnel, so the 5-tuple comparison below still names every flow once (the
# tunnel columns are checked by tests/sh/test_flow_gen.sh; peers that do not look into the
# tunnel are not exact). Each round runs, in turn:
#   secho 1 worker   secho flow --pcap F --collector udp://... (pinned to CPU 0)
#   secho 2 workers  the same with --workers 2 (CPUs 0 and 1)
#   softflowd        softflowd -d -r F -n ... -v 10 -m 1000000 -c none (CPU 0; its largest
#                    table, so that it does not split flows; without -c none it hangs in file
#                    mode)
#   pmacctd          pmacctd -f CONF: pcap_savefile F, plugin nfprobe, IPFIX (CPU 0; its core
#                    process and the plugin are two processes on one CPU)
# and reports per tool the median over the rounds of: packets per second (the capture's
# packets over the wall time of the run, export and exit included), CPU seconds (user +
# system, children included), peak RSS, what nfcapd received (flows, packets, bytes,
# sequence errors) and whether the records are exact: `nfdump -R` split into
# unidirectional flows (addresses, ports or ICMP type.code, protocol, packets, bytes) equal
# to the generator's truth. Then the ratio of each tool's median rate to softflowd's.
#
# Prerequisites (Debian: nfdump, softflowd, pmacct; not needed by `make test`, so not in
# scripts/deps.sh): a peer that is not installed is skipped with the reason, nfdump is
# required. Root (nfcapd -B, SO_RCVBUFFORCE). Run it under `flock /tmp/secho-bench.lock`.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S=${SECHO_BIN:-$ROOT/${BUILD:-build}/secho}
PACKETS=3000000 ROUNDS=3 PROFILES="light heavy" DIR=/tmp/secho-flow-bench ENCAP=
while [ $# -gt 0 ]; do
	case "$1" in
	--packets) PACKETS=$2 ;;
	--rounds) ROUNDS=$2 ;;
	--profiles) PROFILES=$2 ;;
	--dir) DIR=$2 ;;
	--encap) ENCAP=$2 ;;
	-h | --help)
		sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "flow_bench: unknown argument '$1' (see --help)" >&2
		exit 2
		;;
	esac
	shift 2 || { echo "flow_bench: '$1' needs a value" >&2; exit 2; }
done
[ -x "$S" ] || { echo "flow_bench: $S not built (make)"; exit 1; }
for t in nfcapd nfdump; do
	command -v $t >/dev/null || { echo "flow_bench: $t not installed (apt-get install nfdump)"; exit 1; }
done
TOOLS="secho-w1 secho-w2"
if command -v softflowd >/dev/null; then TOOLS="$TOOLS softflowd"; else
	echo "# softflowd skipped: not installed (apt-get install softflowd)"; fi
if command -v pmacctd >/dev/null; then TOOLS="$TOOLS pmacctd"; else
	echo "# pmacctd skipped: not installed (apt-get install pmacct)"; fi
mkdir -p "$DIR" || exit 1
W=$(mktemp -d /tmp/secho-flow-bench-run.XXXXXX)
NF_PID=
cleanup() {
	[ -n "$NF_PID" ] && kill -TERM "$NF_PID" 2>/dev/null && wait "$NF_PID" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# nfcapd_start, nfcapd_stop
# shellcheck source=tests/sh/flow_lib.bash
. "$ROOT/tests/sh/flow_lib.bash"

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# nfdump's records as unidirectional truth lines: src,dst,sport,dport|type.code,proto,pkts,bytes
nf_lines() {
	nfdump -R "$1" -q -N -6 -o 'fmt:%sa,%da,%sp,%dp,%pr,%ipkt,%ibyt,%opkt,%obyt' 2>/dev/null |
		tr -d ' ' | awk -F, '
		# the reverse direction of an ICMP query biflow carries its answer type (FLOW.md,
		# "The flow key": echo 8/0, timestamp 13/14, information 15/16, mask 17/18;
		# ICMPv6 echo 128/129, node information 139/140)
		function answer(pr, tc,   t, c) {
			t = tc; c = tc; sub(/\..*/, "", t); sub(/^[^.]*\./, "", c)
			if (pr == 1 && (t == 8 || t == 0)) t = 8 - t
			else if (pr == 1 && t >= 13 && t <= 18) t = (t % 2) ? t + 1 : t - 1
			else if (pr == 58 && (t == 128 || t == 139)) t = t + 1
			else if (pr == 58 && (t == 129 || t == 140)) t = t - 1
			return t "." c
		}
		{ print $1 "," $2 "," $3 "," $4 "," $5 "," $6 "," $7
			if ($8 > 0) { rs = $4; rd = $3
				if ($5 == 1 || $5 == 58) { rs = $3; rd = answer($5, $4) }
				print $2 "," $1 "," rs "," rd "," $5 "," $8 "," $9 } }' | LC_ALL=C sort
}

tool_cmd() { # tool pcap port -> CMD (the command line, pinned with taskset)
	local tool=$1 f=$2 port=$3
	case $tool in
	secho-w1)
		CMD=(taskset -c 0 "$S" flow --pcap "$f" --quiet --collector "udp://127.0.0.1:$port") ;;
	secho-w2)
		CMD=(taskset -c 0,1 "$S" flow --pcap "$f" --quiet --workers 2
			--collector "udp://127.0.0.1:$port") ;;
	softflowd)
		CMD=(taskset -c 0 softflowd -d -r "$f" -n "127.0.0.1:$port" -v 10 -m 1000000 -c none
			-p "$W/sf.pid") ;;
	pmacctd)
		printf '%s\n' "daemonize: false" "pcap_savefile: $f" "pcap_savefile_wait: false" \
			"plugins: nfprobe" "nfprobe_receiver: 127.0.0.1:$port" "nfprobe_version: 10" \
			"nfprobe_maxflows: 1000000" \
			"aggregate: src_host, dst_host, src_port, dst_port, proto, tos" \
			"plugin_buffer_size: 65536" "plugin_pipe_size: 33554432" \
			"pidfile: $W/pm.pid" "logfile: $W/pm.log" >"$W/pm.conf"
		CMD=(taskset -c 0 pmacctd -f "$W/pm.conf") ;;
	esac
}

echo "# flow_bench: $PACKETS packets per profile${ENCAP:+ in $ENCAP}, $ROUNDS rounds, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
	"family $(grep -m1 'cpu family' /proc/cpuinfo | awk '{print $NF}')" \
	"model $(grep -m1 '^model\s' /proc/cpuinfo | awk '{print $NF}'), $(nproc) CPUs;" \
	"shared machine, load at start $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $("$S" --version 2>/dev/null | head -1) | softflowd $(softflowd -h 2>&1 | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -1)" \
	"| $(pmacctd -V 2>&1 | head -1) | nfcapd $(nfdump -V | awk '{print $NF}')"
for p in $PROFILES; do
	f=$DIR/$p-$PACKETS.pcap
	[ -n "$ENCAP" ] && f=$DIR/$p-$PACKETS-${ENCAP//:/-}.pcap
	if [ ! -s "$f.truth.csv" ]; then
		"$S" flow gen --profile "$p" --packets "$PACKETS" --seed 1 -o "$f" -q \
			${ENCAP:+--encap "$ENCAP"} || exit 1
	fi
	cat "$f" >/dev/null # into the page cache
	grep -v '^#' "$f.truth.csv" | tail -n +2 | awk -F, '{ dp = $8; if ($4 == 1 || $4 == 58) dp = $9 "." $10;
		print $5 "," $6 "," $7 "," dp "," $4 "," $11 "," $12 }' | LC_ALL=C sort >"$W/want"
	tpk=$(sed -n 's/^# flow_packets=//p' "$f.truth.csv")
	tby=$(sed -n 's/^# flow_octets=//p' "$f.truth.csv")
	for t in $TOOLS; do : >"$W/$t.rows"; done
	for r in $(seq 1 "$ROUNDS"); do
		for t in $TOOLS; do
			# niced up: on a loaded machine a collector that waits for a CPU loses
			# datagrams
			nfcapd_start "$W/nf" "$W/nf.log" 16000000 nice -n -10 ||
				{ echo "flow_bench: nfcapd did not start"; exit 1; }
			tool_cmd "$t" "$f" "$NF_PORT"
			/usr/bin/time -o "$W/time" -f '%e %U %S %M' "${CMD[@]}" >"$W/$t.out" 2>&1
			rc=$?
			nfcapd_stop 600
			read -r wall usr sys rss <"$W/time"
			id=$(grep 'Ident:' "$W/nf.log" | tail -1)
			fl=$(echo "$id" | sed -n 's/.*Flows: \([0-9]*\).*/\1/p')
			pk=$(echo "$id" | sed -n 's/.*Flows: [0-9]*, Packets: \([0-9]*\).*/\1/p')
			by=$(echo "$id" | sed -n 's/.*Bytes: \([0-9]*\).*/\1/p')
			se=$(echo "$id" | sed -n 's/.*Sequence Errors: \([0-9]*\).*/\1/p')
			nf_lines "$W/nf" >"$W/got"
			miss=$(LC_ALL=C comm -23 "$W/want" "$W/got" | wc -l)
			extra=$(LC_ALL=C comm -13 "$W/want" "$W/got" | wc -l)
			exact=no
			[ "$miss" = 0 ] && [ "$extra" = 0 ] && exact=yes
			pps=$(awk -v n="$PACKETS" -v w="$wall" 'BEGIN { printf "%.0f", n / w }')
			cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
			echo "$pps $cpu $wall $rss ${fl:-0} ${pk:-0} ${by:-0} ${se:-?} $exact $miss $extra $rc" >>"$W/$t.rows"
			printf '# %-6s round %d %-10s %9s pps  cpu %5s s  wall %6s s  rss %7s KB  nfcapd: flows %s packets %s bytes %s seq_errors %s  exact %s (missing %s, extra %s) exit %s\n' \
				"$p" "$r" "$t" "$pps" "$cpu" "$wall" "$rss" "${fl:-0}" "${pk:-0}" "${by:-0}" "${se:-?}" "$exact" "$miss" "$extra" "$rc"
		done
	done
	ref=$(awk '{print $1}' "$W/softflowd.rows" 2>/dev/null | median)
	echo
	echo "profile $p: $(wc -l <"$W/want") truth flows, $tpk packets in flows, $tby bytes"
	printf '%-10s %10s %8s %8s %9s %9s %8s %9s %7s\n' tool "pps" "vs sfd" "CPU s" "RSS MB" flows seq_err "pk/by ok" exact
	for t in $TOOLS; do
		rows=$W/$t.rows
		pps=$(awk '{print $1}' "$rows" | median)
		cpu=$(awk '{print $2}' "$rows" | median)
		rss=$(awk '{print $4 / 1024}' "$rows" | median)
		fl=$(awk '{print $5}' "$rows" | median)
		se=$(awk '{print $8}' "$rows" | sort -u | tr '\n' '/' | sed 's#/$##')
		tot=no
		awk -v p="$tpk" -v b="$tby" '$6 != p || $7 != b { bad = 1 } END { exit bad }' "$rows" && tot=yes
		ex=$(awk '{print $9}' "$rows" | sort -u | tr '\n' '/' | sed 's#/$##')
		ratio=-
		[ -n "$ref" ] && [ "$ref" != 0 ] && ratio=$(awk -v a="$pps" -v b="$ref" 'BEGIN { printf "%.2fx", a / b }')
		printf '%-10s %10.0f %8s %8.2f %9.1f %9.0f %8s %9s %7s\n' "$t" "$pps" "$ratio" "$cpu" "$rss" "$fl" "$se" "$tot" "$ex"
	done
	echo
done
