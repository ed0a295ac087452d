#!/usr/bin/env bash
# tests/sh/test_endpoint_netns.sh - the endpoint against a hostile or unlucky wire.
#
#   ns host (192.0.2.1)  ==== veth ====  ns endpoint (no IP stack address)
#   secho host load/paired, raw frames     secho serve --ip 192.0.2.2
#
# 1. Sequence state on a tiny tmpfs (mounted in the endpoint's own mount namespace, gone
#    with it), filled under load: the endpoint exits promptly with status 1 and says why;
#    every answer before that verified, no sequence number seen twice.
# 2. Key material: with each offload backend, after traffic on both paths, the key's bytes
#    (and its hex text) are found in the endpoint's memory only in mappings that are locked
#    and excluded from core dumps (tests/tools/keyscan: /proc/PID/smaps and /proc/PID/mem).
# 3. A shared key (keygen --shared) served as instance 7: the host tool verifies every
#    response (IV fixed field = salt XOR instance, flag 0x04), over both engines.
# 4. Reflection: a second endpoint on the host side (192.0.2.1), and spoofed requests
#    "from" its service port 4000 to ours: dropped and counted as src_port, never answered,
#    so the two endpoints do not echo each other (each hop 32 bytes longer).
# 5. VLANs, on AF_PACKET (frame ring, block ring) and AF_XDP: without --vlan, requests and
#    ARP tagged 802.1Q VID 0, 5, 4094 or 802.1ad are never answered and counted as vlan;
#    with --vlan 5 the host tool, on a VLAN 5 interface, verifies every response (they come
#    back tagged 5), untagged and other tags are dropped; --vlan 4094; with --arp --vlan 5
#    the host kernel resolves the endpoint through VLAN 5.
# 6. Jumbo frames: the wire at MTU 9000, payloads of every size up to 8940 answered and
#    verified on the AF_PACKET frame ring, block ring and sendmmsg, with no drop; AF_XDP
#    refuses MTU 9000 at start with the reason, and serves MTU 3500.
# Namespaces, mounts and processes are removed on any exit (trap).
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
S=${SECHO_BIN:-$ROOT/build/secho}
BUILD=${BUILD:-build}
# shellcheck source=tests/sh/netns.sh
. "$ROOT/tests/sh/netns.sh"

if why=$(netns_unavailable); then
	echo "UNAVAILABLE endpoint netns: $why"
	exit 0
fi
D=$(mktemp -d /tmp/secho-ep.XXXXXX)
chmod 700 "$D"
EP=
cleanup() { stop_ep TERM; netns_cleanup; rm -rf "$D"; }
trap cleanup EXIT
trap 'exit 1' INT TERM
netns_setup || { echo "FAIL endpoint netns: cannot build the namespaces"; exit 1; }

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; }
check() { # description, shell condition (one string, evaluated)
	if eval "$2"; then pass "$1"; else fail "$1"; fi
}
jqn() { jq -r "$1" "$2"; }

"$S" keygen --key-id 42 --out "$D/key" >/dev/null || { fail "keygen"; exit 1; }

# ip4_frame DST_MAC SRC_MAC SRC_IP DST_IP SPORT DPORT PAYLOAD_LEN [TAG_HEX]: one Ethernet /
# IPv4 / UDP frame as hex (IPv4 checksum computed, UDP checksum 0 = none, payload bytes
# 0x5a); TAG_HEX (a TPID and TCI, e.g. 81000005) goes after the MACs.
csum16() {
	local h=$1 s=0 i
	for ((i = 0; i < ${#h}; i += 4)); do s=$((s + 16#${h:i:4})); done
	while ((s >> 16)); do s=$(((s & 0xffff) + (s >> 16))); done
	printf '%04x' $((~s & 0xffff))
}
ip4_frame() {
	local sip dip ip pl
	sip=$(printf '%02x' ${3//./ })
	dip=$(printf '%02x' ${4//./ })
	ip=$(printf '4500%04x00004000%s' $((28 + $7)) 4011)
	ip="$ip$(csum16 "${ip}0000$sip$dip")$sip$dip"
	pl=$(head -c "$7" /dev/zero | tr '\0' 'Z' | xxd -p | tr -d '\n')
	printf '%s%s%s0800%s%04x%04x%04x0000%s\n' "${1//:/}" "${2//:/}" "${8:-}" "$ip" "$5" "$6" \
		$((8 + $7)) "$pl"
}
# pcap_of FILE HEX...: a capture file (DLT_EN10MB) holding one frame per argument.
pcap_of() {
	local out=$1 f n le
	shift
	{
		printf 'd4c3b2a1020004000000000000000000ffff000001000000'
		for f in "$@"; do
			n=$(printf '%08x' $((${#f} / 2)))
			le=${n:6:2}${n:4:2}${n:2:2}${n:0:2}
			printf '0000000000000000%s%s%s' "$le" "$le" "$f"
		done
	} | xxd -r -p >"$out"
}
# paired_json OUT args...: host paired --json into OUT; when it fails, one line saying how
# (lost and failed per path, the first failure) and the endpoint's drops so far.
paired_json() {
	local out=$1 rc
	shift
	host paired --json "$@" >"$out" 2>"$out.err"
	rc=$?
	[ "$rc" -eq 0 ] || echo "  (host paired $*: exit $rc;" \
		"$(jq -c '[.paths[] | {lost, failed}]' "$out" 2>/dev/null) $(head -c 200 "$out.err"))"
	return $rc
}
# (a per-packet timeout of 1 s: the machine is shared, and these checks are about answers)
host() { # subcommand args...
	local sub=$1
	shift
	in_h "$S" host "$sub" --key "$D/key" --iface "$IF_H" --dst-mac "$MAC_E" --src-ip "$IP_H" \
		--dst-ip "$IP_E" --quiet --timeout 1000 "$@"
}

# ---- 1. sequence state on a tiny tmpfs, filled under load ----
# The endpoint runs in the mount namespace `ip netns exec` gives it, with a 64 KiB tmpfs
# over $D/st there; the same shell fills it when asked (file $D/fill-now), then waits for
# the endpoint and writes its exit status. --seq-window 4096: a state write every 2048
# numbers, so the full disk is met within a fraction of a second of load.
mkdir -m 700 "$D/st"
in_e sh -c '
	mount -t tmpfs -o size=64k,mode=0700 secho-test "$1" || exit 99
	"$2" serve --iface "$3" --ip "$4/24" --key "$5" --state "$1/seq.state" --io packet \
		--seq-window 4096 >"$6" 2>&1 &
	ep=$!
	i=0
	while [ ! -f "$7" ] && [ $i -lt 200 ] && kill -0 $ep 2>/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done
	dd if=/dev/zero of="$1/fill" bs=4k >/dev/null 2>&1
	wait $ep
	echo $? >"$8"
' sh "$D/st" "$S" "$IF_E" "$IP_E" "$D/key" "$D/st.log" "$D/fill-now" "$D/st.exit" &
EP=$!
if serve_up "$D/st.log" "$EP"; then
	host load --seconds 4 --max-loss 1000000000 --json --seq-log "$D/st.seqs" \
		>"$D/st.json" 2>"$D/st.err" &
	LP=$!
	sleep 1
	touch "$D/fill-now"
	wait "$LP"
	# The endpoint had 3 s to notice; the load has ended.
	for _ in $(seq 1 20); do [ -f "$D/st.exit" ] && break; sleep 0.1; done
	st_rc=$(cat "$D/st.exit" 2>/dev/null)
	msg=$(grep 'stopping: sequence state' "$D/st.log")
	echo "  ${msg:-no message}"
	total=$(wc -l <"$D/st.seqs")
	dups=$(sort -n "$D/st.seqs" | uniq -d | wc -l)
	verified=$(jqn '[.totals[].verified] | add' "$D/st.json" 2>/dev/null)
	failed=$(jqn '[.totals[].failed] | add' "$D/st.json" 2>/dev/null)
	echo "  load: ${verified:-?} verified, ${failed:-?} failed; $total sequence numbers, $dups repeated"
	check "state disk full under load: the endpoint exited by itself, status ${st_rc:-none} (1)" \
		'[ "${st_rc:-x}" = 1 ]'
	check "state disk full: stderr names the file and the reason" \
		'echo "$msg" | grep -q "seq.state.*No space left on device"'
	check "state disk full: every answer verified, none reused ($total seen, $dups repeated)" \
		'[ "${failed:-1}" = 0 ] && [ "${verified:-0}" -gt 2048 ] && [ "$dups" -eq 0 ]'
	[ "${st_rc:-x}" = 1 ] || sed 's/^/  /' "$D/st.log" | tail -5
else
	fail "endpoint started with its state on a tmpfs"
	sed 's/^/  /' "$D/st.log"
fi
stop_ep TERM

# ---- 2. every copy of the key in locked, dump-excluded memory ----
KEYHEX=$(sed -n 's/^key //p' "$D/key")
# start_ep LOG serve-args...: the endpoint up in its namespace; EP is its own PID
# (netns.sh: serve_start).
start_ep() {
	local log=$1
	shift
	serve_start endpoint "$log" --iface "$IF_E" --ip "$IP_E/24" --key "$D/key" \
		--state "$D/seq.state" "$@"
	local rc=$?
	EP=$SERVE_PID
	return $rc
}
for off in openssl ipsec-mb afalg; do
	if ! start_ep "$D/km.log" --io packet --offload "$off"; then
		stop_ep TERM
		if [ "$off" = afalg ] && grep -q 'AF_ALG' "$D/km.log"; then
			echo "UNAVAILABLE key memory ($off): $(head -1 "$D/km.log")"
		else
			fail "key memory ($off): endpoint started"
			sed 's/^/  /' "$D/km.log" | head -3
		fi
		continue
	fi
	paired_json "$D/km.json" --count 50
	prc=$?
	"$ROOT/$BUILD/tools/keyscan" "$EP" "$KEYHEX" >"$D/km.scan" 2>&1
	krc=$?
	sed 's/^/  /' "$D/km.scan" | grep -v '^  ok '
	check "key memory ($off): after traffic (paired exit $prc), the key only in locked, dump-excluded memory" \
		'[ "$prc" -eq 0 ] && [ "$krc" -eq 0 ]'
	stop_ep TERM
done

# ---- 3. a shared key, instance 7: the host verifies the instance's responses ----
"$S" keygen --key-id 43 --shared --out "$D/shared.key" >/dev/null
serve_start endpoint "$D/sh.log" --iface "$IF_E" --ip "$IP_E/24" --key "$D/shared.key" \
	--state "$D/shared.state" --instance 7 --io packet
up=$?
EP=$SERVE_PID
if [ "$up" = 0 ]; then
	in_h "$S" host paired --key "$D/shared.key" --iface "$IF_H" --dst-mac "$MAC_E" \
		--src-ip "$IP_H" --dst-ip "$IP_E" --quiet --count 100 --json >"$D/sh.json" 2>"$D/sh.err"
	rc=$?
	[ "$rc" -eq 0 ] || echo "  (host paired: exit $rc; $(jq -c '[.paths[] | {lost, failed}]' \
		"$D/sh.json" 2>/dev/null) $(head -c 200 "$D/sh.err"))"
	nv=$(jqn '[.paths[].verified] | add' "$D/sh.json" 2>/dev/null)
	check "shared key, instance 7: host paired verified ${nv:-0} of 200 (exit $rc)" \
		'[ "$rc" -eq 0 ] && [ "$nv" = 200 ]'
	check "shared key: the banner names the instance" \
		'grep -q "key id 43 (shared, instance 7)" "$D/sh.log"'
	check "shared key: the state names the instance" 'grep -q " instance 7 " "$D/shared.state"'
else
	fail "endpoint started with a shared key"
	sed 's/^/  /' "$D/sh.log" | head -3
fi
stop_ep TERM

# ---- 4. reflection: two endpoints, spoofed requests from the other's service port ----
serve_start host "$D/b.log" --iface "$IF_H" --ip "$IP_H/24" --key "$D/key" \
	--state "$D/b.state" --io packet
up=$?
EP2=$SERVE_PID
if [ "$up" = 0 ] && start_ep "$D/a.log" --io packet; then
	# A request from 192.0.2.1:4000 (the other endpoint's streaming port) to ours.
	pcap_of "$D/spoof.pcap" $(for i in 1 2 3 4 5; do
		ip4_frame "$MAC_E" "$MAC_H" "$IP_H" "$IP_E" 4000 4000 100
	done)
	host counters --json >"$D/r1.json" 2>/dev/null
	n=$(in_h "$ROOT/$BUILD/tools/pcap_send" "$IF_H" "$D/spoof.pcap" | awk '{print $2}')
	sleep 1
	host counters --json >"$D/r2.json" 2>/dev/null
	dtx=$(($(jqn '.report.tx_frames' "$D/r2.json") - $(jqn '.report.tx_frames' "$D/r1.json")))
	dsp=$(($(jqn '.report.drops.src_port // 0' "$D/r2.json") - $(jqn '.report.drops.src_port // 0' "$D/r1.json")))
	echo "  $n spoofed requests from port 4000: endpoint tx +$dtx (the first report), src_port +$dsp"
	check "reflection: spoofed requests from another endpoint's port 4000 unanswered, counted src_port" \
		'[ "$n" = 5 ] && [ "$dtx" -eq 1 ] && [ "$dsp" -eq 5 ]'
else
	fail "two endpoints started for the reflection test"
	sed 's/^/  /' "$D/a.log" "$D/b.log" | head -6
fi
stop_ep TERM
stop_job "$EP2"

# ---- 5. VLANs ----
# Tagged frames are built by the test (this kernel may have no VLAN devices): raw requests
# with the tag in their bytes, as a switch's trunk port delivers them. tests/tools/vlan_probe
# sends tagged requests to both engines and verifies every answer (tag, then nettle).
VP="$ROOT/$BUILD/tools/vlan_probe"
probe() { # TPID VID COUNT [--arp]
	in_h "$VP" "$IF_H" "$D/key" "$MAC_E" "$IP_H" "$IP_E" "$@"
}
# the endpoint's own count of a drop reason, from its summary (after stop_ep)
summary_drop() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$2" | tail -1; }
# Tagged requests to both engines and a tagged ARP request for us: VID 0, 5, 4094, 802.1ad.
ARPQ=ffffffffffff${MAC_H//:/}0806000108000604000102000000000001c000020100000000000000c0000202
tagged=()
for tag in 81000000 81000005 81000ffe 88a80005; do
	tagged+=("$(ip4_frame "$MAC_E" "$MAC_H" "$IP_H" "$IP_E" 40000 4000 64 "$tag")"
		"$(ip4_frame "$MAC_E" "$MAC_H" "$IP_H" "$IP_E" 40001 4001 64 "$tag")"
		"${ARPQ:0:24}$tag${ARPQ:24}")
done
pcap_of "$D/tagged.pcap" "${tagged[@]}"
for io in "packet" "packet --throughput" "xdp"; do
	# shellcheck disable=SC2086
	if ! start_ep "$D/v.log" --io $io --arp; then
		fail "VLAN ($io): endpoint started"
		sed 's/^/  /' "$D/v.log" | head -3
		stop_ep TERM
		continue
	fi
	host counters --json >"$D/v1.json" 2>/dev/null
	n=$(in_h "$ROOT/$BUILD/tools/pcap_send" "$IF_H" "$D/tagged.pcap" | awk '{print $2}')
	sleep 0.5
	host counters --json >"$D/v2.json" 2>/dev/null
	dtx=$(($(jqn '.report.tx_frames' "$D/v2.json") - $(jqn '.report.tx_frames' "$D/v1.json")))
	dvl=$(($(jqn '.report.drops.vlan' "$D/v2.json") - $(jqn '.report.drops.vlan' "$D/v1.json")))
	echo "  $io: $n tagged frames (VID 0, 5, 4094, 802.1ad; UDP to both engines, ARP): tx +$dtx (the report), vlan +$dvl"
	check "VLAN ($io), no --vlan: tagged requests and ARP unanswered, all counted vlan" \
		'[ "$n" = 12 ] && [ "$dtx" -eq 1 ] && [ "$dvl" -eq 12 ]'
	stop_ep TERM
done
for io in "packet" "packet --throughput" "packet --packet-tx sendmmsg" "xdp"; do
	# shellcheck disable=SC2086
	if ! start_ep "$D/v.log" --io $io --vlan 5 --arp; then
		fail "--vlan 5 ($io): endpoint started"
		sed 's/^/  /' "$D/v.log" | head -3
		stop_ep TERM
		continue
	fi
	out=$(probe 0x8100 5 100 2>&1)
	rc=$?
	arp=$(probe 0x8100 5 1 --arp 2>&1)
	arc=$?
	# then, none of these may be answered: untagged, 802.1ad VLAN 5, 802.1Q VLAN 4094
	host paired --count 5 --timeout 50 --max-loss 10 >/dev/null 2>&1
	o1=$(probe 0x88a8 5 5 2>&1)
	o2=$(probe 0x8100 4094 5 2>&1)
	stop_ep TERM
	dvl=$(summary_drop vlan "$D/v.log")
	echo "  --vlan 5 ($io): $out; $arp; untagged/802.1ad/VID 4094: ${o1%% verified*}, ${o2%% verified*}, vlan drops ${dvl:-?}"
	[ "$rc" -eq 0 ] || sed -n 's/^  \(frames\|drops\)/  endpoint: \1/p' "$D/v.log"
	check "--vlan 5 ($io): every answer tagged 5 and verified" '[ "$rc" -eq 0 ]'
	check "--vlan 5 --arp ($io): tagged ARP answered tagged" '[ "$arc" -eq 0 ]'
	check "--vlan 5 ($io): untagged, 802.1ad and other VLANs unanswered, counted vlan" \
		'[[ "$o1" == *"answered 0 "* ]] && [[ "$o2" == *"answered 0 "* ]] && [ "${dvl:-0}" -ge 20 ]'
done
if start_ep "$D/v.log" --io packet --vlan 4094; then
	out=$(probe 0x8100 4094 50 2>&1)
	rc=$?
	check "--vlan 4094 (packet): every answer tagged 4094 and verified ($out)" '[ "$rc" -eq 0 ]'
else
	fail "--vlan 4094: endpoint started"
fi
stop_ep TERM
# ---- 6. jumbo frames ----
mtu_all() { in_h ip link set "$IF_H" mtu "$1" && in_e ip link set "$IF_E" mtu "$1"; }
if mtu_all 9000; then
	for io in "packet" "packet --throughput" "packet --packet-tx sendmmsg"; do
		# shellcheck disable=SC2086
		if ! start_ep "$D/j.log" --io $io; then
			fail "MTU 9000 ($io): endpoint started"
			sed 's/^/  /' "$D/j.log" | head -3
			stop_ep TERM
			continue
		fi
		paired_json "$D/j1.json" --mtu 9000 --count 60
		r1=$?
		paired_json "$D/j2.json" --mtu 9000 --count 10 --size 8940
		r2=$?
		stop_ep TERM
		v1=$(jqn '[.paths[].verified] | add' "$D/j1.json" 2>/dev/null)
		v2=$(jqn '[.paths[].verified] | add' "$D/j2.json" 2>/dev/null)
		drops=$(sed -n 's/^  drops *//p' "$D/j.log")
		echo "  MTU 9000 ($io): ${v1:-0} of 120 (sizes 0..8940) and ${v2:-0} of 20 (8940 B) verified; drops ${drops:-?}"
		check "MTU 9000 ($io): every payload size answered on both engines, no drop" \
			'[ "$r1" -eq 0 ] && [ "$r2" -eq 0 ] && [ "$v1" = 120 ] && [ "$v2" = 20 ] && [ "$drops" = 0 ]'
	done
	start_ep "$D/j.log" --io xdp
	stop_ep TERM
	st=$(grep -c 'AF_XDP carries frames of up to 3808 bytes' "$D/j.log")
	echo "  MTU 9000 (xdp): $(head -1 "$D/j.log" | cut -c1-150)..."
	check "MTU 9000 (xdp): refused at start with the reason" '[ "$st" -eq 1 ]'
	mtu_all 3500
	if start_ep "$D/j.log" --io xdp; then
		paired_json "$D/j1.json" --mtu 3500 --count 60
		r1=$?
		paired_json "$D/j2.json" --mtu 3500 --count 10 --size 3440
		r2=$?
		check "MTU 3500 (xdp): every payload size answered on both engines" \
			'[ "$r1" -eq 0 ] && [ "$r2" -eq 0 ]'
	else
		fail "MTU 3500 (xdp): endpoint started"
		sed 's/^/  /' "$D/j.log" | head -3
	fi
	stop_ep TERM
	mtu_all 1500
else
	fail "MTU 9000 on the veth pair"
fi
exit 0
