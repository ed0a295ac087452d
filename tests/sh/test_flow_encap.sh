#!/usr/bin/env bash
# tests/sh/test_flow_encap.sh - `secho flow` on encapsulated traffic, from captures written
# by an independent tool (Debian's python3-scapy), metered offline into JSON records that
# must equal what this test expects (docs/FLOW.md, "What a packet is: the dissector"):
#
#   - MPLS (one label, two labels, eight, multicast 0x8848) and PPPoE sessions (PPP IPv4
#     and IPv6): every flow keyed on its inner 5-tuple, both directions in one biflow,
#     octets the inner IP length; a flow whose label changes (as labels do hop by hop) is
#     one flow, and the same 5-tuple seen plain is the same flow too
#   - what is not IP inside (PPP LCP, Ethernet over MPLS) is counted as not_ip; nine labels,
#     a cut label stack and a cut PPPoE header are refused and counted under their names
#     (mpls_depth, mpls_short, pppoe_short)
#   - IPv6 AH (OSPF behind it) and the Mobility header: the protocol after them
#     (FlowTest's ipv6_auth_header, ipv6_mobile)
#   - ICMP echo in a biflow: the reply's type in rev_icmp_type (FlowTest's icmp), also
#     over MPLS with different labels each way (FlowTest's mpls_double)
#   - tunnels: GRE (with and without a key, IPv4/IPv6/Ethernet inside), ERSPAN II and III,
#     VXLAN, Geneve, GTP-U (with an extension header), IP in IP (4in4, 6in4, 4in6, 6in6),
#     Ethernet over MPLS (with and without a control word): every flow keyed on its
#     innermost 5-tuple and its tunnel (tunnel_type, tunnel_id in the JSON), octets the
#     inner IP length; the same inner addresses in two VNIs, GRE keys or TEIDs are two
#     flows; five encapsulations are refused (tun_depth), a cut GRE header too
#     (gre_short); a non-VXLAN payload on 4789 is the outer UDP flow; biflow and
#     uniflow, one and two workers
#   - the tunnels over IPFIX (a file: collector; docs/FLOW.md, "Templates and elements"):
#     tshark decodes every template and record with no malformed data, and the tunnel
#     part's bytes (Open vSwitch's elements, PEN 6876: tunnelType, tunnelKey,
#     tunnelProtocolIdentifier, the outer IPv4 addresses, the UDP port; VXLAN's
#     layer2SegmentId) are each tunnel's, for VXLAN (also inside GRE), GRE with and
#     without a key and over IPv6, ERSPAN, GTP-U both ways, Geneve, the four IP in IP and
#     EoMPLS; the plain flow goes under the plain template (258) with no tunnel element; a
#     strict collector (build/tools/ipfix_listen) reads every record; nfcapd (which knows
#     no PEN 6876 element) stores every record with the JSON's 5-tuple and counts
# Needs: jq, python3-scapy; tshark, nfdump for the IPFIX groups (scripts/deps.sh).
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
S=${SECHO_BIN:-$ROOT/build/secho}
T=$(mktemp -d /tmp/secho-flow-encap.XXXXXX)
trap 'rm -rf "$T"' EXIT

# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"

need_tools "secho flow encapsulations" jq || exit 1
[ -x "$S" ] || { echo "FAIL secho flow encapsulations: $S not built"; exit 1; }
# Debian's python3 (python3-scapy's), not another one first in PATH
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if ! "$PY" -c 'import scapy' 2>/dev/null; then
	group "flow encapsulations: captures built by scapy"
	check 1 "python3-scapy not installed (scripts/deps.sh installs it)"
	end_group
	exit 1
fi

# The capture: each flow's packets, in time order, 1 ms apart. Addresses 198.18.0.0/15 and
# 2001:db8::/32; MACs locally administered.
"$PY" - "$T/encap.pcap" <<'EOF' || { echo "FAIL flow encapsulations: scapy could not write the capture"; exit 1; }
import sys
from scapy.all import Ether, Dot1Q, IP, IPv6, TCP, UDP, ICMP, Raw, wrpcap
from scapy.contrib.mpls import MPLS
from scapy.layers.ppp import PPPoE, PPP
from scapy.layers.inet6 import IPv6ExtHdrDestOpt
from scapy.layers.ipsec import AH
from scapy.layers.inet6 import MIP6MH_BU

E = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
pk = []
def eth(t):
    return Ether(type=t, **E)

def mpls(labels):
    s = None
    for i, l in enumerate(labels):
        m = MPLS(label=l, s=1 if i == len(labels) - 1 else 0, ttl=64)
        s = m if s is None else s / m
    return s

# 1. one label, IPv4 UDP: 3 packets forward (label 100, then 200: labels change hop by
#    hop), 2 back, and 1 plain forward packet of the same 5-tuple
a, b = "198.18.1.1", "198.18.1.2"
for i in range(3):
    pk.append(eth(0x8847) / mpls([100 if i < 2 else 200]) / IP(src=a, dst=b) / UDP(sport=4000, dport=53) / Raw(b"q" * 20))
for i in range(2):
    pk.append(eth(0x8847) / mpls([300]) / IP(src=b, dst=a) / UDP(sport=53, dport=4000) / Raw(b"r" * 60))
pk.append(eth(0x0800) / IP(src=a, dst=b) / UDP(sport=4000, dport=53) / Raw(b"q" * 20))
# 2. two labels, IPv4 TCP (ACKs): 2 forward, 1 back
a, b = "198.18.2.1", "198.18.2.2"
for i in range(2):
    pk.append(eth(0x8847) / mpls([1000, 2000]) / IP(src=a, dst=b) / TCP(sport=40000, dport=443, flags="A") / Raw(b"x" * 100))
pk.append(eth(0x8847) / mpls([3000, 2001]) / IP(src=b, dst=a) / TCP(sport=443, dport=40000, flags="PA") / Raw(b"y" * 10))
# 3. eight labels, multicast, IPv6 UDP, under a VLAN tag: 1 packet
pk.append(Ether(**E) / Dot1Q(vlan=42, type=0x8848) / mpls(list(range(16, 24))) / IPv6(src="2001:db8::3:1", dst="2001:db8::3:2") / UDP(sport=5000, dport=5001) / Raw(b"m" * 30))
# 4. PPPoE, IPv4 ICMP echo request and reply (one biflow)
a, b = "198.18.4.1", "198.18.4.2"
pk.append(eth(0x8864) / PPPoE(sessionid=0x1234) / PPP(proto=0x0021) / IP(src=a, dst=b) / ICMP(type=8, id=1, seq=1) / Raw(b"p" * 56))
pk.append(eth(0x8864) / PPPoE(sessionid=0x1234) / PPP(proto=0x0021) / IP(src=b, dst=a) / ICMP(type=0, id=1, seq=1) / Raw(b"p" * 56))
# 5. PPPoE, IPv6 TCP: 2 forward, the PPP protocol field compressed (scapy's PPP, RFC 1661
#    section 6.5) and not (written here as bytes)
pk.append(eth(0x8864) / PPPoE(sessionid=7) / PPP(proto=0x0057) / IPv6(src="2001:db8::5:1", dst="2001:db8::5:2") / TCP(sport=50000, dport=22, flags="A"))
pk.append(eth(0x8864) / PPPoE(sessionid=7) / Raw(b"\x00\x57") / IPv6(src="2001:db8::5:1", dst="2001:db8::5:2") / TCP(sport=50000, dport=22, flags="A"))
# 6. not IP inside: PPP LCP, Ethernet over MPLS with a control word
pk.append(eth(0x8864) / PPPoE(sessionid=7) / PPP(proto=0xc021) / Raw(b"\x01\x01\x00\x04"))
pk.append(eth(0x8847) / mpls([500]) / Raw(b"\x00\x00\x00\x00") / Ether(type=0x0806, **E) / Raw(b"\x00" * 28))
# (Ethernet over MPLS carrying IP is a tunnel: see the tunnel captures below)
# 7. refused: nine labels, a cut label stack, a cut PPPoE header
pk.append(eth(0x8847) / mpls(list(range(30, 39))) / IP(src="198.18.7.1", dst="198.18.7.2") / UDP(sport=1, dport=2))
pk.append(Ether(bytes(eth(0x8847) / mpls([40, 41]))[:20]))
pk.append(Ether(bytes(eth(0x8864) / PPPoE(sessionid=9) / PPP(proto=0x0021))[:19]))
# 8. IPv6 AH with OSPF behind it; the Mobility header (its payload: no next header)
pk.append(eth(0x86dd) / IPv6(src="fe80::1", dst="ff02::5", nh=51, hlim=1) / AH(nh=89, spi=1, seq=1, icv=b"\x00" * 12) / Raw(b"o" * 44))
pk.append(eth(0x86dd) / IPv6(src="2001:db8::8:1", dst="2001:db8::8:2") / MIP6MH_BU())
# 9. FlowTest's mpls_double: an echo over two labels (272, 305), answered over one (305):
#    one biflow of 5 + 5 packets of 100 bytes
a, b = "198.18.9.1", "198.18.9.5"
for i in range(5):
    pk.append(eth(0x8847) / mpls([272, 305]) / IP(src=a, dst=b) / ICMP(type=8, id=9, seq=i) / Raw(b"e" * 72))
    pk.append(eth(0x8847) / mpls([305]) / IP(src=b, dst=a) / ICMP(type=0, id=9, seq=i) / Raw(b"e" * 72))
t = 1767225600.0
for i, p in enumerate(pk):
    p.time = t + i * 0.001
wrpcap(sys.argv[1], pk)
EOF

# what the records must be: proto src dst sport dport icmp packets octets rev_packets
# rev_octets rev_icmp (forward = the first packet's direction)
cat >"$T/want" <<'EOF'
17 198.18.1.1 198.18.1.2 4000 53 0.0 4 192 2 176 0.0
6 198.18.2.1 198.18.2.2 40000 443 0.0 2 280 1 50 0.0
17 2001:db8::3:1 2001:db8::3:2 5000 5001 0.0 1 78 0 0 0.0
1 198.18.4.1 198.18.4.2 0 0 8.0 1 84 1 84 0.0
6 2001:db8::5:1 2001:db8::5:2 50000 22 0.0 2 120 0 0 0.0
89 fe80::1 ff02::5 0 0 0.0 1 108 0 0 0.0
1 198.18.9.1 198.18.9.5 0 0 8.0 5 500 5 500 0.0
59 2001:db8::8:1 2001:db8::8:2 0 0 0.0 1 56 0 0 0.0
EOF

group "flow encapsulations: MPLS and PPPoE keyed on the inner 5-tuple, refusals counted"
"$S" flow --pcap "$T/encap.pcap" --json "$T/bi.json" --json-stats --quiet >"$T/bi.stats" 2>"$T/bi.err"
check $? "secho flow: $(tail -2 "$T/bi.err")"
jq -r '"\(.proto) \(.src) \(.dst) \(.sport) \(.dport) \(.icmp_type).\(.icmp_code) \(.packets) \(.octets) \(.rev_packets) \(.rev_octets) \(.rev_icmp_type).\(.rev_icmp_code)"' \
	"$T/bi.json" | LC_ALL=C sort >"$T/got"
LC_ALL=C sort "$T/want" | cmp -s - "$T/got"
check $? "records differ: $(LC_ALL=C sort "$T/want" | diff - "$T/got" | head -8 | tr '\n' ' ')"
st() { jq -r "select(.final) | .ignored_by$1" "$T/bi.stats"; }
[ "$(st .mpls_depth)" = 1 ] && [ "$(st .mpls_short)" = 1 ] &&
	[ "$(st .pppoe_short)" = 1 ] && [ "$(st .not_ip)" = 2 ]
check $? "ignored: mpls_depth $(st .mpls_depth), mpls_short $(st .mpls_short), pppoe_short $(st .pppoe_short), not_ip $(st .not_ip)"
end_group

group "flow encapsulations: uniflow records, two workers"
"$S" flow --pcap "$T/encap.pcap" --uniflow --json "$T/uni.json" --quiet >/dev/null 2>"$T/uni.err"
check $? "secho flow --uniflow: $(tail -2 "$T/uni.err")"
# every direction its own record: the biflows' directions, each with its own ICMP type
awk '{print $1, $2, $3, $4, $5, $6, $7, $8; if ($9 > 0) print $1, $3, $2, $5, $4, $11, $9, $10}' \
	"$T/want" | LC_ALL=C sort >"$T/want.uni"
jq -r '"\(.proto) \(.src) \(.dst) \(.sport) \(.dport) \(.icmp_type).\(.icmp_code) \(.packets) \(.octets)"' \
	"$T/uni.json" | LC_ALL=C sort >"$T/got.uni"
cmp -s "$T/want.uni" "$T/got.uni"
check $? "uniflow records differ: $(diff "$T/want.uni" "$T/got.uni" | head -6 | tr '\n' ' ')"
"$S" flow --pcap "$T/encap.pcap" --workers 2 --json "$T/w2.json" --quiet >/dev/null 2>"$T/w2.err"
check $? "secho flow --workers 2: $(tail -2 "$T/w2.err")"
jq -r '"\(.proto) \(.src) \(.dst) \(.sport) \(.dport) \(.icmp_type).\(.icmp_code) \(.packets) \(.octets) \(.rev_packets) \(.rev_octets) \(.rev_icmp_type).\(.rev_icmp_code)"' \
	"$T/w2.json" | LC_ALL=C sort | cmp -s - "$T/got"
check $? "two workers differ from one"
end_group

# ---- tunnels ----
# The capture and what its records must be, both from scapy: each flow's packets are
# listed with their inner IP packet, and the expected octets are that packet's length as
# scapy built it. Line: proto src dst sport dport packets octets rev_packets rev_octets
# tunnel_type tunnel_id (forward = the first packet's direction; "-" without a tunnel).
"$PY" - "$T/tun.pcap" "$T/tun.want" <<'EOF' || { echo "FAIL flow encapsulations: scapy could not write the tunnel capture"; exit 1; }
import sys
from scapy.all import Ether, Dot1Q, IP, IPv6, TCP, UDP, Raw, GRE, wrpcap
from scapy.contrib.mpls import MPLS
from scapy.contrib.erspan import ERSPAN_II, ERSPAN_III
from scapy.contrib.geneve import GENEVE
from scapy.contrib.gtp import GTP_U_Header, GTP_UDPPort_ExtensionHeader
from scapy.layers.vxlan import VXLAN

E = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
O4 = ("192.0.2.1", "192.0.2.2")       # tunnel endpoints
O6 = ("2001:db8:ff::1", "2001:db8:ff::2")
pk, flows, order = [], {}, []

def o4(rev, **kw):
    s, d = O4[::-1] if rev else O4
    return Ether(**E) / IP(src=s, dst=d, **kw)

def o6(rev, **kw):
    s, d = O6[::-1] if rev else O6
    return Ether(**E) / IPv6(src=s, dst=d, **kw)

def add(outer, inner, tt="-", tid="-"):
    """One packet: outer headers (ending where the inner packet goes) and the inner IP packet."""
    pk.append(outer / inner)
    ip = inner
    l4 = ip.payload
    key = (ip.proto if ip.version == 4 else ip.nh, ip.src, ip.dst, l4.sport, l4.dport, tt, str(tid))
    rkey = (key[0], ip.dst, ip.src, l4.dport, l4.sport, tt, str(tid))
    n = len(bytes(ip))
    if rkey in flows:
        flows[rkey][2] += 1
        flows[rkey][3] += n
    else:
        if key not in flows:
            flows[key] = [0, 0, 0, 0]
            order.append(key)
        flows[key][0] += 1
        flows[key][1] += n

def i4(s, d, sp, dp, n=20, tcp=False):
    l4 = TCP(sport=sp, dport=dp, flags="A") if tcp else UDP(sport=sp, dport=dp)
    return IP(src=s, dst=d) / l4 / Raw(b"i" * n)

def i6(s, d, sp, dp, n=20):
    return IPv6(src=s, dst=d) / UDP(sport=sp, dport=dp) / Raw(b"j" * n)

A, B = "198.18.10.1", "198.18.10.2"   # every tenant uses these inside
A6, B6 = "2001:db8:10::1", "2001:db8:10::2"
# GRE without a key, IPv4 in IPv4: 2 forward, 1 back
for r in (0, 0, 1):
    add(o4(r) / GRE(), i4(*((B, A, 80, 1000) if r else (A, B, 1000, 80)), n=30, tcp=True), "gre", 0)
# GRE keys 1 and 2, the same inner flow: two flows
for k in (1, 2, 1):
    add(o4(0) / GRE(key_present=1, key=k), i4(A, B, 5000, 53), "gre", k)
# GRE with checksum and sequence number, IPv6 in IPv6; GRE bridging Ethernet (a VLAN tag inside)
add(o6(0) / GRE(chksum_present=1, seqnum_present=1, sequence_number=5), i6(A6, B6, 7, 8), "gre", 0)
add(o4(0) / GRE(proto=0x6558) / Ether(**E) / Dot1Q(vlan=9), i4(A, B, 9, 9, n=44), "gre", 0)
# ERSPAN II (session 77) and III (session 78), mirrored Ethernet inside
add(o4(0) / GRE(seqnum_present=1, proto=0x88be) / ERSPAN_II(session_id=77) / Ether(**E), i4(A, B, 10, 10), "erspan", 77)
add(o4(1) / GRE(seqnum_present=1, proto=0x88be) / ERSPAN_II(session_id=77) / Ether(**E), i4(B, A, 10, 10), "erspan", 77)
add(o4(0) / GRE(proto=0x22eb) / ERSPAN_III(session_id=78) / Ether(**E), i4(A, B, 11, 11), "erspan", 78)
# VXLAN VNIs 100 and 200, the same inner flow: two flows; 100 answered
for vni, r in ((100, 0), (200, 0), (100, 1)):
    add(o4(r) / UDP(sport=49152 + vni, dport=4789) / VXLAN(vni=vni, flags=0x08) / Ether(**E),
        i4(*((B, A, 443, 50000) if r else (A, B, 50000, 443)), n=60, tcp=True), "vxlan", vni)
# Geneve with an option, Ethernet inside; Geneve carrying IPv6 directly; over IPv6
add(o4(0) / UDP(sport=50000, dport=6081) / GENEVE(vni=300, proto=0x6558, optionlen=2) / Raw(b"\x01\x02\x03\x01\x00\x00\x00\x07") / Ether(**E), i4(A, B, 12, 12), "geneve", 300)
add(o6(0) / UDP(sport=50000, dport=6081) / GENEVE(vni=301, proto=0x86dd), i6(A6, B6, 13, 13), "geneve", 301)
# GTP-U: TEIDs 0x1000 and 0x2000 carry the same inner flow (two flows); one with an
# extension header; the downlink has its own TEID, so it is a flow of its own
for teid in (0x1000, 0x2000):
    add(o4(0) / UDP(sport=2152, dport=2152) / GTP_U_Header(teid=teid, gtp_type=255), i4(A, B, 14, 14), "gtpu", teid)
add(o4(0) / UDP(sport=2152, dport=2152) / GTP_U_Header(teid=0x1000, gtp_type=255, E=1, next_ex=0x40) / GTP_UDPPort_ExtensionHeader(udp_port=2152), i4(A, B, 14, 14), "gtpu", 0x1000)
add(o4(1) / UDP(sport=2152, dport=2152) / GTP_U_Header(teid=0x3000, gtp_type=255), i4(B, A, 14, 14), "gtpu", 0x3000)
# IP in IP: 4in4, 6in4, 4in6, 6in6
add(o4(0, proto=4), i4(A, B, 15, 15), "ipip", 0)
add(o4(0, proto=41), i6(A6, B6, 15, 15), "ipip", 0)
add(o6(0, nh=4), i4(A, B, 16, 16), "ipip", 0)
add(o6(0, nh=41), i6(A6, B6, 16, 16), "ipip", 0)
# Ethernet over MPLS, with a control word and without (a MAC not starting with 0, 4 or 6)
add(Ether(type=0x8847, **E) / MPLS(label=500, s=1) / Raw(b"\x00\x00\x00\x00") / Ether(**E), i4(A, B, 17, 17), "eompls", 0)
add(Ether(type=0x8847, **E) / MPLS(label=501, s=1) / Ether(src="12:00:00:00:00:01", dst="12:00:00:00:00:02"), i4(A, B, 18, 18), "eompls", 0)
# VXLAN in GRE (keyed): the innermost tunnel
add(o4(0) / GRE(key_present=1, key=9) / IP(src="198.51.100.1", dst="198.51.100.2") / UDP(sport=1, dport=4789) / VXLAN(vni=400) / Ether(**E), i4(A, B, 19, 19), "vxlan", 400)
# on port 4789 but not VXLAN (no I flag): the outer UDP flow
add(Ether(**E), IP(src=O4[0], dst=O4[1]) / UDP(sport=3333, dport=4789) / Raw(b"\x00" * 40))
# refused: five IP-in-IP encapsulations; a GRE header cut short
x = IP(src="198.51.100.9", dst="198.51.100.10") / UDP(sport=1, dport=2)
for i in range(5):
    x = IP(src="198.51.100.%d" % (20 + i), dst="198.51.100.99", proto=4) / x
pk.append(Ether(**E) / x)
pk.append(o4(0, proto=47) / Raw(b"\x00\x00"))
t = 1767225600.0
for i, p in enumerate(pk):
    p.time = t + i * 0.001
wrpcap(sys.argv[1], pk)
with open(sys.argv[2], "w") as f:
    for k in order:
        v = flows[k]
        f.write("%s %s %s %s %s %d %d %d %d %s %s\n" % (k[0], k[1], k[2], k[3], k[4], v[0], v[1], v[2], v[3], k[5], k[6]))
EOF

tunrec='"\(.proto) \(.src) \(.dst) \(.sport) \(.dport) \(.packets) \(.octets) \(.rev_packets // 0) \(.rev_octets // 0) \(.tunnel_type // "-") \(.tunnel_id // "-")"'
group "flow encapsulations: tunnels keyed on the innermost 5-tuple and the tunnel"
"$S" flow --pcap "$T/tun.pcap" --json "$T/tbi.json" --json-stats --quiet >"$T/tbi.stats" 2>"$T/tbi.err"
check $? "secho flow: $(tail -2 "$T/tbi.err")"
jq -r "$tunrec" "$T/tbi.json" | LC_ALL=C sort >"$T/tgot"
LC_ALL=C sort "$T/tun.want" >"$T/twant"
[ "$(wc -l <"$T/twant")" -ge 20 ] && cmp -s "$T/twant" "$T/tgot"
check $? "records differ: $(diff "$T/twant" "$T/tgot" | head -8 | tr '\n' ' ')"
tst() { jq -r "select(.final) | .ignored_by$1" "$T/tbi.stats"; }
[ "$(tst .tun_depth)" = 1 ] && [ "$(tst .gre_short)" = 1 ]
check $? "ignored: tun_depth $(tst .tun_depth), gre_short $(tst .gre_short)"
# a plain record carries no tunnel fields
[ "$(jq -s '[.[] | select(.dport == 4789 and .sport == 3333 and (has("tunnel_type") | not))] | length' "$T/tbi.json")" = 1 ]
check $? "the outer UDP flow on 4789: no tunnel fields"
end_group

group "flow encapsulations: tunnels, uniflow records, two workers"
"$S" flow --pcap "$T/tun.pcap" --uniflow --json "$T/tuni.json" --quiet >/dev/null 2>"$T/tuni.err"
check $? "secho flow --uniflow: $(tail -2 "$T/tuni.err")"
awk '{print $1, $2, $3, $4, $5, $6, $7, 0, 0, $10, $11; if ($8 > 0) print $1, $3, $2, $5, $4, $8, $9, 0, 0, $10, $11}' \
	"$T/twant" | LC_ALL=C sort >"$T/twant.uni"
jq -r "$tunrec" "$T/tuni.json" | LC_ALL=C sort >"$T/tgot.uni"
cmp -s "$T/twant.uni" "$T/tgot.uni"
check $? "uniflow records differ: $(diff "$T/twant.uni" "$T/tgot.uni" | head -6 | tr '\n' ' ')"
for w in 1 2; do
	"$S" flow --pcap "$T/tun.pcap" --workers $w --json "$T/tw$w.json" --quiet >/dev/null 2>"$T/tw$w.err"
	check $? "secho flow --workers $w: $(tail -2 "$T/tw$w.err")"
	jq -r "$tunrec" "$T/tw$w.json" | LC_ALL=C sort | cmp -s - "$T/tgot"
	check $? "--workers $w differs from the default"
	"$S" flow --pcap "$T/tun.pcap" --workers $w --uniflow --json "$T/tuw$w.json" --quiet >/dev/null 2>"$T/tuw$w.err"
	check $? "secho flow --workers $w --uniflow: $(tail -2 "$T/tuw$w.err")"
	jq -r "$tunrec" "$T/tuw$w.json" | LC_ALL=C sort | cmp -s - "$T/tgot.uni"
	check $? "--workers $w --uniflow differs"
done
end_group

# ---- tunnels over IPFIX ----
# The tunnel part (docs/FLOW.md, "Templates and elements"): Open vSwitch's elements under
# VMware's PEN 6876, which tshark 4.0 does not name: it shows "Enterprise Private entry:
# (VMware Inc.) Type 891: Value (hex bytes): 01", whose bytes are checked here.
group "flow encapsulations: the tunnel part over IPFIX, decoded by tshark and a strict collector"
"$S" flow --pcap "$T/tun.pcap" --json "$T/tix.json" --collector "file:$T/tun.ipfix" --quiet \
	>/dev/null 2>"$T/tix.err"
check $? "secho flow --collector file: $(tail -2 "$T/tix.err")"
B=${BUILD:-build}
case "$B" in /*) ;; *) B="$ROOT/$B" ;; esac
LIS=$B/tools/ipfix_listen
if [ ! -x "$LIS" ]; then
	check 1 "$LIS not built"
else
	"$LIS" --file "$T/tun.ipfix" --out "$T/tix.lines" >"$T/tix.sum" 2>&1
	check $? "the strict collector saw errors: $(cat "$T/tix.sum")"
	[ "$(sed -n 's/.* records=\([0-9]*\).*/\1/p' "$T/tix.sum")" = "$(wc -l <"$T/tix.json")" ]
	check $? "strict collector: $(cat "$T/tix.sum"); want $(wc -l <"$T/tix.json") records"
fi
if ! command -v tshark >/dev/null; then
	check 1 "tshark not installed (scripts/deps.sh installs it)"
else
	# the IPFIX file's messages, each in a UDP datagram to port 4739
	"$PY" - "$T/tun.ipfix" "$T/tix.pcap" <<'PYEOF'
import struct, sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
b = open(sys.argv[1], "rb").read()
out, o = [], 0
while o + 16 <= len(b):
    n = struct.unpack(">H", b[o + 2:o + 4])[0]
    out.append(Ether() / IP(src="127.0.0.1", dst="127.0.0.1") / UDP(sport=40000, dport=4739) / Raw(b[o:o + n]))
    o += n
wrpcap(sys.argv[2], out)
PYEOF
	check $? "could not wrap the IPFIX file"
	tshark -r "$T/tix.pcap" -d udp.port==4739,cflow -V >"$T/tix.txt" 2>&1
	check $? "tshark could not read the capture"
	! grep -qi 'malformed\|no template\|template not found\|Expert Info (Error\|Expert Info (Warn' "$T/tix.txt"
	check $? "tshark: $(grep -i -m3 'malformed\|no template\|template not found\|Expert Info' "$T/tix.txt" | tr '\n' ' ')"
	# each data record on one line (tshark -V's lines joined by '|'), after its set's ID
	awk '/^ *(Set [0-9]+|Frame [0-9]+:)/ { open = 0 }
		/FlowSet Id: \(Data\)/ { tid = $NF; gsub(/[()]/, "", tid) }
		/^ *Flow [0-9]+$/ { n++; a[n] = "|tid=" tid; open = 1; next }
		open { sub(/^ +/, ""); a[n] = a[n] "|" $0 }
		END { for (i = 1; i <= n; i++) print a[i] "|" }' "$T/tix.txt" >"$T/tix.flows"
	# one line per data record: the flows and the statistics record
	[ "$(wc -l <"$T/tix.flows")" = $(($(wc -l <"$T/tix.json") + 1)) ]
	check $? "tshark decoded $(wc -l <"$T/tix.flows") data records, want $(($(wc -l <"$T/tix.json") + 1))"
	V() { printf 'Type %s: Value (hex bytes): %s|' "$1" "$2"; }
	O4="$(V 893 'c0 00 02 01')$(V 894 'c0 00 02 02')"
	# tun WHAT SRC SPORT DPORT PATTERN...: some record of that inner source and ports has
	# every PATTERN, in order (read without tshark's "Enterprise Private entry: (VMware
	# Inc.) " before each element); a PATTERN "!X" means the record has no X anywhere
	tun() {
		local what=$1 src=$2 sp=$3 dp=$4 r rest p ok
		shift 4
		while IFS= read -r r; do
			ok=1
			rest=${r//Enterprise Private entry: (VMware Inc.) /} # the PEN before each Type
			for p in "$@"; do
				if [ "${p#!}" != "$p" ]; then
					[[ "$r" != *"${p#!}"* ]] || { ok=0; break; }
					continue
				fi
				[[ "$rest" == *"$p"* ]] || { ok=0; break; }
				rest=${rest#*"$p"}
			done
			[ $ok = 0 ] || { check 0 "$what"; return; }
		done < <(grep -F "|SrcAddr: $src|" "$T/tix.flows" | grep -F "|SrcPort: $sp|" | grep -F "|DstPort: $dp|")
		check 1 "$what: no record with $* in: $(grep -F "|SrcAddr: $src|" "$T/tix.flows" |
			grep -F "|SrcPort: $sp|" | grep -o 'Type 89[0-9]: Value (hex bytes): [0-9a-f ]*\|Layer2 Segment Id: [0-9]*' | tr '\n' ';')"
	}
	# VXLAN (type 1, UDP, port 4789, layer2SegmentId 1 << 56 | VNI), VNIs 100 and 200
	tun "VXLAN 100" 198.18.10.1 50000 443 "$(V 891 01)$(V 892 '00 00 00 64')$(V 895 11)$O4$(V 897 '12 b5')Layer2 Segment Id: 72057594037928036|"
	tun "VXLAN 200" 198.18.10.1 50000 443 "$(V 891 01)$(V 892 '00 00 00 c8')$(V 895 11)$O4$(V 897 '12 b5')Layer2 Segment Id: 72057594037928136|"
	# inside GRE: the innermost tunnel's type, key and port; the outermost addresses
	tun "VXLAN 400 in GRE" 198.18.10.1 19 19 "$(V 891 01)$(V 892 '00 00 01 90')$(V 895 11)$O4$(V 897 '12 b5')"
	# GRE (type 2, protocol 47): keys 1 and 2, no key, over IPv6 (no addresses); no port
	tun "GRE key 1" 198.18.10.1 5000 53 "$(V 891 02)$(V 892 '00 00 00 01')$(V 895 2f)$O4" "!Type 897" "!Layer2 Segment"
	tun "GRE key 2" 198.18.10.1 5000 53 "$(V 891 02)$(V 892 '00 00 00 02')$(V 895 2f)$O4" "!Type 897"
	tun "GRE without a key" 198.18.10.1 1000 80 "$(V 891 02)$(V 892 '00 00 00 00')$(V 895 2f)$O4"
	tun "GRE over IPv6" 2001:db8:10::1 7 8 "$(V 891 02)$(V 892 '00 00 00 00')$(V 895 2f)" "!Type 893" "!Type 894" "!Type 897"
	# ERSPAN (type 0, protocol 47, the session)
	tun "ERSPAN II 77" 198.18.10.1 10 10 "$(V 891 00)$(V 892 '00 00 00 4d')$(V 895 2f)$O4"
	# GTP-U (type 0, UDP, port 2152, the TEID); the downlink from the other endpoint
	tun "GTP-U 0x1000" 198.18.10.1 14 14 "$(V 891 00)$(V 892 '00 00 10 00')$(V 895 11)$O4$(V 897 '08 68')" "!Layer2 Segment"
	tun "GTP-U 0x2000" 198.18.10.1 14 14 "$(V 891 00)$(V 892 '00 00 20 00')$(V 895 11)$O4$(V 897 '08 68')"
	tun "GTP-U 0x3000 downlink" 198.18.10.2 14 14 "$(V 891 00)$(V 892 '00 00 30 00')$(V 895 11)$(V 893 'c0 00 02 02')$(V 894 'c0 00 02 01')$(V 897 '08 68')"
	# Geneve (type 7, UDP, port 6081), over IPv4 and IPv6
	tun "Geneve 300" 198.18.10.1 12 12 "$(V 891 07)$(V 892 '00 00 01 2c')$(V 895 11)$O4$(V 897 '17 c1')"
	tun "Geneve 301 over IPv6" 2001:db8:10::1 13 13 "$(V 891 07)$(V 892 '00 00 01 2d')$(V 895 11)$(V 897 '17 c1')" "!Type 893"
	# IP in IP (type 0, protocol 4 or 41 by the inner version; addresses over IPv4 only)
	tun "IPv4 in IPv4" 198.18.10.1 15 15 "$(V 891 00)$(V 892 '00 00 00 00')$(V 895 04)$O4" "!Type 897"
	tun "IPv6 in IPv4" 2001:db8:10::1 15 15 "$(V 891 00)$(V 892 '00 00 00 00')$(V 895 29)$O4"
	tun "IPv4 in IPv6" 198.18.10.1 16 16 "$(V 891 00)$(V 892 '00 00 00 00')$(V 895 04)" "!Type 893"
	tun "IPv6 in IPv6" 2001:db8:10::1 16 16 "$(V 891 00)$(V 892 '00 00 00 00')$(V 895 29)" "!Type 893"
	# Ethernet over MPLS: no IP header carries it (protocol 0), no addresses, no port
	tun "Ethernet over MPLS" 198.18.10.1 17 17 "$(V 891 00)$(V 892 '00 00 00 00')$(V 895 00)" "!Type 893" "!Type 897"
	# the plain flow on port 4789: the plain IPv4 biflow template (258), no tunnel element
	tun "the plain UDP flow on 4789" 192.0.2.1 3333 4789 "|tid=258|" "!VMware" "!Layer2 Segment"
	# every tunnelled record has the tunnel part, no plain one has
	[ "$(grep -c 'Type 891:' "$T/tix.flows")" = "$(jq -s '[.[] | select(has("tunnel_type"))] | length' "$T/tix.json")" ]
	check $? "$(grep -c 'Type 891:' "$T/tix.flows") records with tunnelType, want $(jq -s '[.[] | select(has("tunnel_type"))] | length' "$T/tix.json")"
fi
end_group

# nfdump 1.7 knows no VMware element (it skips them: its tunnel fields stay empty), but
# every tunnelled record must reach it whole: the inner 5-tuple and both directions' counts.
group "flow encapsulations: nfcapd stores the tunnelled records (it skips the tunnel part)"
if ! command -v nfcapd >/dev/null || ! command -v nfdump >/dev/null; then
	check 1 "nfcapd, nfdump not installed (scripts/deps.sh installs nfdump)"
else
	# shellcheck source=tests/sh/flow_lib.bash
	. "$ROOT/tests/sh/flow_lib.bash"
	PIDS=()
	trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
	if ! nfcapd_start "$T/nf" "$T/nf.log" 8000000; then
		check 1 "nfcapd did not start: $(tail -2 "$T/nf.log")"
	else
		PIDS+=("$NF_PID")
		"$S" flow --pcap "$T/tun.pcap" --quiet --collector "udp://127.0.0.1:$NF_PORT" >"$T/nf.out" 2>&1
		check $? "secho flow: $(tail -2 "$T/nf.out")"
		nfcapd_stop 200
		nfdump -R "$T/nf" -q -N -o 'fmt:%sa,%da,%sp,%dp,%ipkt,%ibyt,%opkt,%obyt' | tr -d ' ' |
			LC_ALL=C sort >"$T/nf.got"
		jq -r '"\(.src),\(.dst),\(.sport),\(.dport),\(.packets),\(.octets),\(.rev_packets),\(.rev_octets)"' \
			"$T/tix.json" | LC_ALL=C sort >"$T/nf.want"
		[ -s "$T/nf.want" ] && cmp -s "$T/nf.want" "$T/nf.got"
		check $? "nfdump's records differ from the JSON ones: $(diff "$T/nf.want" "$T/nf.got" | head -6 | tr '\n' ' ')"
	fi
fi
end_group
