#!/usr/bin/env bash
# tests/sh/test_feat_wg.sh - the wg feature set on WireGuard messages written by an
# independent tool (Debian's python3-scapy, scapy.contrib.wireguard): a capture this test
# builds, read flow by flow by build/tests/test_feat_wg in its SECHO_FEAT_PCAP mode (which
# applies the new-record rule: a new session's initiation starts a new record).
#
#   flow 1 (198.18.0.1:51820 <-> 198.18.0.2:51820): initiation (sender I1), response
#          (sender R1, receiver I1), data both ways, then a re-key: initiation (sender I2),
#          response (R2 -> I2), data          -> two records: (I1, R1) and (I2, R2)
#   flow 2: a cookie reply answering an initiation (the initiator is forward)
#   flow 3: an initiation of 147 bytes (one short)            -> not WireGuard
#   flow 4: transport data with a reserved byte set           -> not WireGuard
#   flow 5: WireGuard, then a datagram that is not            -> conf 0
#   flow 6: a DNS query (ID 0x0400, no flags) on port 51820   -> WireGuard, conf 1
# Expected: the indexes this test gave scapy. Needs python3-scapy (scripts/deps.sh).
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
PROG=$BUILD/tests/test_feat_wg
PY=/usr/bin/python3
T=$(mktemp -d /tmp/secho-feat-wg.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$ROOT/tests/sh/check_lib.bash"

NAME="wg feature set: scapy's WireGuard messages"
need_tools "$NAME" jq "$PY" || exit 1
[ -x "$PROG" ] || { echo "FAIL $NAME: $PROG not built"; exit 1; }
"$PY" - "$T/wg.pcap" <<'PYEOF' || { echo "FAIL $NAME: scapy could not write the capture"; exit 1; }
import sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
from scapy.contrib.wireguard import (Wireguard, WireguardInitiation, WireguardResponse,
                                     WireguardCookieReply, WireguardTransport)
E = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
pk = []
def udp(a, b, sp, dp, payload):
    p = Ether(**E) / IP(src=a, dst=b) / UDP(sport=sp, dport=dp) / payload
    p.time = 1700000000 + len(pk) * 0.001
    pk.append(p)
A, B = "198.18.0.1", "198.18.0.2"
def fwd(n, x): udp(A, B, 51820 + n, 51820, x)
def rev(n, x): udp(B, A, 51820, 51820 + n, x)
data = lambda r, c: Wireguard() / WireguardTransport(receiver_index=r, counter=c,
                                                     encrypted_encapsulated_packet=b"\x11" * 32)
# flow 1: a session, then a re-key
fwd(0, Wireguard() / WireguardInitiation(sender_index=0x01020304))
rev(0, Wireguard() / WireguardResponse(sender_index=0x0a0b0c0d, receiver_index=0x01020304))
fwd(0, data(0x0a0b0c0d, 0))
rev(0, data(0x01020304, 0))
fwd(0, Wireguard() / WireguardInitiation(sender_index=0x05060708))
rev(0, Wireguard() / WireguardResponse(sender_index=0x0e0f1011, receiver_index=0x05060708))
fwd(0, data(0x0e0f1011, 1))
# flow 2: initiation, cookie reply
fwd(1, Wireguard() / WireguardInitiation(sender_index=0x21222324))
rev(1, Wireguard() / WireguardCookieReply(receiver_index=0x21222324))
# flow 3: an initiation one byte short
fwd(2, Raw(bytes(Wireguard() / WireguardInitiation(sender_index=0x31))[:147]))
# flow 4: data with a reserved byte set
b4 = bytearray(bytes(data(0x41, 0))); b4[2] = 1
fwd(3, Raw(bytes(b4)))
# flow 5: WireGuard, then not
fwd(4, Wireguard() / WireguardInitiation(sender_index=0x51525354))
rev(4, Raw(b"this is not a wireguard message, no"))
# flow 6: a DNS query whose first 8 bytes read as a WireGuard data header
from scapy.layers.dns import DNS, DNSQR
fwd(5, DNS(id=0x0400, rd=0, qd=DNSQR(qname="wg-lookalike.secho.test")))
wrpcap(sys.argv[1], pk)
PYEOF
SECHO_FEAT_PCAP="$T/wg.pcap" "$PROG" >"$T/recs.json" 2>"$T/err"
rc=$?
# the meter itself: the table ends a record when a new session starts (forced, as ipfixprobe)
"$SECHO_BIN" flow --pcap "$T/wg.pcap" --features wg --json "$T/meter.json" --quiet >/dev/null 2>"$T/merr"
mrc=$?

# expect SPORT RECORD JQ-FILTER DESCRIPTION
expect() {
	local r
	r=$(jq -c --argjson s "$1" --argjson n "$2" 'select(.sport == $s and .record == $n)' \
		"$T/recs.json")
	if [ -z "$r" ]; then
		check 1 "port $1 record $2: missing"
		return
	fi
	echo "$r" | jq -e "$3" >/dev/null
	check $? "port $1 record $2: $4: $r"
}

group "$NAME"
check "$rc" "the test program failed on the capture: $(cat "$T/err")"
check "$([ "$(wc -l <"$T/recs.json")" -eq 7 ] && echo 0 || echo 1)" \
	"7 records expected: $(cat "$T/recs.json")"
expect 51820 0 '.wg_conf_level == 100 and .wg_src_peer == 16909060 and
	.wg_dst_peer == 168496141 and .packets == 4 and .messages == 4 and .types == 22' \
	"first session (0x01020304, 0x0a0b0c0d)"
expect 51820 1 '.wg_conf_level == 100 and .wg_src_peer == 84281096 and
	.wg_dst_peer == 235868177 and .packets == 3' "second session (0x05060708, 0x0e0f1011)"
expect 51821 0 '.wg_conf_level == 100 and .wg_src_peer == 555885348 and .wg_dst_peer == 0
	and .types == 10' "cookie reply: addressed to the initiator's index (forward), no responder index"
expect 51822 0 '(has("wg_conf_level") | not)' "147-byte initiation"
expect 51823 0 '(has("wg_conf_level") | not)' "reserved byte set"
expect 51824 0 '.wg_conf_level == 0 and .wg_src_peer == 1364349780' "then not WireGuard"
expect 51825 0 '.wg_conf_level == 1 and .types == 16' "DNS look-alike"
check "$mrc" "secho flow --features wg failed: $(cat "$T/merr")"
jq -s -e '[.[] | select(.sport == 51820 and .dport == 51820)] as $r | ($r | length) == 2 and
	$r[0].end_reason == 4 and $r[0].packets + $r[0].rev_packets == 4 and
	$r[0].wg_src_peer == 16909060 and $r[0].wg_dst_peer == 168496141 and
	$r[1].packets + $r[1].rev_packets == 3 and $r[1].wg_src_peer == 84281096 and
	$r[1].wg_dst_peer == 235868177' "$T/meter.json" >/dev/null
check $? "secho flow: the first session's record ends forced (4 packets), the re-key starts the second (3): $(jq -c 'select(.sport == 51820) | {packets, rev_packets, end_reason, wg_src_peer, wg_dst_peer}' "$T/meter.json" 2>&1)"
end_group
[ "${g_failed:-0}" -eq 0 ]
