#!/usr/bin/env bash
# tests/sh/test_flow_offload.sh - `secho flow --iface ... --offload xdp`: the meter with the
# XDP offload tier on a veth pair, generated traffic replayed into it.
#
#   +-------- ns $NS_H --------------+        +-------- ns $NS_E ------------------------+
#   |  secho flow replay -> $IF_H    |========|  $IF_E  <- XDP program, secho flow       |
#   +--------------------------------+  veth  +------------------------------------------+
#   (tests/sh/netns.sh; MTU 9500 for the jumbo frames of the nix profile; the traffic is
#   198.18.0.0/15 and 2001:db8::/32 and never leaves the pair)
#
# Each run replays a generated capture (nix: many light flows and some heavy ones, TCP with
# handshakes and FIN or RST ends, UDP, ICMP, IPv6) at 20,000 packets per second into the
# meter with a low threshold (10 packets) and --inactive 2, waits until every flow has gone
# idle, and stops it with SIGTERM. Checks:
#   1. native XDP, AF_PACKET: per key, the records' packets, octets and TCP flags equal the
#      truth's; the program took a good share of the packets; every flow it took came back
#      (reclaimed = offloaded, nothing unaccounted); the flows that ended with FIN or RST
#      ended as "eof"; after the flows went idle the map is empty (read with bpftool, not
#      through the meter) before the stop; after the stop the program is gone
#   2. the same with generic (skb) XDP
#   3. AF_XDP sockets in the program's XSKMAP (a heavy profile: frames within AF_XDP's
#      2 KiB buffers)
#   4. two workers (AF_PACKET fanout), each with its own map handle
#   5. a map of 8 flows: inserts refused and counted, the flows stay in software, records
#      still equal the truth
#   6. crashes: a meter killed with SIGKILL leaves nothing attached (BPF link) and the next
#      starts; a program left attached by a dead process (netlink attachment,
#      tests/tools/offload_hold) is removed by the next start, which says so
#   7. bad arguments exit 2 with one line on stderr
#   8. tunnels (VXLAN, GRE, GTP-U, IP in IP; scapy-written): never offloaded (pass_tunnel),
#      the records equal the offline meter's of the same capture (tunnel fields included),
#      while a plain flow beside them is offloaded; and the same capture live without the
#      tier, through AF_PACKET and through AF_XDP sockets: the same records
# A mode the kernel refuses is UNAVAILABLE with the meter's reason. Every wait is bounded;
# the namespaces go in any case.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
S=${SECHO_BIN:-$BUILD/secho}
HOLD="$BUILD/tools/offload_hold"
# shellcheck source=tests/sh/netns.sh
. "$ROOT/tests/sh/netns.sh"
# shellcheck source=tests/sh/flow_lib.bash
. "$ROOT/tests/sh/flow_lib.bash"

names=("flow offload: native XDP, AF_PACKET: records, flow ends, map emptied, detach"
	"flow offload: generic XDP, AF_PACKET: records, detach"
	"flow offload: AF_XDP sockets in the program's XSKMAP: records"
	"flow offload: two workers, a map handle each: records"
	"flow offload: a full map leaves flows in software, counted"
	"flow offload: kill -9, and a start after a crash cleans up"
	"flow offload: bad arguments"
	"flow offload: tunnelled flows go to the meter, metered exactly")

# group, check, end_group (tests/unit/harness.h's format)
G_SHOW=6
# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"

[ -x "$S" ] || { echo "FAIL flow offload: $S not built"; exit 1; }
T=$(mktemp -d /tmp/secho-flow-offload.XXXXXX)
MP= HP=
cleanup() {
	[ -n "$MP" ] && kill -9 "$MP" 2>/dev/null
	[ -n "$HP" ] && kill -9 "$HP" 2>/dev/null
	netns_cleanup
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- 7: bad arguments (no namespace needed) ----
group "${names[6]}"
for a in "--iface lo --offload bpf" "--iface lo --offload" "--pcap x.pcap --offload xdp" \
	"--iface lo --offload-threshold 5" "--iface lo --offload xdp --offload-threshold 0" \
	"--iface lo --offload xdp --offload-threshold 4294967296" \
	"--iface lo --offload xdp --offload-flows 7" \
	"--iface lo --offload xdp --offload-flows 16777217" "--iface lo --offload-flows 64" \
	"--iface lo --xdp-mode bogus" "--pcap x.pcap --xdp-mode native"; do
	# shellcheck disable=SC2086
	"$S" flow $a >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -eq 2 ] && [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" -eq 1 ]
	check $? "'$a': exit $rc, want 2 and one line on stderr ($(head -c 200 "$T/err"))"
done
"$S" flow --help | grep -q -- '--offload-threshold N'
check $? "--help names --offload-threshold"
end_group

unavail_rest() {
	for n in "${names[@]:0:6}"; do echo "UNAVAILABLE $n: $1"; done
	exit 0
}
if why=$(netns_unavailable); then unavail_rest "$why"; fi
need_tools "flow offload" jq bpftool || exit 1
have_gen || unavail_rest "no traffic generator in this build (secho flow gen)"
[ -x "$HOLD" ] || { echo "FAIL flow offload: $HOLD not built"; exit 1; }

netns_setup || { echo "FAIL flow offload: cannot build the veth topology"; exit 1; }
in_h ip link set dev "$IF_H" mtu 9500 && in_e ip link set dev "$IF_E" mtu 9500 ||
	{ echo "FAIL flow offload: MTU 9500"; exit 1; }
flow_gen nix 20000 31 "$T/nix.pcap" && flow_gen heavy 20000 32 "$T/heavy.pcap" ||
	{ echo "FAIL flow offload: generator"; exit 1; }

# per key: packets, octets and the OR of the TCP flags over its lines
perkey() {
	awk -F, -v OFS=, '
	function bor(a, b,  r, i) { r = 0; for (i = 1; i < 256; i *= 2)
		if (int(a / i) % 2 || int(b / i) % 2) r += i; return r }
	{ k = $1 OFS $2 OFS $3 OFS $4 OFS $5 OFS $6 OFS $7 OFS $8 OFS $9 OFS $10
	  p[k] += $11; o[k] += $12; f[k] = bor(f[k], $15) }
	END { for (k in p) print k, p[k], o[k], f[k] }' | LC_ALL=C sort
}
truth_lines "$T/nix.pcap.truth.csv" | perkey >"$T/nix.want"
truth_lines "$T/heavy.pcap.truth.csv" | perkey >"$T/heavy.want"

# start_meter NAME ARGS...: secho flow on $IF_E; waits (bounded) for its banner; sets MP
# and PROG (the program's id from the banner)
start_meter() {
	local name=$1 i
	shift
	ip netns exec "$NS_E" "$S" flow --iface "$IF_E" --json "$T/$name.json" --json-stats \
		--stats 0.5 "$@" >"$T/$name.out" 2>"$T/$name.err" &
	MP=$!
	for i in $(seq 1 300); do # the table made resident first: up to seconds
		grep -q '^secho flow: metering' "$T/$name.out" 2>/dev/null &&
			grep -q 'XDP offload' "$T/$name.out" && break
		kill -0 "$MP" 2>/dev/null || break
		sleep 0.1
	done
	PROG=$(sed -n 's/.*XDP offload [a-z]* on [^ ]* (program \([0-9]*\),.*/\1/p' "$T/$name.out" |
		head -1)
	[ -n "$PROG" ]
}
replay() { # pcap
	in_h "$S" flow replay --iface "$IF_H" --pcap "$1" --pps 20000 --seconds 30 \
		>"$T/replay.log" 2>&1
}
final() { grep '^{' "$T/$1.out" | jq -r "select(.final) | $2"; }
# entries in the program's flow map, read by bpftool (-1: no such map)
map_entries() {
	local id
	for id in $(bpftool prog show id "$1" -j 2>/dev/null | jq -r '.map_ids[]?'); do
		if [ "$(bpftool map show id "$id" -j | jq -r .name)" = secho_flows ]; then
			bpftool map dump id "$id" -j | jq length
			return
		fi
	done
	echo -1
}
xdp_attached() { in_e ip link show dev "$IF_E" | grep -q 'prog/xdp\| xdp'; }
# the meter, started before the traffic; the reason it did not start, or UNAVAILABLE
try_start() { # group-name meter-name args...
	local gname=$1 name=$2
	shift 2
	if start_meter "$name" "$@"; then
		return 0
	fi
	local why
	why=$(grep -v '^libbpf\|^libxdp' "$T/$name.err" | head -1)
	meter_stop 15
	if echo "$why" | grep -qi 'refused\|not supported'; then
		echo "UNAVAILABLE $gname: $why"
	else
		echo "FAIL $gname: the meter did not start: $why"
	fi
	return 1
}
# run_case GROUP NAME PCAP WANT ARGS...: meter, replay, idle wait, stop; the common checks
run_case() {
	local gname=$1 name=$2 pcap=$3 want=$4
	shift 4
	try_start "$gname" "$name" --offload xdp --offload-threshold 10 --inactive 2 "$@" ||
		return 1
	group "$gname"
	replay "$pcap"
	check $? "replay failed: $(tail -2 "$T/replay.log")"
	sleep 3.5 # every flow goes idle (2 s) and is swept
	left=$(map_entries "$PROG")
	meter_stop 15
	check $mrc "the meter exited $mrc on SIGTERM: $(head -3 "$T/$name.err")"
	record_lines "$T/$name.json" | perkey >"$T/$name.got"
	cmp -s "$T/$name.got" "$want"
	check $? "per key not the truth: $(diff "$T/$name.got" "$want" | head -4 | tr '\n' ' ')"
	local drops seen hit offl recl unacc
	drops=$(final "$name" .kernel_drops)
	seen=$(final "$name" .offload.seen)
	hit=$(final "$name" .offload.hit)
	offl=$(final "$name" .offload.offloaded)
	recl=$(final "$name" .offload.reclaimed)
	unacc=$(final "$name" .offload.unaccounted)
	[ "$drops" = 0 ]
	check $? "the kernel dropped $drops frames"
	[ "$recl" = "$offl" ] && [ "$unacc" = 0 ] && [ "$(final "$name" .offload.in_map)" = 0 ]
	check $? "offloaded $offl, reclaimed $recl, unaccounted $unacc"
	[ "$seen" -ge 20000 ] 2>/dev/null
	check $? "the program saw $seen frames of 20000"
	[ "$left" = 0 ]
	check $? "the map held $left entries after every flow went idle (bpftool)"
	! xdp_attached && ! bpftool prog show id "$PROG" >/dev/null 2>&1
	check $? "program $PROG still there after the meter stopped"
	echo "  $name: $(wc -l <"$T/$name.got") keys; the program kept $hit of $seen frames;" \
		"$offl flows offloaded, $(final "$name" .offload.insert_full) refused," \
		"$(final "$name" .offload.peeks) peeks, $(final "$name" .offload.scans) scans"
	return 0
}

# ---- 1: native ----
if run_case "${names[0]}" native "$T/nix.pcap" "$T/nix.want" --io packet --xdp-mode native; then
	hit=$(final native .offload.hit)
	[ "$hit" -ge 6000 ] 2>/dev/null
	check $? "the program kept only $hit of 20000 packets"
	# flow ends: a record whose TCP flags hold FIN or RST ended as end of flow
	bad=$(jq -r 'def ended(f): (f % 2 == 1) or ((f / 4 | floor) % 2 == 1);
		select(.proto == 6 and (ended(.tcp_flags) or ended(.rev_tcp_flags // 0)) and
		.end != "eof") | .src' "$T/native.json" | wc -l)
	ends=$(jq -r 'select(.end == "eof" and .packets + (.rev_packets // 0) > 10) | .src' \
		"$T/native.json" | wc -l)
	[ "$bad" = 0 ] && [ "$ends" -gt 0 ]
	check $? "$bad records with FIN/RST not ended as eof; $ends offloadable flows ended as eof"
	end_group
fi

# ---- 2: generic ----
if run_case "${names[1]}" generic "$T/nix.pcap" "$T/nix.want" --io packet --xdp-mode skb; then
	grep -q 'XDP offload generic' "$T/generic.out"
	check $? "not attached in generic mode: $(grep 'XDP offload' "$T/generic.out")"
	end_group
fi

# ---- 3: AF_XDP ----
if run_case "${names[2]}" xsk "$T/heavy.pcap" "$T/heavy.want" --io xdp; then
	xsk=$(final xsk .offload.xsk)
	[ "$xsk" -gt 0 ] 2>/dev/null && grep -q "AF_XDP.*the caller's XDP program" "$T/xsk.out"
	check $? "nothing went to an AF_XDP socket ($xsk)"
	end_group
fi

# ---- 4: two workers ----
if run_case "${names[3]}" w2 "$T/nix.pcap" "$T/nix.want" --io packet --workers 2; then
	end_group
fi

# ---- 5: a full map ----
if run_case "${names[4]}" full "$T/nix.pcap" "$T/nix.want" --io packet --offload-flows 8; then
	full=$(final full .offload.insert_full)
	[ "$full" -gt 0 ] 2>/dev/null && [ "$(final full .offload.capacity)" = 8 ]
	check $? "no insert refused ($full) by a map of $(final full .offload.capacity)"
	end_group
fi

# ---- 6: crashes ----
gname=${names[5]}
if try_start "$gname" crash1 --offload xdp --io packet; then
	group "$gname"
	{
		kill -9 "$MP"
		wait "$MP"
	} 2>/dev/null
	MP=
	sleep 0.3
	! xdp_attached
	check $? "a program is attached after kill -9 of the meter"
	# not through in_e (a function): $! must be the process itself, which ip execs
	ip netns exec "$NS_E" "$HOLD" "$IF_E" native >"$T/hold.out" 2>"$T/hold.err" &
	HP=$!
	for i in $(seq 1 50); do
		grep -q attached "$T/hold.out" && break
		sleep 0.1
	done
	left=$(sed -n 's/^attached //p' "$T/hold.out")
	{
		kill -9 "$HP"
		wait "$HP"
	} 2>/dev/null
	HP=
	[ -n "$left" ] && xdp_attached
	check $? "offload_hold's netlink attachment did not outlive it: $(cat "$T/hold.err")"
	if start_meter crash2 --offload xdp --io packet; then
		grep -q "removed .*XDP offload program $left left by pid" "$T/crash2.out"
		check $? "the start did not say it removed program $left: $(grep XDP "$T/crash2.out")"
		! bpftool prog show id "$left" >/dev/null 2>&1
		check $? "program $left still loaded"
		replay "$T/heavy.pcap"
		sleep 0.5
		meter_stop 15
		check $mrc "the meter exited $mrc"
		[ "$(final crash2 .offload.hit)" -gt 0 ] 2>/dev/null
		check $? "the new program counted nothing"
		! xdp_attached
		check $? "attached after the stop"
	else
		check 1 "the start after the crash failed: $(head -2 "$T/crash2.err")"
		meter_stop 15
	fi
	end_group
fi

# ---- 8: tunnels ----
gname=${names[7]}
PY=/usr/bin/python3
if "$PY" -c 'import scapy' 2>/dev/null; then
	# 40 packets each: VXLAN VNIs 1 and 2 with the same inner flow, GRE with a key, GTP-U,
	# 4in4, and a plain UDP flow (offloaded: the tier is at work beside the tunnels)
	"$PY" - "$T/tun.pcap" <<'EOF'
import sys
from scapy.all import Ether, IP, UDP, Raw, GRE, wrpcap
from scapy.layers.vxlan import VXLAN
from scapy.contrib.gtp import GTP_U_Header
E = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
def o(**kw):
    return Ether(**E) / IP(src="192.0.2.1", dst="192.0.2.2", **kw)
inner = IP(src="198.18.20.1", dst="198.18.20.2") / UDP(sport=7000, dport=7001) / Raw(b"t" * 50)
pk = []
for i in range(40):
    pk.append(o() / UDP(sport=40001, dport=4789) / VXLAN(vni=1) / Ether(**E) / inner)
    pk.append(o() / UDP(sport=40002, dport=4789) / VXLAN(vni=2) / Ether(**E) / inner)
    pk.append(o() / GRE(key_present=1, key=7) / inner)
    pk.append(o() / UDP(sport=2152, dport=2152) / GTP_U_Header(teid=0x99, gtp_type=255) / inner)
    pk.append(o(proto=4) / inner)
    pk.append(Ether(**E) / IP(src="198.18.21.1", dst="198.18.21.2") / UDP(sport=1, dport=2) / Raw(b"p" * 50))
wrpcap(sys.argv[1], pk)
EOF
	rec='"\(.proto) \(.src) \(.dst) \(.sport) \(.dport) \(.packets) \(.octets) \(.rev_packets) \(.tunnel_type // "-") \(.tunnel_id // "-")"'
	"$S" flow --pcap "$T/tun.pcap" --json "$T/tun_off.json" --quiet >/dev/null 2>"$T/tun_off.err"
	jq -r "$rec" "$T/tun_off.json" | LC_ALL=C sort >"$T/tun.want"
	if [ "$(wc -l <"$T/tun.want")" != 6 ]; then
		echo "FAIL $gname: the offline meter made $(wc -l <"$T/tun.want") records of 6: $(head -2 "$T/tun_off.err")"
	elif try_start "$gname" tun --offload xdp --offload-threshold 10 --inactive 2 --io packet; then
		group "$gname"
		replay "$T/tun.pcap"
		check $? "replay failed: $(tail -2 "$T/replay.log")"
		sleep 3.5
		meter_stop 15
		check $mrc "the meter exited $mrc on SIGTERM: $(head -3 "$T/tun.err")"
		jq -r "$rec" "$T/tun.json" | LC_ALL=C sort >"$T/tun.got"
		cmp -s "$T/tun.got" "$T/tun.want"
		check $? "live records differ from the offline meter's: $(diff "$T/tun.got" "$T/tun.want" | head -6 | tr '\n' ' ')"
		pt=$(final tun .offload.pass_tunnel)
		hit=$(final tun .offload.hit)
		[ "$pt" = 200 ] && [ "$hit" -gt 0 ] && [ "$hit" -le 40 ] 2>/dev/null
		check $? "pass_tunnel $pt (want 200), hit $hit (the plain flow's, 1..40)"
		end_group
	fi
	# without the tier: the receive paths' own frames, the same records
	for io in packet xdp; do
		gn="flow live: tunnelled flows without the tier (--io $io), metered exactly"
		ip netns exec "$NS_E" "$S" flow --iface "$IF_E" --io "$io" --inactive 2 \
			--json "$T/tun-$io.json" --json-stats --stats 0.5 >"$T/tun-$io.out" \
			2>"$T/tun-$io.err" &
		MP=$!
		for _ in $(seq 1 300); do
			grep -q '^secho flow: metering' "$T/tun-$io.out" 2>/dev/null && break
			kill -0 "$MP" 2>/dev/null || break
			sleep 0.1
		done
		if ! grep -q '^secho flow: metering' "$T/tun-$io.out"; then
			why=$(grep -v '^libbpf\|^libxdp' "$T/tun-$io.err" | head -1)
			meter_stop 15
			if echo "$why" | grep -qi 'refused\|not supported'; then
				echo "UNAVAILABLE $gn: $why"
			else
				echo "FAIL $gn: the meter did not start: $why"
			fi
			continue
		fi
		group "$gn"
		replay "$T/tun.pcap"
		check $? "replay failed: $(tail -2 "$T/replay.log")"
		sleep 3.5
		meter_stop 15
		check $mrc "the meter exited $mrc on SIGTERM: $(head -3 "$T/tun-$io.err")"
		jq -r "$rec" "$T/tun-$io.json" | LC_ALL=C sort >"$T/tun-$io.got"
		cmp -s "$T/tun-$io.got" "$T/tun.want"
		check $? "live records differ from the offline meter's: $(diff "$T/tun-$io.got" "$T/tun.want" | head -6 | tr '\n' ' ')"
		end_group
	done
else
	echo "UNAVAILABLE $gname: python3-scapy not installed (scripts/deps.sh installs it)"
fi
exit 0
