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
# Needs: jq, python3-scapy (scripts/deps.sh).
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
pk.append(eth(0x8847) / mpls([500]) / Raw(b"\x00\x00\x00\x00") / Ether(**E) / IP(src="198.18.6.1", dst="198.18.6.2") / UDP(sport=1, dport=2))
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
