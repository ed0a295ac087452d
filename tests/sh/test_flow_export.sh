#!/usr/bin/env bash
# tests/sh/test_flow_export.sh - `secho flow` end to end: generated captures metered, the
# records exported over IPFIX to real collectors (nfdump's nfcapd, a capture decoded by
# tshark, build/tools/ipfix_listen: a strict collector written apart from the exporter).
#
# Checks (one PASS/FAIL/UNAVAILABLE line per group):
#   1. nfcapd over UDP: the records (--json, checked against the generator's truth) are
#      what `nfdump -R` shows, addresses, ports or ICMP type.code, protocol, packets and
#      bytes both ways, first and last time of the forward direction in milliseconds (a
#      record dated 1970 fails); nfcapd's totals and "Sequence Errors: 0"; biflow and
#      uniflow, one worker and two
#   2. tshark decodes a capture of the export (in a network namespace of the test's own):
#      no malformed packet, no data without its template, every record decoded, no
#      forward time in 1970 (a biflow's reverse times are 0 only when it has no reverse
#      packet)
#   3. five collectors at once (two strict UDP listeners, a strict TCP listener, an IPFIX
#      file, nfcapd), two workers: each gets every record, with its own templates and its
#      own sequence numbers; the datagrams of one UDP listener are, byte for byte and in
#      order, the IPFIX file's messages (the exporter batches UDP messages: sendmmsg)
#   4. TCP: a collector down at the start gets everything once it is up (reconnect with
#      backoff, exit 0); a collector that never comes: the records are counted as not
#      delivered, exit 1 with the reason
#   5. live, on a veth pair: UDP templates again every --template-refresh second; a TCP
#      collector restarted between two bursts of traffic gets the templates again on the
#      new connection and every record (a reconnect counted); SIGTERM exports the rest
# Every listener binds 127.0.0.1 (or a namespace of the test's own) on a random port; every
# wait is bounded; cleanup in a trap.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
S=${SECHO_BIN:-$BUILD/secho}
LIS=$BUILD/tools/ipfix_listen
# shellcheck source=tests/sh/flow_lib.bash
. "$ROOT/tests/sh/flow_lib.bash"
# shellcheck source=tests/sh/netns.sh
. "$ROOT/tests/sh/netns.sh"
# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"
T=$(mktemp -d /tmp/secho-flow-export.XXXXXX)
PIDS=()
LIS_EXTRA=() # more options for the next start_listener
NETNS_UP=
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	wait 2>/dev/null
	[ -n "$NETNS_UP" ] && netns_cleanup
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

for b in "$S" "$LIS"; do
	[ -x "$b" ] || { echo "FAIL flow export: $b not built"; exit 1; }
done
need_tools "flow export" jq || exit 1

flow_gen conformance 600 3 "$T/c.pcap" || { echo "FAIL flow export: generator"; exit 1; }
flow_gen light 20000 4 "$T/l.pcap" || { echo "FAIL flow export: generator"; exit 1; }

field() { sed -n "s/.*\b$2=\([0-9]*\).*/\1/p" "$1" | head -1; } # file name
final() { grep '^{' "$1" | jq -r "select(.final) | $2"; }       # json-stats file, jq expr
# The meter's records with their times cut to whole milliseconds (IPFIX's), as text before
# jq reads them (jq 1.6 keeps 17 digits of a number).
json_ms() {
	sed -E 's/"(first_ns|last_ns|rev_first_ns|rev_last_ns)":([0-9]+)[0-9]{6}([,}])/"\1":\2\3/g' "$1"
}
# Truth lines (unidirectional, sorted) of records, times in ms: from --json ...
json_lines_ms() { json_ms "$1" | jq -r "$FLOW_JQ" | LC_ALL=C sort; }
# ... and from ipfix_listen's output (times in ms * 10^6)
listen_lines_ms() {
	awk -F, -v OFS=, '{ $13 = substr($13, 1, length($13) - 6); $14 = substr($14, 1, length($14) - 6); print }' "$@" |
		LC_ALL=C sort
}

# ---- listeners ----
stop_pid() { # pid: SIGTERM, wait up to 5 s; sets prc
	kill -TERM "$1" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	# (prc says whether it had to be killed: no "Killed" notice)
	{
		kill -9 "$1"
		wait "$1"
	} 2>/dev/null
	prc=$?
}
# start_listener MODE(tcp|udp) NAME [PORT] [NETNS]: ipfix_listen writing $T/NAME.lines and
# $T/NAME.sum -> LIS_PID, LIS_PORT
start_listener() {
	local ns=()
	[ -n "${4:-}" ] && ns=(ip netns exec "$4")
	rm -f "$T/$2.port"
	"${ns[@]}" "$LIS" "--$1" "${3:-0}" --port-file "$T/$2.port" --out "$T/$2.lines" \
		--max-seconds 120 "${LIS_EXTRA[@]}" >"$T/$2.sum" 2>&1 &
	LIS_PID=$!
	PIDS+=("$LIS_PID")
	for _ in $(seq 100); do
		[ -s "$T/$2.port" ] && break
		sleep 0.05
	done
	LIS_PORT=$(cat "$T/$2.port" 2>/dev/null)
	[ -n "$LIS_PORT" ]
}

# ---- 1: nfcapd ----
group "flow export: nfcapd gets every record of secho flow (UDP), dated right, 0 sequence errors"
if ! command -v nfcapd >/dev/null || ! command -v nfdump >/dev/null; then
	check 1 "nfcapd, nfdump not installed (scripts/deps.sh installs nfdump)"
else
	# the last run with --mtu 65507 (64 KiB datagrams on loopback), a file collector beside
	for run in "c biflow 1 -" "c uniflow 1 -" "l biflow 2 -" "l uniflow 2 -" "l biflow 1 65507"; do
		read -r cap mode w mtu <<<"$run"
		d=$T/nf-$cap-$mode-$mtu
		opt=()
		[ "$mode" = uniflow ] && opt=(--uniflow)
		[ "$mtu" != - ] && opt+=(--mtu "$mtu" --collector "file:$d.ipfix")
		if ! nfcapd_start "$d" "$d.log" 8000000; then
			check 1 "nfcapd did not start: $(tail -2 "$d.log")"
			continue
		fi
		PIDS+=("$NF_PID")
		"$S" flow --pcap "$T/$cap.pcap" "${opt[@]}" --workers "$w" --quiet --json "$d.json" \
			--json-stats --collector "udp://127.0.0.1:$NF_PORT" >"$d.out" 2>"$d.err"
		check $? "$cap $mode: secho flow failed: $(tail -2 "$d.err")"
		nfcapd_stop
		record_lines "$d.json" | cmp -s - <(truth_lines "$T/$cap.pcap.truth.csv")
		check $? "$cap $mode: the records are not the truth"
		recs=$(wc -l <"$d.json")
		npk=$(truth_total "$T/$cap.pcap.truth.csv" flow_packets)
		nby=$(truth_total "$T/$cap.pcap.truth.csv" flow_octets)
		ident=$(grep 'Ident:' "$d.log" | tail -1)
		[[ "$ident" == *"Flows: $recs,"* ]] && [[ "$ident" == *"Packets: $npk,"* ]] &&
			[[ "$ident" == *"Bytes: $nby,"* ]] && [[ "$ident" == *"Sequence Errors: 0,"* ]]
		check $? "$cap $mode: nfcapd says '$ident'; want $recs flows, $npk packets, $nby bytes, 0 sequence errors"
		# nfdump's view of a record: ICMP type.code in the destination port; the forward
		# direction's times (seconds.milliseconds since the epoch)
		json_ms "$d.json" | jq -r '[.src, .dst, .sport,
			(if .proto == 1 or .proto == 58 then "\(.icmp_type).\(.icmp_code)" else .dport end),
			.proto, .packets, .octets, (.rev_packets // 0), (.rev_octets // 0),
			"\(.first_ns / 1000 | floor | strftime("%Y-%m-%d %H:%M:%S")).\(.first_ns % 1000 + 1000 | tostring | .[1:])",
			"\(.last_ns / 1000 | floor | strftime("%Y-%m-%d %H:%M:%S")).\(.last_ns % 1000 + 1000 | tostring | .[1:])"]
			| map(tostring) | join(",")' | LC_ALL=C sort >"$d.want"
		# (-6: whole IPv6 addresses; %ts and %te: nfdump 1.7.1's %ter drops a digit of the ms)
		TZ=UTC nfdump -R "$d" -q -N -6 \
			-o 'fmt:%sa,%da,%sp,%dp,%pr,%ipkt,%ibyt,%opkt,%obyt,%ts,%te' 2>&1 |
			sed 's/ *, */,/g; s/^ *//; s/ *$//' | LC_ALL=C sort >"$d.got"
		cmp -s "$d.want" "$d.got"
		check $? "$cap $mode: nfdump -R differs from the records: $(diff "$d.want" "$d.got" | head -4 | tr '\n' ' ')"
		old=$(awk -F, '$10 < "2026" || $11 < "2026"' "$d.got" | wc -l)
		[ "$old" = 0 ]
		check $? "$cap $mode: $old records dated before 2026 (1970: times nfdump cannot read)"
		[ "$mtu" = - ] && continue
		# --mtu: messages above the default 1400 and none above the option
		sizes=$(python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read()
off, n, mx = 0, 0, 0
while off + 4 <= len(d):
    ver, ln = struct.unpack_from(">HH", d, off)
    if ver != 10 or ln < 16:
        sys.exit("not IPFIX at byte %d" % off)
    n, mx, off = n + 1, max(mx, ln), off + ln
print(n, mx)' "$d.ipfix" 2>&1)
		read -r nmsg maxlen <<<"$sizes"
		[ "${maxlen:-0}" -gt 1400 ] 2>/dev/null && [ "$maxlen" -le "$mtu" ]
		check $? "--mtu $mtu: $nmsg messages, the longest $maxlen bytes ($sizes)"
	done
fi
end_group

# ---- 2: tshark ----
group "flow export: tshark decodes secho flow's export"
if ! command -v tshark >/dev/null; then
	check 1 "tshark not installed (scripts/deps.sh installs it)"
elif ! command -v unshare >/dev/null || [ "$(id -u)" -ne 0 ]; then
	skip_group "needs unshare and root (a network namespace of its own)"
else
	# In a new network namespace the loopback carries only this test's packets; a strict
	# listener receives there (so nothing is refused), tshark captures.
	TP=$((20000 + RANDOM % 40000))
	timeout 90 unshare -n bash -c '
		ip link set lo up || exit 1
		"$3" --udp "$4" --out "$1/ts.lines" --max-seconds 60 >"$1/ts.sum" 2>&1 &
		lp=$!
		tshark -i lo -f "udp port $4" -w "$1/ts.pcapng" >"$1/ts.out" 2>"$1/ts.err" &
		tp=$!
		trap "kill -TERM $tp $lp 2>/dev/null" EXIT
		for _ in $(seq 200); do
			grep -q "Capturing on" "$1/ts.err" && break
			sleep 0.05
		done
		sleep 0.2
		"$2" flow --pcap "$1/c.pcap" --quiet --json "$1/ts-c.json" --json-stats \
			--collector "udp://127.0.0.1:$4" >"$1/ts-c.out" 2>&1 || exit 1
		"$2" flow --pcap "$1/l.pcap" --uniflow --observation-domain 8 --quiet \
			--json "$1/ts-l.json" --json-stats --collector "udp://127.0.0.1:$4" \
			>"$1/ts-l.out" 2>&1 || exit 1
		# the IPFIX messages sent (the JSON sink counts its own)
		want=$(cat "$1"/ts-?.out | grep -o "\"name\":\"ipfix[^}]*\"messages\":[0-9]*" |
			sed "s/.*://" | awk "{s += \$1} END {print s}")
		for _ in $(seq 40); do
			have=$(tshark -r "$1/ts.pcapng" 2>/dev/null | wc -l)
			[ "$have" -ge "$want" ] && break
			sleep 0.2
		done
		kill -TERM $tp $lp
		wait $tp $lp
		exit 0
	' _ "$T" "$S" "$LIS" "$TP"
	check $? "capture failed: $(tail -2 "$T/ts.err") $(tail -1 "$T/ts-c.out")"
	tshark -r "$T/ts.pcapng" -d "udp.port==$TP,cflow" -V >"$T/ts.txt" 2>&1
	check $? "tshark could not read the capture"
	! grep -qi 'malformed\|no template\|template not found\|Expert Info (Error\|Expert Info (Warn' \
		"$T/ts.txt"
	check $? "tshark: $(grep -i -m3 'malformed\|no template\|template not found\|Expert Info' "$T/ts.txt" | tr '\n' ' ')"
	# every record, and the statistics records the listener counted
	recs=$(($(wc -l <"$T/ts-c.json") + $(wc -l <"$T/ts-l.json")))
	want=$((recs + $(field "$T/ts.sum" options)))
	got=$(grep -c '^ *Flow [0-9][0-9]*$' "$T/ts.txt")
	[ "$recs" -gt 0 ] && [ "$got" = "$want" ] && [ "$(field "$T/ts.sum" records)" = "$recs" ]
	check $? "tshark decoded $got data records, want $want (records $recs; listener: $(cat "$T/ts.sum"))"
	# 1970: only the reverse times of biflows without a reverse packet (0 = none)
	oneway=$(jq -r 'select(.rev_packets == 0) | 1' "$T/ts-c.json" | wc -l)
	n1970=$(grep -c 'Time: Jan  1, 1970' "$T/ts.txt")
	[ "$n1970" = $((2 * oneway)) ]
	check $? "$n1970 times in 1970, want $((2 * oneway)) (the reverse start and end of $oneway one-way biflows)"
	maxlen=$(tshark -r "$T/ts.pcapng" -T fields -e udp.length 2>/dev/null | sort -n | tail -1)
	[ -n "$maxlen" ] && [ "$((maxlen - 8))" -le 1400 ]
	check $? "a message of $((${maxlen:-0} - 8)) bytes (MTU 1400)"
	[ "$(field "$T/ts.sum" seq_errors)" = 0 ] && [ "$(field "$T/ts.sum" no_template)" = 0 ]
	check $? "listener: $(cat "$T/ts.sum")"
fi
end_group

# ---- 3: several collectors ----
group "flow export: five collectors, each every record with its own templates and numbers"
ok=1
LIS_EXTRA=(--raw "$T/m-u1.raw")
start_listener udp m-u1 && U1=$LIS_PORT && U1P=$LIS_PID || ok=0
LIS_EXTRA=()
start_listener udp m-u2 && U2=$LIS_PORT && U2P=$LIS_PID || ok=0
start_listener tcp m-t && TT=$LIS_PORT && TTP=$LIS_PID || ok=0
nf=()
if command -v nfcapd >/dev/null && nfcapd_start "$T/m-nf" "$T/m-nf.log" 8000000; then
	PIDS+=("$NF_PID")
	nf=(--collector "udp://127.0.0.1:$NF_PORT")
fi
check $((1 - ok)) "a listener did not start"
if [ $ok = 1 ]; then
	"$S" flow --pcap "$T/l.pcap" --workers 2 --quiet --json "$T/m.json" --json-stats \
		--collector "udp://127.0.0.1:$U1" --collector "udp://127.0.0.1:$U2" \
		--collector "tcp://127.0.0.1:$TT" --collector "file:$T/m.ipfix" "${nf[@]}" \
		>"$T/m.out" 2>"$T/m.err"
	check $? "secho flow failed: $(tail -2 "$T/m.err")"
	udp_drained "$U1"
	udp_drained "$U2"
	json_lines_ms "$T/m.json" >"$T/m.want"
	recs=$(wc -l <"$T/m.json")
	for n in u1:$U1P u2:$U2P t:$TTP file; do
		name=${n%%:*} pid=${n#*:}
		if [ "$name" = file ]; then
			"$LIS" --file "$T/m.ipfix" --out "$T/m-file.lines" >"$T/m-file.sum" 2>&1
			prc=$?
		else
			stop_pid "$pid"
		fi
		check $prc "$name: the collector saw errors: $(cat "$T/m-$name.sum")"
		[ "$(field "$T/m-$name.sum" records)" = "$recs" ] &&
			[ "$(field "$T/m-$name.sum" templates)" -ge 3 ] &&
			[ "$(field "$T/m-$name.sum" seq_errors)" = 0 ] &&
			[ "$(field "$T/m-$name.sum" no_template)" = 0 ]
		check $? "$name: $(cat "$T/m-$name.sum"); want $recs records, templates of its own"
		listen_lines_ms "$T/m-$name.lines" | cmp -s - "$T/m.want"
		check $? "$name: records differ from the meter's: $(listen_lines_ms "$T/m-$name.lines" | diff - "$T/m.want" | head -3 | tr '\n' ' ')"
	done
	if [ ${#nf[@]} -gt 0 ]; then
		nfcapd_stop
		ident=$(grep 'Ident:' "$T/m-nf.log" | tail -1)
		[[ "$ident" == *"Flows: $recs,"* ]] && [[ "$ident" == *"Sequence Errors: 0,"* ]]
		check $? "nfcapd says '$ident'; want $recs flows, 0 sequence errors"
	fi
	cmp -s "$T/m-u1.raw" "$T/m.ipfix"
	check $? "u1's datagrams ($(stat -c %s "$T/m-u1.raw") bytes) are not the file's messages ($(stat -c %s "$T/m.ipfix") bytes): $(cmp "$T/m-u1.raw" "$T/m.ipfix" 2>&1 | head -1)"
	rows=$(final "$T/m.out" '.sinks[] | select(.name | startswith("ipfix")) | "\(.records) \(.not_delivered) \(.errors)"' | sort -u)
	[ "$rows" = "$recs 0 0" ]
	check $? "the meter's rows per collector: $(echo "$rows" | tr '\n' ';')"
fi
end_group

# ---- 4: TCP: down at the start, never up ----
group "flow export: TCP collector: reconnect with backoff, what was not delivered counted"
start_listener tcp d0 && dport=$LIS_PORT
stop_pid "$LIS_PID" # the port is now free, nothing listens
"$S" flow --pcap "$T/c.pcap" --quiet --json "$T/d.json" --json-stats \
	--collector "tcp://127.0.0.1:$dport" >"$T/d.out" 2>"$T/d.err" &
mp=$!
PIDS+=("$mp")
sleep 1
start_listener tcp d "$dport"
check $? "late listener did not start on port $dport"
wait "$mp"
check $? "late collector: secho flow: $(tail -2 "$T/d.err")"
stop_pid "$LIS_PID"
check $prc "late collector: the collector saw errors: $(cat "$T/d.sum")"
listen_lines_ms "$T/d.lines" | cmp -s - <(json_lines_ms "$T/d.json")
check $? "late collector: records differ: $(listen_lines_ms "$T/d.lines" | diff - <(json_lines_ms "$T/d.json") | head -3 | tr '\n' ' ')"
row=$(final "$T/d.out" '.sinks[0] | "\(.records) \(.not_delivered) \(.errors)"')
read -r r nd er <<<"$row"
[ "$r" = "$(wc -l <"$T/d.json")" ] && [ "$nd" = 0 ] && [ "$er" -ge 2 ]
check $? "late collector: records, not delivered, errors (failed connects): $row"
# never up: every record counted as not delivered, exit 1 saying so
start_listener tcp n0 && nport=$LIS_PORT
stop_pid "$LIS_PID"
"$S" flow --pcap "$T/c.pcap" --quiet --json "$T/n.json" --json-stats \
	--collector "tcp://127.0.0.1:$nport" >"$T/n.out" 2>"$T/n.err"
rc=$?
[ $rc = 1 ] && grep -q 'not every record was delivered' "$T/n.err"
check $? "no collector: exit $rc, want 1 with the reason: $(cat "$T/n.err")"
row=$(final "$T/n.out" '.sinks[0] | "\(.records) \(.not_delivered) \(.errors)"')
read -r r nd er <<<"$row"
[ "$r" = "$(wc -l <"$T/n.json")" ] && [ "$nd" = "$r" ] && [ "$er" -ge 3 ]
check $? "no collector: records, not delivered, errors: $row (backoff: a few connects in 10 s)"
end_group

# ---- 5: live ----
name="flow export: live: UDP templates every --template-refresh, a TCP collector restarted"
if why=$(netns_unavailable); then
	echo "UNAVAILABLE $name: $why"
elif ! command -v tcpreplay >/dev/null; then
	echo "FAIL $name: tcpreplay not installed (scripts/deps.sh installs it)"
else
	group "$name"
	flow_gen light 6000 5 "$T/a.pcap" && flow_gen light 6000 6 "$T/b.pcap" ||
		{ echo "FAIL $name: generator"; exit 1; }
	PAD=$BUILD/tools/pcap_pad
	"$PAD" "$T/a.pcap" "$T/a.padded" >/dev/null && "$PAD" "$T/b.pcap" "$T/b.padded" >/dev/null
	check $? "pcap_pad"
	if ! netns_setup; then
		check 1 "cannot build the veth topology"
	else
		NETNS_UP=1
		start_listener udp v-u "" "$NS_E" && VU=$LIS_PORT && VUP=$LIS_PID
		check $? "UDP listener did not start"
		start_listener tcp v-t1 "" "$NS_E" && VT=$LIS_PORT
		check $? "TCP listener did not start"
		ip netns exec "$NS_E" "$S" flow --iface "$IF_E" --io packet --inactive 0.5 \
			--template-refresh 1 --json "$T/v.json" --json-stats \
			--collector "udp://127.0.0.1:$VU" --collector "tcp://127.0.0.1:$VT" \
			>"$T/v.out" 2>"$T/v.err" &
		mp=$!
		PIDS+=("$mp")
		for _ in $(seq 300); do # the table made resident first: up to seconds
			grep -q '^secho flow: metering' "$T/v.out" 2>/dev/null && break
			sleep 0.1
		done
		sleep 0.3
		in_h timeout 60 tcpreplay -i "$IF_H" --pps 3000 "$T/a.padded" >"$T/v-a.log" 2>&1
		check $? "tcpreplay: $(tail -1 "$T/v-a.log")"
		sleep 2.5 # every flow idle (0.5 s), swept, flushed (0.5 s) and acknowledged
		stop_pid "$LIS_PID"
		check $prc "first TCP listener: $(cat "$T/v-t1.sum")"
		start_listener tcp v-t2 "$VT" "$NS_E"
		check $? "second TCP listener did not start on port $VT"
		in_h timeout 60 tcpreplay -i "$IF_H" --pps 3000 "$T/b.padded" >"$T/v-b.log" 2>&1
		check $? "tcpreplay: $(tail -1 "$T/v-b.log")"
		sleep 1
		stop_pid "$mp"
		check $prc "secho flow exit status $prc: $(tail -2 "$T/v.err")"
		stop_pid "$LIS_PID"
		check $prc "second TCP listener: $(cat "$T/v-t2.sum")"
		stop_pid "$VUP"
		check $prc "UDP listener: $(cat "$T/v-u.sum")"
		recs=$(wc -l <"$T/v.json")
		pk=$(jq -s 'map(.packets + (.rev_packets // 0)) | add' "$T/v.json")
		want=$(($(truth_total "$T/a.pcap.truth.csv" flow_packets) + $(truth_total "$T/b.pcap.truth.csv" flow_packets)))
		[ "$recs" -gt 100 ] && [ "$pk" = "$want" ]
		check $? "$recs records, $pk packets in them; want $want packets"
		json_lines_ms "$T/v.json" >"$T/v.want"
		listen_lines_ms "$T/v-u.lines" | cmp -s - "$T/v.want"
		check $? "UDP: records differ from the meter's: $(listen_lines_ms "$T/v-u.lines" | diff - "$T/v.want" | head -3 | tr '\n' ' ')"
		listen_lines_ms "$T/v-t1.lines" "$T/v-t2.lines" | cmp -s - "$T/v.want"
		check $? "TCP, across the restart: records differ from the meter's: $(listen_lines_ms "$T/v-t1.lines" "$T/v-t2.lines" | diff - "$T/v.want" | head -3 | tr '\n' ' ')"
		[ "$(field "$T/v-t1.sum" records)" -gt 0 ] && [ "$(field "$T/v-t2.sum" records)" -gt 0 ] &&
			[ "$(field "$T/v-t2.sum" templates)" -ge 3 ]
		check $? "TCP: records before and after the restart, templates on the new connection: $(cat "$T/v-t1.sum") / $(cat "$T/v-t2.sum")"
		tm=$(field "$T/v-u.sum" template_msgs)
		[ "${tm:-0}" -ge 3 ]
		check $? "UDP: templates in $tm messages over a run of more than 6 s, want 3 or more (refresh 1 s)"
		rc=$(final "$T/v.out" '.sinks[] | select(.name | startswith("ipfix:tcp")) | .reconnects')
		[ "${rc:-0}" -ge 1 ]
		check $? "TCP: ${rc:-no} reconnects counted"
	fi
	end_group
fi
