#!/usr/bin/env bash
# tests/sh/test_flow_live.sh - `secho flow --iface` on a veth pair: generated captures
# replayed with tcpreplay, the flows exported on SIGTERM, the records against the truth.
#
#   +-------- ns $NS_H ---------+        +-------- ns $NS_E ----------------------+
#   |  tcpreplay -> $IF_H       |========|  $IF_E  <- secho flow --iface $IF_E    |
#   +---------------------------+  veth  +-----------------------------------------+
#   (tests/sh/netns.sh; MTU 9500 for the tagged and jumbo frames of the first part, 1500
#   for the second, where native XDP needs it; the replayed traffic is 198.18.0.0/15 and
#   2001:db8::/32 and never leaves the pair)
#
#   1. every header case (conformance profile: VLAN, QinQ, IPv6 extension headers,
#      fragments, ICMP, malformed frames), replayed 10x faster than captured through
#      AF_PACKET into one worker with --inactive 3 (the capture's gaps of up to 20 s take
#      up to 2 s, its idle reuses after 45 s or more 4.5 s): record for record, the keys,
#      packets, octets and TCP flags equal the truth's (times are the receiver's); SIGTERM
#      exports every flow and the meter exits 0
#   2. AF_XDP, and AF_PACKET with two workers (PACKET_FANOUT_HASH), each with --ring 8
#      (the banner shows 8 MiB receive rings): a light profile replayed at 50,000 packets
#      per second; per key, packets and octets add up to the truth's and no frame was
#      dropped
# Frames the capture has cut short (snap length) are padded back to their length on the
# wire first (tests/tools/pcap_pad); frames shorter than an Ethernet header cannot be sent
# and are in no record anyway. Every wait is bounded; the namespaces go in any case.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
S=${SECHO_BIN:-$ROOT/build/secho}
# shellcheck source=tests/sh/netns.sh
. "$ROOT/tests/sh/netns.sh"
# shellcheck source=tests/sh/flow_lib.bash
. "$ROOT/tests/sh/flow_lib.bash"

names=("flow live: every header case, AF_PACKET, record for record"
	"flow live: AF_XDP, per key" "flow live: AF_PACKET, 2 workers (fanout), per key")
unavail_all() {
	for n in "${names[@]}"; do echo "UNAVAILABLE $n: $1"; done
	exit 0
}
if why=$(netns_unavailable); then unavail_all "$why"; fi
# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"
need_tools "flow live" tcpreplay jq || exit 1
[ -x "$S" ] || { echo "FAIL flow live: $S not built"; exit 1; }
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
PAD="$BUILD/tools/pcap_pad"
[ -x "$PAD" ] || { echo "FAIL flow live: $PAD not built"; exit 1; }
have_gen || unavail_all "no traffic generator in this build (secho flow gen)"

T=$(mktemp -d /tmp/secho-flow-live.XXXXXX)
MP=
cleanup() {
	[ -n "$MP" ] && kill -9 "$MP" 2>/dev/null
	netns_cleanup
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
netns_setup || { echo "FAIL flow live: cannot build the veth topology"; exit 1; }
in_h ip link set dev "$IF_H" mtu 9500 && in_e ip link set dev "$IF_E" mtu 9500 ||
	{ echo "FAIL flow live: MTU 9500"; exit 1; }

# start_meter NAME ARGS...: secho flow on $IF_E in the background; waits (bounded) for its
# banner, then a moment for the sockets to fill
start_meter() {
	local name=$1 i
	shift
	# not through in_e (a function): $! must be the meter itself, which ip execs
	ip netns exec "$NS_E" "$S" flow --iface "$IF_E" --json "$T/$name.json" --json-stats "$@" \
		>"$T/$name.out" 2>"$T/$name.err" &
	MP=$!
	for i in $(seq 1 300); do # the table made resident first: up to seconds
		grep -q '^secho flow: metering' "$T/$name.out" 2>/dev/null && break
		kill -0 "$MP" 2>/dev/null || break
		sleep 0.1
	done
	grep -q '^secho flow: metering' "$T/$name.out"
}
replay() { # pcap, tcpreplay options...
	local p=$1
	shift
	"$PAD" "$p" "$p.padded" >"$T/pad.log" 2>&1 || return 1
	in_h timeout 120 tcpreplay -i "$IF_H" "$@" "$p.padded" >"$T/replay.log" 2>&1
}
final() { grep '^{' "$T/$1.out" | jq -r "select(.final) | $2"; }
# records without times: key, packets, octets, flags (one line per unidirectional flow)
notime() { cut -d, -f1-12,15 | LC_ALL=C sort; }
# per key: packets and octets summed over its records
perkey() {
	awk -F, -v OFS=, '{ k = $1 OFS $2 OFS $3 OFS $4 OFS $5 OFS $6 OFS $7 OFS $8 OFS $9 OFS $10
		p[k] += $11; o[k] += $12 } END { for (k in p) print k, p[k], o[k] }' | LC_ALL=C sort
}

# ---- 1: every header case, record for record ----
flow_gen conformance 1 21 "$T/conf.pcap" || { echo "FAIL flow live: generator"; exit 1; }
name=${names[0]}
if ! start_meter conf --inactive 3 --io packet; then
	echo "FAIL $name: the meter did not start: $(head -2 "$T/conf.err")"
else
	replay "$T/conf.pcap" --multiplier 10
	rrc=$?
	sleep 4 # the last flows go idle; the sweep exports them without a packet of theirs
	meter_stop
	record_lines "$T/conf.json" | notime >"$T/got"
	truth_lines "$T/conf.pcap.truth.csv" | notime >"$T/want"
	drops=$(final conf .kernel_drops)
	forced=$(final conf '.end_forced + .end_eof')
	if [ $rrc -ne 0 ]; then
		echo "FAIL $name: tcpreplay failed: $(tail -3 "$T/replay.log")"
	elif [ $mrc -ne 0 ]; then
		echo "FAIL $name: the meter exited $mrc on SIGTERM: $(head -3 "$T/conf.err")"
	elif ! cmp -s "$T/got" "$T/want"; then
		echo "  $(wc -l <"$T/got") records, want $(wc -l <"$T/want") (kernel drops $drops)"
		diff "$T/got" "$T/want" | head -8 | sed 's/^/    /'
		# the records of the first key that differs, with their times and end reasons
		k=$(diff "$T/got" "$T/want" | grep '^[<>]' | head -1 | cut -c3- | cut -d, -f5-8)
		IFS=, read -r ks kd ksp kdp <<<"$k"
		jq -c --arg s "$ks" --arg d "$kd" --argjson sp "${ksp:-0}" --argjson dp "${kdp:-0}" \
			'select((.src == $s and .dst == $d and .sport == $sp and .dport == $dp) or
			(.src == $d and .dst == $s and .sport == $dp and .dport == $sp)) |
			[.packets, .first_ns, .last_ns, .rev_packets, .end]' "$T/conf.json" |
			sed 's/^/    record: /'
		echo "FAIL $name"
	else
		idle=$(final conf .end_idle)
		echo "  $(wc -l <"$T/got") flows equal the truth; $idle ended idle before SIGTERM," \
			"$forced by SIGTERM or as TCP ends"
		echo "PASS $name"
	fi
fi

# ---- 2: AF_XDP and two AF_PACKET workers, per key ----
in_h ip link set dev "$IF_H" mtu 1500 && in_e ip link set dev "$IF_E" mtu 1500 ||
	{ echo "FAIL flow live: MTU 1500"; exit 1; }
flow_gen light 20000 22 "$T/light.pcap" || { echo "FAIL flow live: generator"; exit 1; }
truth_lines "$T/light.pcap.truth.csv" | perkey >"$T/light.want"
for variant in xdp w2; do
	if [ $variant = xdp ]; then
		name=${names[1]}
		args=(--io xdp --ring 8)
	else
		name=${names[2]}
		args=(--io packet --workers 2 --ring 8)
	fi
	started=false
	for try in 1 2 3; do
		start_meter "$variant" "${args[@]}" && { started=true; break; }
		# a queue an AF_XDP socket just left can stay busy for a moment
		grep -q 'busy' "$T/$variant.err" || break
		meter_stop
		sleep 1
	done
	if ! $started; then
		why=$(grep -v '^libbpf\|^libxdp' "$T/$variant.err" | head -1)
		if [ $variant = xdp ] && echo "$why" | grep -qi 'not supported\|XDP'; then
			echo "UNAVAILABLE $name: $why"
		else
			echo "FAIL $name: the meter did not start: $why"
		fi
		meter_stop
		continue
	fi
	replay "$T/light.pcap" --pps 50000
	rrc=$?
	sleep 0.5
	meter_stop
	record_lines "$T/$variant.json" | perkey >"$T/$variant.got"
	drops=$(final "$variant" .kernel_drops)
	# --ring 8: 8 MiB per socket (AF_PACKET: 64 KiB blocks; AF_XDP: frames of its size)
	if [ $variant = xdp ]; then
		fs=$(sed -n 's/.*frames x \([0-9]*\) B, RX ring.*/\1/p' "$T/$variant.out" | head -1)
		ring_ok=$(grep -c "RX ring $((8 * 1048576 / ${fs:-1}))[),]" "$T/$variant.out")
		ring_want=1
	else
		ring_ok=$(grep -c 'block ring (128 x 64 KiB' "$T/$variant.out")
		ring_want=2
	fi
	if [ "$ring_ok" != "$ring_want" ]; then
		echo "  $(grep -m2 'AF_XDP\|AF_PACKET' "$T/$variant.out")"
		echo "FAIL $name: --ring 8 not in $ring_want socket(s) of the banner"
	elif [ $rrc -ne 0 ] || [ $mrc -ne 0 ]; then
		echo "FAIL $name: tcpreplay $rrc, meter $mrc: $(head -2 "$T/$variant.err")"
	elif [ "$drops" != 0 ]; then
		echo "FAIL $name: the kernel dropped $drops frames"
	elif ! cmp -s "$T/$variant.got" "$T/light.want"; then
		echo "  per key: $(wc -l <"$T/$variant.got") keys, want $(wc -l <"$T/light.want")"
		diff "$T/$variant.got" "$T/light.want" | head -6 | sed 's/^/    /'
		echo "FAIL $name"
	else
		echo "  $(wc -l <"$T/$variant.got") keys equal the truth's packets and octets"
		echo "PASS $name"
	fi
done
exit 0
