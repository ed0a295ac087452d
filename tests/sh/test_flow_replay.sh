#!/usr/bin/env bash
# tests/sh/test_flow_replay.sh - `secho flow replay`: a capture onto a veth pair.
#
# Topology: tests/sh/netns.sh (host ns $IF_H <-veth-> $IF_E), jumbo MTU on both ends.
# Checks (one PASS/FAIL/UNAVAILABLE line per group):
#   - usage: --help; bad arguments exit 2 with one line on stderr; a missing file exits 1;
#   - every frame arrives intact and in order: a capture of the generator's conformance
#     profile (every kind of frame, 60 to 300 bytes) and of geant (jumbo frames) is sent
#     with sendmmsg and with the TX ring, captured on the far end by dumpcap, and the two
#     hex dumps (tshark -x) are identical; the receiving interface counted exactly the
#     frames replay reports, and the reported bytes are the capture's;
#   - bounds: --count stops at N frames; --pps with --seconds sends about pps x seconds
#     and stops by time; --loop sends the file that many times.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
S=${SECHO_BIN:-$ROOT/$BUILD/secho}
# shellcheck source=tests/sh/netns.sh
. "$ROOT/tests/sh/netns.sh"

# group, check, end_group, unavailable (tests/unit/harness.h's format)
# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"

[ -x "$S" ] || { echo "FAIL flow replay: $S not built"; exit 1; }
T=$(mktemp -d /tmp/secho-replay.XXXXXX)
cleanup() {
	netns_cleanup
	rm -rf "$T"
}
trap cleanup EXIT

# ---- usage ----
group "flow replay: usage and bad arguments"
"$S" flow replay --help >"$T/out" 2>"$T/err"
[ $? -eq 0 ] && grep -q '^usage: secho flow replay' "$T/out" && [ ! -s "$T/err" ]
check $? "--help"
for a in "--pcap x.pcap" "--iface lo" "--iface lo --pcap x --pps 0" \
	"--iface lo --pcap x --seconds 0" "--iface lo --pcap x --seconds 90000" \
	"--iface lo --pcap x --count 0" "--iface lo --pcap x --loop 0" \
	"--iface lo --pcap x --frame-size 3000" "--iface lo --pcap x --tx bogus" \
	"--iface lo --pcap x --bogus" "--iface lo --pcap x extra"; do
	# shellcheck disable=SC2086
	"$S" flow replay $a >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -eq 2 ] && [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" -eq 1 ]
	check $? "'$a': exit $rc, want 2 and one line on stderr ($(head -c 200 "$T/err"))"
done
"$S" flow replay --iface lo --pcap "$T/missing.pcap" >"$T/out" 2>"$T/err"
[ $? -eq 1 ] && grep -q 'missing.pcap' "$T/err"
check $? "a missing capture: want exit 1 naming it"
end_group

if why=$(netns_unavailable); then
	for g in "frames intact" "bounds"; do
		echo "UNAVAILABLE flow replay: $g: $why"
	done
	exit 0
fi
need_tools "flow replay" dumpcap tshark || exit 1 # dumpcap: tshark's wireshark-common
netns_setup || { echo "FAIL flow replay: cannot build the veth topology"; exit 1; }
in_h ip link set dev "$IF_H" mtu 9100 && in_e ip link set dev "$IF_E" mtu 9100 || {
	echo "FAIL flow replay: jumbo MTU"
	exit 1
}

rx_packets() { in_e cat "/sys/class/net/$IF_E/statistics/rx_packets"; }

# capture N frames on the far end while replay sends FILE; prints replay's JSON line
# replay_captured NAME FILE N replay-args...
replay_captured() {
	local name=$1 file=$2 n=$3 pid i
	shift 3
	rm -f "$T/$name.pcapng"
	in_e timeout 20 dumpcap -q -i "$IF_E" -c "$n" -w "$T/$name.pcapng" >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 1 100); do # dumpcap has written its header: capturing
		[ -s "$T/$name.pcapng" ] && break
		sleep 0.05
	done
	sleep 0.3
	in_h "$S" flow replay --iface "$IF_H" --pcap "$file" --seconds 10 --json "$@"
	for i in $(seq 1 40); do # it stops by itself after n frames; else at most 2 s more
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -TERM "$pid" 2>/dev/null # (an asynchronous job ignores SIGINT)
	wait "$pid"
}

group "flow replay: every frame arrives intact and in order"
"$S" flow gen --profile conformance --seed 3 -o "$T/conf.pcap" -q &&
	"$S" flow gen --profile geant --packets 400 --seed 3 -o "$T/geant.pcap" -q
check $? "flow gen"
for f in conf geant; do
	# frames shorter than an Ethernet header are not sent (the conformance profile has
	# one); a frame captured short is sent as captured; the receiving kernel counts, but
	# drops before any packet socket, a frame that ends inside its VLAN tag
	seen='frame.cap_len >= 14 && !(eth.type == 0x8100 && frame.cap_len < 18)'
	tshark -r "$T/$f.pcap" -Y "$seen" -x -q 2>/dev/null >"$T/$f.want"
	n_seen=$(tshark -r "$T/$f.pcap" -Y "$seen" -T fields -e frame.number 2>/dev/null | wc -l)
	want=$(tshark -r "$T/$f.pcap" -Y 'frame.cap_len >= 14' -T fields -e frame.cap_len \
		2>/dev/null | awk '{n++; b += $1} END {print n, b}')
	for mode in sendmmsg ring; do
		before=$(rx_packets)
		out=$(replay_captured "$f-$mode" "$T/$f.pcap" "$n_seen" --tx "$mode")
		after=$(rx_packets)
		frames=$(echo "$out" | sed -n 's/.*"frames":\([0-9]*\).*/\1/p')
		bytes=$(echo "$out" | sed -n 's/.*"bytes":\([0-9]*\).*/\1/p')
		tshark -r "$T/$f-$mode.pcapng" -x -q 2>/dev/null >"$T/$f-$mode.got"
		cmp -s "$T/$f.want" "$T/$f-$mode.got"
		check $? "$f $mode: the frames captured differ from the file's ($(wc -l <"$T/$f-$mode.got") / $(wc -l <"$T/$f.want") lines)"
		[ "$frames $bytes" = "$want" ]
		check $? "$f $mode: replay reports '$frames $bytes', the file has '$want' ($out)"
		[ $((after - before)) -eq "$frames" ]
		check $? "$f $mode: the receiver counted $((after - before)), replay $frames"
	done
done
end_group

group "flow replay: bounds (count, rate and time, loops)"
n_file=$(tshark -r "$T/geant.pcap" -T fields -e frame.len 2>/dev/null | wc -l)
out=$(in_h "$S" flow replay --iface "$IF_H" --pcap "$T/geant.pcap" --count 123 --json)
echo "$out" | grep -q '"frames":123,.*"stopped_by":"count"'
check $? "--count 123: $out"
out=$(in_h "$S" flow replay --iface "$IF_H" --pcap "$T/geant.pcap" --loop 3 --json)
echo "$out" | grep -q "\"frames\":$((3 * n_file)),.*\"loops\":3,.*\"stopped_by\":\"end of file\""
check $? "--loop 3 of $n_file: $out"
out=$(in_h "$S" flow replay --iface "$IF_H" --pcap "$T/geant.pcap" --loop 1000 --pps 2000 \
	--seconds 0.5 --json)
frames=$(echo "$out" | sed -n 's/.*"frames":\([0-9]*\).*/\1/p')
secs=$(echo "$out" | sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p')
echo "$out" | grep -q '"stopped_by":"time"' && [ "${frames:-0}" -le 1001 ] &&
	[ "${frames:-0}" -ge 500 ] && awk -v s="$secs" 'BEGIN { exit !(s >= 0.5 && s < 1.5) }'
check $? "--pps 2000 --seconds 0.5: want 500..1001 frames, stopped by time: $out"
end_group
