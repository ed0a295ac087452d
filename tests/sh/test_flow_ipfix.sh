#!/usr/bin/env bash
# tests/sh/test_flow_ipfix.sh - the IPFIX exporter (src/flow/export/ipfix.c) against real
# collectors, fed with the flows of generated truths (build/tools/ipfix_export).
#
# Checks (one PASS/FAIL/UNAVAILABLE line per group):
#   - nfcapd (nfdump) over UDP on 127.0.0.1, a random port, -B 8 MB: uniflow and biflow,
#     counters of 4 bytes and of 8 (flows of 2^32 packets and more);
#     its totals (flows, packets, bytes) equal the truth, "Sequence Errors: 0", and
#     `nfdump -R` gives exactly the truth's flows (addresses, ports or ICMP type.code,
#     protocol, packets, bytes, and for biflows both directions);
#   - tshark decodes a capture of the export (taken in a network namespace of the test's
#     own, so nothing else is on its loopback) with no malformed packet, no data without
#     its template, and every data record the exporter counted;
#   - TCP against a strict listener (build/tools/ipfix_listen: sequence numbers, templates
#     before data, every record written back as a truth line): records equal the truth;
#     across a collector restart (templates again, nothing missing, a reconnect counted);
#     with the collector down at the start (queued, delivered after backoff);
#     the statistics record carries the exporter's counts.
# Every listener binds 127.0.0.1 on a random port; every wait is bounded; cleanup in a trap.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
S=${SECHO_BIN:-$ROOT/$BUILD/secho}
EXP=$ROOT/$BUILD/tools/ipfix_export
LIS=$ROOT/$BUILD/tools/ipfix_listen
# shellcheck source=tests/sh/flow_lib.bash
. "$ROOT/tests/sh/flow_lib.bash"
T=$(mktemp -d /tmp/secho-ipfix.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# group, check, end_group, unavailable (tests/unit/harness.h's format)
# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"
for b in "$S" "$EXP" "$LIS"; do
	if [ ! -x "$b" ]; then
		echo "FAIL ipfix: $b not built"
		exit 1
	fi
done

# Truths: two rounds of conformance, and a slice of the light profile.
"$S" flow gen -q --profile conformance --packets 600 --seed 3 -o "$T/c.pcap" || exit 1
"$S" flow gen -q --profile light --packets 20000 --seed 4 -o "$T/l.pcap" || exit 1
flows() { grep -v '^#' "$1" | tail -n +2; }
# And the conformance truth with counts of 2^32 and more in its first five flows (2^32 more
# packets, 5e9 more bytes): their records go out with 8-byte counters, the others with 4-byte
# ones (reduced-size encoding), in the same stream.
awk -F, 'BEGIN {OFS = ","} /^#/ {print; next} !h {h = 1; print; next}
	n < 5 {n++; $11 = sprintf("%.0f", $11 + 4294967296); $12 = sprintf("%.0f", $12 + 5e9)}
	{print}' \
	"$T/c.pcap.truth.csv" >"$T/w.pcap.truth.csv" || exit 1
# Truth lines with times cut to milliseconds (what IPFIX carries), sorted.
ms_lines() {
	flows "$1" | awk -F, 'BEGIN {OFS = ","}
		{ $13 = substr($13, 1, length($13) - 6) "000000";
		  $14 = substr($14, 1, length($14) - 6) "000000"; print }' | sort
}
field() { sed -n "s/.* $2=\([0-9]*\).*/\1/p" "$1" | head -1; } # file name

# ---- nfcapd ----
group "ipfix: nfcapd (UDP) records equal the truth"
if ! command -v nfcapd >/dev/null || ! command -v nfdump >/dev/null; then
	check 1 "nfcapd, nfdump not installed (scripts/deps.sh installs nfdump)"
else
	for truth in c l w; do
		tf=$T/$truth.pcap.truth.csv
		nflows=$(flows "$tf" | wc -l)
		npk=$(flows "$tf" | awk -F, '{s += $11} END {printf "%.0f\n", s}')
		nby=$(flows "$tf" | awk -F, '{s += $12} END {printf "%.0f\n", s}')
		# nfdump's view of a truth line: ICMP type.code in the destination port.
		flows "$tf" | awk -F, '{ dp = $8; if ($4 == 1 || $4 == 58) dp = $9 "." $10;
			print $5 "," $6 "," $7 "," dp "," $4 "," $11 "," $12 }' | sort >"$T/want.$truth"
		for mode in uniflow biflow; do
			d=$T/nf-$truth-$mode
			if ! nfcapd_start "$d" "$d.log" 8000000; then
				check 1 "nfcapd did not start: $(tail -2 "$d.log")"
				continue
			fi
			PIDS+=("$NF_PID")
			opt=()
			[ $mode = uniflow ] && opt=(--uniflow)
			"$EXP" "${opt[@]}" "$tf" "udp://127.0.0.1:$NF_PORT" >"$d.exp" 2>&1
			check $? "$truth $mode: export failed: $(tail -2 "$d.exp")"
			nfcapd_stop
			recs=$(field "$d.exp" records)
			ident=$(grep 'Ident:' "$d.log" | tail -1)
			[[ "$ident" == *"Flows: $recs,"* ]] && [[ "$ident" == *"Packets: $npk,"* ]] &&
				[[ "$ident" == *"Bytes: $nby,"* ]] && [[ "$ident" == *"Sequence Errors: 0,"* ]]
			check $? "$truth $mode: nfcapd says '$ident'; want $recs flows, $npk packets, $nby bytes, 0 sequence errors"
			if [ $mode = uniflow ]; then
				[ "$recs" = "$nflows" ]
				check $? "$truth uniflow: $recs records for $nflows truth lines"
				nfdump -R "$d" -q -N -o 'fmt:%sa,%da,%sp,%dp,%pr,%pkt,%byt' |
					tr -d ' ' | sort >"$d.got"
			else
				# Both directions of each biflow record, as lines.
				nfdump -R "$d" -q -N -o 'fmt:%sa,%da,%sp,%dp,%pr,%ipkt,%ibyt,%opkt,%obyt' |
					tr -d ' ' | awk -F, '
					# the reverse direction of an ICMP query: its answer type
					# (src/flow/core/key.h, secho_flow_icmp_answer)
					function ans(p, tc,   t, c) {
						split(tc, x, "."); t = x[1]; c = x[2]
						if (p == 1 && (t == 8 || t == 0)) t = 8 - t
						else if (p == 1 && t >= 13 && t <= 18) t = t % 2 ? t + 1 : t - 1
						else if (p == 58 && (t == 128 || t == 139)) t = t + 1
						else if (p == 58 && (t == 129 || t == 140)) t = t - 1
						return t "." c }
					{ print $1 "," $2 "," $3 "," $4 "," $5 "," $6 "," $7
						if ($8 > 0) { rs = $4; rd = $3
							if ($5 == 1 || $5 == 58) { rs = $3; rd = ans($5, $4) }
							print $2 "," $1 "," rs "," rd "," $5 "," $8 "," $9 } }' |
					sort >"$d.got"
			fi
			cmp -s "$T/want.$truth" "$d.got"
			check $? "$truth $mode: nfdump -R differs from the truth: $(diff "$T/want.$truth" "$d.got" | head -4 | tr '\n' ' ')"
		done
	done
fi
end_group

# ---- tshark on a capture of the export ----
group "ipfix: tshark decodes the export"
if ! command -v tshark >/dev/null; then
	check 1 "tshark not installed (scripts/deps.sh installs it)"
elif ! command -v unshare >/dev/null || [ "$(id -u)" -ne 0 ]; then
	skip_group "needs unshare and root (a network namespace of its own)"
else
	# In a new network namespace the loopback carries only this test's packets; nfcapd
	# receives there (so nothing is refused), tshark captures.
	timeout 60 unshare -n bash -c '
		ip link set lo up || exit 1
		mkdir -p "$1/nfns"
		nfcapd -b 127.0.0.1 -p 4739 -w "$1/nfns" -B 8000000 >"$1/nfns.log" 2>&1 &
		np=$!
		tshark -i lo -f "udp port 4739" -w "$1/cap.pcapng" >"$1/ts.out" 2>"$1/ts.err" &
		tp=$!
		for _ in $(seq 100); do
			grep -q "Capturing on" "$1/ts.err" && grep -q "Startup nfcapd" "$1/nfns.log" && break
			sleep 0.05
		done
		sleep 0.2
		"$2" --mtu 1400 "$1/c.pcap.truth.csv" udp://127.0.0.1:4739 >"$1/ts1.exp" 2>&1
		"$2" --uniflow --odid 8 --mtu 600 "$1/l.pcap.truth.csv" udp://127.0.0.1:4739 \
			>"$1/ts2.exp" 2>&1
		# Bounded waits: nfcapd has read its socket, the capture holds every message.
		want=$(sed -n "s/.* messages=\([0-9]*\).*/\1/p" "$1/ts1.exp" "$1/ts2.exp" |
			awk "{s += \$1} END {print s}")
		for _ in $(seq 200); do
			q=$(ss -Hlun "sport = :4739" | awk "{print \$2}" | head -1)
			have=$(tshark -r "$1/cap.pcapng" 2>/dev/null | wc -l)
			[ "${q:-0}" = 0 ] && [ "$have" -ge "$want" ] && break
			sleep 0.05
		done
		kill -TERM $tp $np
		wait $tp $np
	' _ "$T" "$EXP"
	check $? "capture failed: $(tail -2 "$T/ts.err")"
	tshark -r "$T/cap.pcapng" -V >"$T/cap.txt" 2>&1
	check $? "tshark could not read the capture"
	! grep -qi 'malformed\|no template\|template not found\|Expert Info (Error\|Expert Info (Warn' \
		"$T/cap.txt"
	check $? "tshark: $(grep -i -m3 'malformed\|no template\|template not found\|Expert Info' "$T/cap.txt" | tr '\n' ' ')"
	want=$(($(field "$T/ts1.exp" records) + $(field "$T/ts1.exp" stats_records) +
		$(field "$T/ts2.exp" records) + $(field "$T/ts2.exp" stats_records)))
	got=$(grep -c '^ *Flow [0-9][0-9]*$' "$T/cap.txt")
	[ "$want" -gt 0 ] && [ "$got" = "$want" ]
	check $? "tshark decoded $got data records, the exporter sent $want"
	maxlen=$(tshark -r "$T/cap.pcapng" -T fields -e udp.length 2>/dev/null | sort -n | tail -1)
	[ -n "$maxlen" ] && [ "$((maxlen - 8))" -le 1400 ]
	check $? "a message of $((maxlen - 8)) bytes (MTU 1400)"
	grep -q 'Sequence Errors: 0,' "$T/nfns.log"
	check $? "nfcapd in the namespace: $(grep Ident "$T/nfns.log" | tr '\n' ' ')"
fi
end_group

# ---- TCP ----
start_listener() { # out summary portfile [port] -> LIS_PID
	rm -f "$3"
	"$LIS" --tcp "${4:-0}" --port-file "$3" --out "$1" --max-seconds 60 >"$2" 2>&1 &
	LIS_PID=$!
	PIDS+=("$LIS_PID")
	for _ in $(seq 100); do
		[ -s "$3" ] && return 0
		sleep 0.05
	done
	return 1
}
stop_listener() {
	kill -TERM "$LIS_PID" 2>/dev/null
	wait "$LIS_PID"
}

group "ipfix: TCP collector: records complete, across a restart"
ms_lines "$T/c.pcap.truth.csv" >"$T/c.ms"
ms_lines "$T/l.pcap.truth.csv" >"$T/l.ms"
# Plain run, both modes.
for mode in biflow uniflow; do
	opt=()
	[ $mode = uniflow ] && opt=(--uniflow)
	start_listener "$T/t-$mode.lines" "$T/t-$mode.sum" "$T/t.port"
	check $? "listener did not start"
	"$EXP" "${opt[@]}" "$T/l.pcap.truth.csv" "tcp://127.0.0.1:$(cat "$T/t.port")" \
		>"$T/t-$mode.exp" 2>&1
	check $? "$mode: export: $(tail -1 "$T/t-$mode.exp")"
	stop_listener
	check $? "$mode: listener: $(cat "$T/t-$mode.sum")"
	sort "$T/t-$mode.lines" | cmp -s - "$T/l.ms"
	check $? "$mode: records differ from the truth: $(sort "$T/t-$mode.lines" | diff - "$T/l.ms" | head -3 | tr '\n' ' ')"
	[ "$(field "$T/t-$mode.sum" last_exported)" = "$(field "$T/t-$mode.exp" records)" ] &&
		[ "$(field "$T/t-$mode.sum" last_observed)" = "$(field "$T/t-$mode.exp" records)" ]
	check $? "$mode: statistics record: $(cat "$T/t-$mode.sum")"
done
# Restart: half the records, the collector goes away and comes back on the same port.
start_listener "$T/r1.lines" "$T/r1.sum" "$T/r.port"
port=$(cat "$T/r.port")
half=$(($(field "$T/t-biflow.exp" records) / 2))
"$EXP" --pause-after "$half" --pause-ms 1500 --flush-ms 50 "$T/l.pcap.truth.csv" \
	"tcp://127.0.0.1:$port" >"$T/r.exp" 2>&1 &
ep=$!
PIDS+=("$ep")
for _ in $(seq 200); do
	grep -q paused "$T/r.exp" && break
	sleep 0.05
done
grep -q paused "$T/r.exp"
check $? "the exporter never paused"
stop_listener
check $? "first listener: $(cat "$T/r1.sum")"
start_listener "$T/r2.lines" "$T/r2.sum" "$T/r2.port" "$port"
check $? "second listener did not start on port $port"
wait "$ep"
check $? "restart: export: $(tail -1 "$T/r.exp")"
stop_listener
check $? "second listener: $(cat "$T/r2.sum")"
cat "$T/r1.lines" "$T/r2.lines" | sort | cmp -s - "$T/l.ms"
check $? "restart: records differ from the truth: $(cat "$T/r1.lines" "$T/r2.lines" | sort | diff - "$T/l.ms" | head -3 | tr '\n' ' ')"
[ "$(field "$T/r.exp" reconnects)" -ge 1 ] && [ "$(field "$T/r2.sum" templates)" -ge 3 ] &&
	[ "$(field "$T/r1.sum" records)" -gt 0 ] && [ "$(field "$T/r2.sum" records)" -gt 0 ]
check $? "restart: reconnects $(field "$T/r.exp" reconnects), templates on the new connection $(field "$T/r2.sum" templates), records $(field "$T/r1.sum" records) + $(field "$T/r2.sum" records)"
# Down at the start: nothing listens for 0.8 s; everything is queued, then delivered.
start_listener "$T/d0.lines" "$T/d0.sum" "$T/d.port"
dport=$(cat "$T/d.port")
stop_listener
"$EXP" --close-ms 15000 "$T/c.pcap.truth.csv" "tcp://127.0.0.1:$dport" >"$T/d.exp" 2>&1 &
ep=$!
PIDS+=("$ep")
sleep 0.8
start_listener "$T/d.lines" "$T/d.sum" "$T/d2.port" "$dport"
check $? "late listener did not start on port $dport"
wait "$ep"
check $? "late collector: export: $(tail -1 "$T/d.exp")"
stop_listener
check $? "late listener: $(cat "$T/d.sum")"
sort "$T/d.lines" | cmp -s - "$T/c.ms"
check $? "late collector: records differ from the truth: $(sort "$T/d.lines" | diff - "$T/c.ms" | head -3 | tr '\n' ' ')"
[ "$(field "$T/d.exp" not_delivered)" = 0 ] && [ "$(field "$T/d.exp" errors)" -ge 1 ]
check $? "late collector: counters: $(head -1 "$T/d.exp")"
end_group
