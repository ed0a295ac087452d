#!/usr/bin/env bash
# tests/sh/test_flow_extra.sh - the record's L2-L4 fields (docs/FLOW.md, "The record's L2-L4
# fields") end to end: a capture written by an independent tool (Debian's python3-scapy)
# with known MACs, TTLs, ToS, TCP windows and options, MSS, MPLS labels, a VXLAN tunnel and
# an IPv6 traffic class, metered offline by `secho flow`:
#
#   1. JSON: every field the value the capture put in (biflow and uniflow)
#   2. IPFIX into a file, its messages wrapped in UDP datagrams (scapy) and decoded by
#      tshark: every template and record decodes, no malformed data, as many data records
#      as JSON lines, and the values tshark reads (MACs, min/max TTL, ToS, tcpOptions,
#      window, label stack sections, layer2SegmentId) are the capture's
#   3. a strict collector (build/tools/ipfix_listen) reads the same file: every record
#      under a template sent before it, equal to the JSON records
#   4. nfcapd over UDP on 127.0.0.1: `nfdump` shows the MACs and MPLS labels
# Needs: jq, python3-scapy, tshark, nfdump (scripts/deps.sh).
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
S=${SECHO_BIN:-$ROOT/build/secho}
T=$(mktemp -d /tmp/secho-flow-extra.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT

# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"
# shellcheck source=tests/sh/flow_lib.bash
. "$ROOT/tests/sh/flow_lib.bash"

need_tools "secho flow L2-L4 fields" jq || exit 1
[ -x "$S" ] || { echo "FAIL secho flow L2-L4 fields: $S not built"; exit 1; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if ! "$PY" -c 'import scapy' 2>/dev/null; then
	group "flow L2-L4 fields: a capture built by scapy"
	check 1 "python3-scapy not installed (scripts/deps.sh installs it)"
	end_group
	exit 1
fi

# The capture, 1 ms between packets:
#   TCP 198.18.0.1:40000 -> 198.18.0.2:443, MACs 02::0a -> 02::0b: SYN (ToS 0x28, TTL 64,
#     DF, window 64240, MSS 1460, SACK permitted, timestamps, NOP, window scale), SYN-ACK
#     (TTL 50, window 65160, MSS 1380), then ACKs with timestamps, TTLs 60 and 62 forward,
#     55 back
#   ICMP echo 198.18.1.1 <-> 198.18.5.5 over MPLS: labels 272, 305 forward, 305 back
#   ICMP echo 198.18.9.1 <-> 198.18.9.2 in VXLAN VNI 123 between 192.0.2.1 and 192.0.2.2
#     (outer MACs 02::0a / 02::0b, inner 02::0c / 02::0d; inner TTL 33)
#   UDP [2001:db8::1]:5000 -> [2001:db8::2]:53, traffic class 0xb8, hop limits 33 and 40
"$PY" - "$T/x.pcap" <<'EOF' || { echo "FAIL flow L2-L4 fields: scapy could not write the capture"; exit 1; }
import sys
from scapy.all import Ether, IP, IPv6, TCP, UDP, ICMP, Raw, wrpcap
from scapy.contrib.mpls import MPLS
from scapy.layers.vxlan import VXLAN

A, B, C, D = "02:00:00:00:00:0a", "02:00:00:00:00:0b", "02:00:00:00:00:0c", "02:00:00:00:00:0d"
pk = []
syn_o = [("MSS", 1460), ("SAckOK", b""), ("Timestamp", (1, 0)), ("NOP", None), ("WScale", 7)]
ack_o = [("NOP", None), ("NOP", None), ("Timestamp", (2, 1))]
c, s = ("198.18.0.1", 40000), ("198.18.0.2", 443)
pk.append(Ether(src=A, dst=B) / IP(src=c[0], dst=s[0], tos=0x28, ttl=64, flags="DF") /
          TCP(sport=c[1], dport=s[1], flags="S", window=64240, options=syn_o))
pk.append(Ether(src=B, dst=A) / IP(src=s[0], dst=c[0], ttl=50) /
          TCP(sport=s[1], dport=c[1], flags="SA", window=65160,
              options=[("MSS", 1380)] + syn_o[1:]))
pk.append(Ether(src=A, dst=B) / IP(src=c[0], dst=s[0], ttl=60, flags="DF") /
          TCP(sport=c[1], dport=s[1], flags="A", window=502, options=ack_o))
pk.append(Ether(src=B, dst=A) / IP(src=s[0], dst=c[0], ttl=55) /
          TCP(sport=s[1], dport=c[1], flags="PA", window=509, options=ack_o) / Raw(b"x" * 100))
pk.append(Ether(src=A, dst=B) / IP(src=c[0], dst=s[0], ttl=62, flags="DF") /
          TCP(sport=c[1], dport=s[1], flags="A", window=502, options=ack_o))

def mpls(labels):
    m = None
    for i, l in enumerate(labels):
        e = MPLS(label=l, s=1 if i == len(labels) - 1 else 0, ttl=64)
        m = e if m is None else m / e
    return m
pk.append(Ether(src=A, dst=B, type=0x8847) / mpls([272, 305]) /
          IP(src="198.18.1.1", dst="198.18.5.5", ttl=64) / ICMP(type=8, id=1, seq=1) / Raw(b"p" * 72))
pk.append(Ether(src=B, dst=A, type=0x8847) / mpls([305]) /
          IP(src="198.18.5.5", dst="198.18.1.1", ttl=61) / ICMP(type=0, id=1, seq=1) / Raw(b"p" * 72))

def vx(back):
    o = ("192.0.2.2", "192.0.2.1") if back else ("192.0.2.1", "192.0.2.2")
    i = ("198.18.9.2", "198.18.9.1") if back else ("198.18.9.1", "198.18.9.2")
    return (Ether(src=B if back else A, dst=A if back else B) / IP(src=o[0], dst=o[1], ttl=64) /
            UDP(sport=50000, dport=4789) / VXLAN(vni=123, flags=0x08) /
            Ether(src=D if back else C, dst=C if back else D) / IP(src=i[0], dst=i[1], ttl=33) /
            ICMP(type=0 if back else 8, id=7, seq=1) / Raw(b"v" * 28))
pk += [vx(False), vx(True), vx(False)]

for hl in (33, 40):
    pk.append(Ether(src=A, dst=B) / IPv6(src="2001:db8::1", dst="2001:db8::2", tc=0xb8, hlim=hl) /
              UDP(sport=5000, dport=53) / Raw(b"q" * 20))
t0 = 1767225600.0
for i, p in enumerate(pk):
    p.time = t0 + i * 0.001
wrpcap(sys.argv[1], pk)
EOF

# Meter it: biflow and uniflow, JSON and an IPFIX file each.
for mode in bi uni; do
	opt=()
	[ $mode = uni ] && opt=(--uniflow)
	"$S" flow --pcap "$T/x.pcap" "${opt[@]}" --quiet --json "$T/$mode.json" \
		--collector "file:$T/$mode.ipfix" >"$T/$mode.out" 2>&1 ||
		{ echo "FAIL flow L2-L4 fields: secho flow $mode failed: $(tail -2 "$T/$mode.out")"; exit 1; }
done

# ---- 1: JSON ----
group "flow L2-L4 fields: JSON records carry the capture's values"
j() { jq -c "select($2) | $3" "$T/$1.json"; }
tcpsel='.proto == 6'
got=$(j bi "$tcpsel" '[.src_mac,.dst_mac,.ttl_min,.ttl_max,.tos,.ip_flags,.tcp_win,.tcp_mss,.tcp_syn_size,.rev_ttl_min,.rev_ttl_max,.rev_tos,.rev_tcp_win,.rev_tcp_mss]')
want='["02:00:00:00:00:0a","02:00:00:00:00:0b",60,64,40,64,64240,1460,60,50,55,0,65160,1380]'
[ "$got" = "$want" ]
check $? "TCP biflow: $got, want $want"
# tcpOptions: kinds 1, 2, 3, 4, 8 are bits 62, 61, 60, 59, 55 (kind k: bit 63 - k)
opts=$(((1 << 62) | (1 << 61) | (1 << 60) | (1 << 59) | (1 << 55)))
# (64-bit values: read as text, jq's numbers are doubles)
got=$(grep '"proto":6,' "$T/bi.json" | grep -o '"\(rev_\)\?tcp_options":[0-9]*' | tr '\n' ' ')
[ "$got" = "\"tcp_options\":$opts \"rev_tcp_options\":$opts " ]
check $? "TCP options: $got, want $opts both ways"
got=$(j uni "$tcpsel and .sport == 443" '[.src_mac,.ttl_min,.ttl_max,.tcp_win,.tcp_mss,.tcp_syn_size,(.rev_ttl_min // "none")]')
want='["02:00:00:00:00:0b",50,55,65160,1380,0,"none"]'
[ "$got" = "$want" ]
check $? "TCP uniflow reverse record: $got, want $want"
got=$(j bi '.src == "198.18.1.1"' '[.mpls_label_1,.mpls_label_2,.rev_mpls_label_1,(.rev_mpls_label_2 // "none"),.ttl_min,.rev_ttl_min,(.tcp_options // "none")]')
want='[272,305,305,"none",64,61,"none"]'
[ "$got" = "$want" ]
check $? "MPLS: $got, want $want"
got=$(j bi '.src == "198.18.9.1"' '[.tunnel_type,.tunnel_id,.vxlan_id,.outer_src,.outer_dst,.bytes_outer,.rev_bytes_outer,.octets,.src_mac,.ttl_min]')
# outer IP: 20 + UDP 8 + VXLAN 8 + Ethernet 14 + inner 20 + ICMP 8 + 28 = 106; inner 56
want='["vxlan",123,123,"192.0.2.1","192.0.2.2",212,106,112,"02:00:00:00:00:0c",33]'
[ "$got" = "$want" ]
check $? "VXLAN: $got, want $want"
got=$(j bi '.ip_version == 6' '[.tos,.ttl_min,.ttl_max,.ip_flags]')
[ "$got" = "[184,33,40,0]" ]
check $? "IPv6: $got, want [184,33,40,0]"
end_group

# ---- 2: tshark ----
# The IPFIX file's messages, each in a UDP datagram to port 4739.
wrap() {
	"$PY" - "$1" "$2" <<'EOF'
import struct, sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
b = open(sys.argv[1], "rb").read()
out, o = [], 0
while o + 16 <= len(b):
    n = struct.unpack(">H", b[o + 2:o + 4])[0]
    out.append(Ether() / IP(src="127.0.0.1", dst="127.0.0.1") / UDP(sport=40000, dport=4739) / Raw(b[o:o + n]))
    o += n
wrpcap(sys.argv[2], out)
EOF
}
group "flow L2-L4 fields: tshark decodes every template and record, with the capture's values"
if ! command -v tshark >/dev/null; then
	check 1 "tshark not installed (scripts/deps.sh installs it)"
else
	for mode in bi uni; do
		wrap "$T/$mode.ipfix" "$T/$mode.ipfix.pcap"
		check $? "$mode: could not wrap the IPFIX file"
		tshark -r "$T/$mode.ipfix.pcap" -d udp.port==4739,cflow -V >"$T/$mode.txt" 2>&1
		check $? "$mode: tshark could not read the capture"
		! grep -qi 'malformed\|no template\|template not found\|Expert Info (Error\|Expert Info (Warn' "$T/$mode.txt"
		check $? "$mode: tshark: $(grep -i -m3 'malformed\|no template\|template not found\|Expert Info' "$T/$mode.txt" | tr '\n' ' ')"
		recs=$(wc -l <"$T/$mode.json")
		got=$(grep -c '^ *Flow [0-9][0-9]*$' "$T/$mode.txt")
		# and one statistics record at the end
		[ "$recs" -gt 0 ] && [ "$got" = $((recs + 1)) ]
		check $? "$mode: tshark decoded $got data records, want $((recs + 1))"
	done
	# each data record of the biflow export on one line (tshark -V's lines joined by '|')
	awk '/^ *Flow [0-9]+$/ { n++ } n { sub(/^ +/, ""); a[n] = a[n] "|" $0 }
		END { for (i = 1; i <= n; i++) print a[i] }' "$T/bi.txt" >"$T/bi.flows"
	# has SRC PATTERN...: the record from SRC has every fixed string PATTERN, in order
	has() {
		local r p
		r=$(grep -F "|SrcAddr: $1|" "$T/bi.flows")
		shift
		[ -n "$r" ] || return 1
		for p in "$@"; do
			[[ "$r" == *"$p"* ]] || return 1
			r=${r#*"${p%|}"} # the next pattern may begin with that '|'
		done
	}
	hex=$(printf '%016x' "$opts")
	# reverse elements first (RFC 5103; see f_rev in ipfix.c), then the forward ones
	has 198.18.0.1 "|MinTTL: 50 (Reverse" "|MaxTTL: 55 (Reverse" "|IP ToS: 0x00 (Reverse" \
		"|TCP OptionMap: $hex (Reverse" "|TCP Windows Size: 65160 (Reverse" \
		"Type 901: Value (hex bytes): 00 00 05 64|" "|SrcPort: 40000|" \
		"|Source Mac Address: 02:00:00:00:00:0a" "|Destination Mac Address: 02:00:00:00:00:0b" \
		"|MinTTL: 60|" "|MaxTTL: 64|" "|IP ToS: 0x28|" "|IP Fragment Flags: 0x40|" \
		"|TCP OptionMap: $hex|" "|TCP Windows Size: 64240|" \
		"Type 900: Value (hex bytes): 00 00 05 b4|" "Type 902: Value (hex bytes): 00 3c|"
	check $? "TCP record: $(grep -F '|SrcAddr: 198.18.0.1|' "$T/bi.flows" | tr '|' '\n' | grep -i 'ttl\|tos\|option\|window\|mac\|type 90' | tr '\n' ';')"
	has 198.18.1.1 "|MPLS-Label1: 305 exp-bits: 0 bottom-of-stack (Reverse" \
		"|MPLS-Label2: 0 exp-bits: 0  (Reverse" "|MinTTL: 64|" "|MPLS-Label1: 272 exp-bits: 0 |" \
		"|MPLS-Label2: 305 exp-bits: 0 bottom-of-stack|"
	check $? "MPLS record: $(grep -F '|SrcAddr: 198.18.1.1|' "$T/bi.flows" | tr '|' '\n' | grep 'MPLS-Label\|TTL' | tr '\n' ';')"
	has 198.18.9.1 "|MinTTL: 33|" "|Layer2 Segment Id: 72057594037928059|"
	check $? "VXLAN record: layer2SegmentId 0x01 << 56 | 123: $(grep -F '|SrcAddr: 198.18.9.1|' "$T/bi.flows" | tr '|' '\n' | grep 'Segment' | tr '\n' ';')"
	has 2001:db8::1 "|IP ToS: 0xb8|"
	check $? "IPv6 record: traffic class 0xb8"
fi
end_group

# ---- 2b: a strict collector ----
group "flow L2-L4 fields: a strict collector reads the export (templates sent when first needed)"
B=${BUILD:-build}
case "$B" in /*) ;; *) B="$ROOT/$B" ;; esac
LIS=$B/tools/ipfix_listen
if [ ! -x "$LIS" ]; then
	check 1 "$LIS not built"
else
	for mode in bi uni; do
		"$LIS" --file "$T/$mode.ipfix" --out "$T/$mode.lines" >"$T/$mode.sum" 2>&1
		check $? "$mode: the collector saw errors: $(cat "$T/$mode.sum")"
		# the collector's lines are the 15 columns of flow_lib.bash's, without the tunnel
		# columns FLOW_JQ adds to tunnelled records (checked through JSON and tshark above)
		# every record under a template sent before it; the variants beyond the plain four
		# (MPLS depth 2, VXLAN) in messages of their own
		[ "$(sed -n 's/.* records=\([0-9]*\).*/\1/p' "$T/$mode.sum")" = "$(wc -l <"$T/$mode.json")" ] &&
			[ "$(sed -n 's/.* templates=\([0-9]*\).*/\1/p' "$T/$mode.sum")" -ge 7 ]
		check $? "$mode: $(cat "$T/$mode.sum"); want $(wc -l <"$T/$mode.json") records, 7 templates or more"
		sed -E 's/"(first_ns|last_ns|rev_first_ns|rev_last_ns)":([0-9]+)[0-9]{6}([,}])/"\1":\2\3/g' \
			"$T/$mode.json" | jq -r "$FLOW_JQ" | cut -d, -f1-15 | LC_ALL=C sort >"$T/$mode.want"
		awk -F, -v OFS=, '{ $13 = substr($13, 1, length($13) - 6); $14 = substr($14, 1, length($14) - 6); print }' \
			"$T/$mode.lines" | LC_ALL=C sort | cmp -s - "$T/$mode.want"
		check $? "$mode: the collector's records differ from the JSON ones"
	done
fi
end_group

# ---- 3: nfcapd ----
group "flow L2-L4 fields: nfdump shows the MACs and MPLS labels"
if ! command -v nfcapd >/dev/null || ! command -v nfdump >/dev/null; then
	check 1 "nfcapd, nfdump not installed (scripts/deps.sh installs nfdump)"
else
	for mode in bi uni; do
		d=$T/nf-$mode
		if ! nfcapd_start "$d" "$d.log" 8000000; then
			check 1 "$mode: nfcapd did not start: $(tail -2 "$d.log")"
			continue
		fi
		PIDS+=("$NF_PID")
		opt=()
		[ $mode = uni ] && opt=(--uniflow)
		"$S" flow --pcap "$T/x.pcap" "${opt[@]}" --quiet --collector "udp://127.0.0.1:$NF_PORT" \
			>"$d.out" 2>&1
		check $? "$mode: secho flow failed: $(tail -2 "$d.out")"
		nfcapd_stop
		nfdump -R "$d" -q -N -o 'fmt:%sa,%ismc,%idmc,%mpls1,%mpls2' | tr -d ' ' | sort >"$d.got"
		grep -q '^198.18.0.1,02:00:00:00:00:0a,02:00:00:00:00:0b,' "$d.got"
		check $? "$mode: TCP flow's MACs: $(grep '^198.18.0.1,' "$d.got")"
		grep -q '^198.18.1.1,02:00:00:00:00:0a,02:00:00:00:00:0b,272-0-0,305-0-1' "$d.got"
		check $? "$mode: MPLS labels: $(grep '^198.18.1.1,' "$d.got")"
		if [ $mode = uni ]; then
			grep -q '^198.18.5.5,02:00:00:00:00:0b,02:00:00:00:00:0a,305-0-1' "$d.got"
			check $? "uni: the reply's record has its own MACs and label: $(grep '^198.18.5.5,' "$d.got")"
		fi
	done
fi
end_group
