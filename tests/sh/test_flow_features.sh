#!/usr/bin/env bash
# tests/sh/test_flow_features.sh - `secho flow --features` end to end: real clients and
# servers on loopback (dig against dnsmasq, curl against a Python http.server, openssl
# s_client against s_server with a certificate this test makes), captured on lo by dumpcap,
# then metered by `secho flow --pcap CAP --features dns,http,tls,pstats --json`, with one
# and two workers, biflows and uniflows. Expected: the values the test configured (query
# name and answer, Host and User-Agent, SNI), ppi lists on the flows; without --features
# the records are those of the run with them less the feature members; bad --features
# values refused with exit 2. Then `--features all` into an IPFIX file (ipfixprobe's
# elements), its messages wrapped in UDP datagrams for tshark: every template and record
# decodes, no malformed data, the SNI, Host and query name and the TLS flow's lists equal the
# JSON's, every basicList well formed. Every wait bounded; servers, the capture and files
# go on any exit (trap).
#
#   dig  --(UDP 127.x.y.z:53)-->  dnsmasq    (the dns set reads port 53 only: a random
#                                            loopback address keeps it apart)
#   curl --(TCP 127.0.0.1:HPORT)-->  python3 http.server      (dumpcap on lo)
#   s_client --(TCP 127.0.0.1:TPORT)--> openssl s_server
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
SECHO=$BUILD/secho
PY=/usr/bin/python3
T=$(mktemp -d /tmp/secho-flow-features.XXXXXX)
DM_PID=
HS_PID=
TS_PID=
. "$ROOT/tests/sh/check_lib.bash"
. "$ROOT/tests/sh/feat_lib.bash"
cleanup() {
	cap_stop
	for p in $DM_PID $HS_PID $TS_PID; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

NAME="secho flow --features: dns, http, tls, pstats on loopback traffic"
need_tools "$NAME" dnsmasq dig curl openssl dumpcap mergecap jq "$PY" || exit 1
[ -x "$SECHO" ] || { echo "FAIL $NAME: $SECHO not built"; exit 1; }

BASE=$((20000 + RANDOM % 20000))
HPORT=$((BASE + 1)) TPORT=$((BASE + 2))
# the dns set reads flows with port 53 at either end (secho_feat_dns_wants): dnsmasq on
# port 53 of an address of 127/8 of this run's own, which needs root
DPORT=53 DADDR=127.83.$((1 + RANDOM % 250)).$((1 + RANDOM % 250))
if [ "$(id -u)" != 0 ]; then
	echo "UNAVAILABLE $NAME: dnsmasq on port 53 needs root"
	exit 0
fi

# the servers
cat >"$T/dnsmasq.conf" <<CONF
no-resolv
no-hosts
port=$DPORT
listen-address=$DADDR
bind-interfaces
address=/q.features.secho.test/198.18.0.21
local=/secho.test/
CONF
dnsmasq --no-daemon --conf-file="$T/dnsmasq.conf" --pid-file= >"$T/dnsmasq.log" 2>&1 &
DM_PID=$!
cat >"$T/server.py" <<'PYEOF'
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"secho\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PYEOF
"$PY" "$T/server.py" "$HPORT" >"$T/http.log" 2>&1 &
HS_PID=$!
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" -days 2 \
	-subj "/CN=srv.features.secho.test" >"$T/req.log" 2>&1 ||
	{ cat "$T/req.log"; echo "FAIL $NAME: openssl req"; exit 1; }
openssl s_server -accept "127.0.0.1:$TPORT" -cert "$T/cert.pem" -key "$T/key.pem" -quiet \
	</dev/null >"$T/tls.log" 2>&1 &
TS_PID=$!

ready=1
for _ in $(seq 1 50); do
	dig -p "$DPORT" @"$DADDR" +time=1 +tries=1 +short q.features.secho.test A 2>/dev/null |
		grep -q 198.18.0.21 &&
		curl -s -m 2 -o /dev/null "http://127.0.0.1:$HPORT/" &&
		timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$TPORT" 2>/dev/null && { ready=0; break; }
	sleep 0.1
done
if [ "$ready" -ne 0 ]; then
	cat "$T/dnsmasq.log" "$T/http.log" "$T/tls.log"
	echo "FAIL $NAME: the servers did not answer"
	exit 1
fi

CAP=$T/cap.pcapng
cap_start "$CAP" "(host $DADDR and port $DPORT) or port $HPORT or port $TPORT" ||
	{ echo "FAIL $NAME: dumpcap did not start"; exit 1; }
dig -p "$DPORT" @"$DADDR" +time=2 +tries=1 q.features.secho.test A >"$T/dig.out" 2>&1
curl -s -m 5 -o /dev/null -A "secho-features/1.0" "http://127.0.0.1:$HPORT/feat.html"
echo Q | timeout 10 openssl s_client -connect "127.0.0.1:$TPORT" \
	-servername tls.features.secho.test -tls1_2 >"$T/s_client.log" 2>&1
cap_stop

group "$NAME"
FEAT=dns,http,tls,pstats
run() { # out-file options...: the JSON records, or a failure
	local out=$1
	shift
	"$SECHO" flow --pcap "$CAP" --quiet --flows 1024 --json "$out" "$@" >"$out.log" 2>&1
}
# the feature members (what --features adds) taken out of each record, records sorted
strip() {
	jq -c 'with_entries(select(.key | test("^(rev_)?(dns_|http_|tls_|ppi_)") | not))' "$1" |
		LC_ALL=C sort
}
for mode in bi uni; do
	uni=()
	[ $mode = uni ] && uni=(--uniflow)
	for w in 1 2; do
		tag="$mode/w$w"
		run "$T/on.$mode.$w.json" --workers $w "${uni[@]}" --features $FEAT
		check $? "$tag: secho flow --features $FEAT: $(cat "$T/on.$mode.$w.json.log")"
		run "$T/off.$mode.$w.json" --workers $w "${uni[@]}"
		check $? "$tag: secho flow without --features: $(cat "$T/off.$mode.$w.json.log")"
		J=$T/on.$mode.$w.json
		# dns: the forward record is the query's (the client's packet first)
		jq -c --argjson p "$DPORT" 'select(.dport == $p and .proto == 17)
			| select(.dns_req_query_name == "q.features.secho.test")' "$J" | grep -q .
		check $? "$tag: DNS query name on the flow to :$DPORT"
		if [ $mode = bi ]; then
			jq -c --argjson p "$DPORT" 'select(.dport == $p and .proto == 17)
				| select(.dns_rdata | tostring | contains("198.18.0.21"))' "$J" | grep -q .
			check $? "$tag: DNS answer 198.18.0.21 on the biflow"
		fi
		jq -c --argjson p "$HPORT" --arg h "127.0.0.1:$HPORT" 'select(.dport == $p)
			| select(.http_host == $h and .http_agent == "secho-features/1.0"
			         and .http_url == "/feat.html")' "$J" | grep -q .
		check $? "$tag: HTTP Host, User-Agent and URL on the flow to :$HPORT"
		jq -c --argjson p "$TPORT" 'select(.dport == $p)
			| select(.tls_sni == "tls.features.secho.test")' "$J" | grep -q .
		check $? "$tag: TLS SNI on the flow to :$TPORT"
		jq -c --argjson p "$TPORT" 'select(.dport == $p)
			| select((.ppi_pkt_lengths | length) > 0)' "$J" | grep -q .
		check $? "$tag: pstats packet lengths on the TLS flow"
		# off: no feature member at all, and the same records as with them less theirs
		n=$(grep -c -E '"(dns|http|tls|ppi)_' "$T/off.$mode.$w.json")
		check "$([ "$n" -eq 0 ] && echo 0 || echo 1)" "$tag: $n records with feature members without --features"
		cmp -s <(strip "$J") <(strip "$T/off.$mode.$w.json")
		check $? "$tag: records without --features equal those with it less the feature members"
		[ "$(wc -l <"$J")" -ge 3 ]
		check $? "$tag: at least 3 records, got $(wc -l <"$J")"
	done
done

# bad values: exit 2, naming the valid sets
for bad in "" dns,nope tls, all,x; do
	"$SECHO" flow --pcap "$CAP" --json /dev/null --features "$bad" >"$T/bad.out" 2>&1
	rc=$?
	check "$([ $rc -eq 2 ] && grep -q "tls, quic, dns, http, wg, pstats, phists, bstats" "$T/bad.out" && echo 0 || echo 1)" \
		"--features '$bad': exit $rc: $(cat "$T/bad.out")"
done
# --flows x the slot: over the table's bound, and over this machine's memory, refused
for fl in 1073741824 20000000; do
	"$SECHO" flow --pcap "$CAP" --quiet --json /dev/null --flows $fl --features all >"$T/big.out" 2>&1
	rc=$?
	check "$([ $rc -eq 1 ] && grep -q "bytes per flow" "$T/big.out" && echo 0 || echo 1)" \
		"--flows $fl --features all: exit $rc: $(cat "$T/big.out")"
done
# all is accepted; --help lists the sets
run "$T/all.json" --features all
check $? "--features all: $(cat "$T/all.json.log")"
# pstats:zeroes: a TCP connection's first packet (its SYN, no payload) is in its lists,
# as many entries as packets up to 30; without it the SYN is not
run "$T/z.json" --features pstats:zeroes
check $? "--features pstats:zeroes: $(cat "$T/z.json.log")"
nz=$(jq -c 'select(.proto == 6 and .tcp_flags % 4 >= 2)' "$T/z.json" | wc -l)
zbad=$(jq -c 'select(.proto == 6 and .tcp_flags % 4 >= 2) |
	select((.ppi_pkt_flags[0] % 4 < 2) or (.ppi_pkt_lengths[0] != 0) or
	       ((.ppi_pkt_lengths | length) != ([.packets + (.rev_packets // 0), 30] | min)))' \
	"$T/z.json" | head -3)
check "$([ "$nz" -gt 0 ] && [ -z "$zbad" ] && echo 0 || echo 1)" \
	"pstats:zeroes: $nz TCP records with a SYN, each from its SYN on: $zbad"
dbad=$(jq -c 'select(.proto == 6 and .ppi_pkt_lengths) | select(any(.ppi_pkt_lengths[]; . == 0))' \
	"$T/all.json" | head -3)
check "$([ -z "$dbad" ] && echo 0 || echo 1)" "pstats without :zeroes: no empty packet: $dbad"
"$SECHO" flow --help >"$T/help" 2>&1
for s in tls quic dns http wg pstats phists bstats; do
	grep -qE "^  $s +[0-9]+ B " "$T/help"
	check $? "--help lists the set $s with its bytes per flow"
done
end_group

# ---- IPFIX: the sets as ipfixprobe's elements ----
group "secho flow --features all over IPFIX: tshark decodes every template and record"
# The loopback capture, with generated application traffic (`flow gen --app all`: QUIC
# Initials among them) and one WireGuard session written by scapy beside it, so that every
# set's template goes out (mergecap: one pcapng file)
"$SECHO" flow gen --profile light --packets 3000 --seed 21 --app all -o "$T/gen.pcap" \
	--quiet >"$T/gen.log" 2>&1
check $? "flow gen --app all: $(cat "$T/gen.log")"
"$PY" - "$T/wg.pcap" <<'PYEOF2' >"$T/wg.log" 2>&1
import sys
from scapy.all import Ether, IP, UDP, wrpcap
from scapy.contrib.wireguard import (Wireguard, WireguardInitiation, WireguardResponse,
                                     WireguardTransport)
pk = []
for i, (a, b, sp, dp, m) in enumerate((
        ("198.18.9.1", "198.18.9.2", 41000, 51820, WireguardInitiation(sender_index=0x0a0b0c0d)),
        ("198.18.9.2", "198.18.9.1", 51820, 41000,
         WireguardResponse(sender_index=0x01020304, receiver_index=0x0a0b0c0d)),
        ("198.18.9.1", "198.18.9.2", 41000, 51820,
         WireguardTransport(receiver_index=0x01020304, counter=0,
                            encrypted_encapsulated_packet=b"\x11" * 32)))):
    p = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src=a, dst=b) / \
        UDP(sport=sp, dport=dp) / Wireguard() / m
    p.time = 1767225600 + i * 0.001
    pk.append(p)
wrpcap(sys.argv[1], pk)
PYEOF2
check $? "scapy could not write the WireGuard capture: $(tail -2 "$T/wg.log")"
MIX=$T/mix.pcapng
mergecap -F pcapng -w "$MIX" "$CAP" "$T/gen.pcap" "$T/wg.pcap" >"$T/merge.log" 2>&1
check $? "mergecap: $(cat "$T/merge.log")"
"$SECHO" flow --pcap "$MIX" --quiet --flows 4096 --features all --json "$T/ix.json" \
	--collector "file:$T/x.ipfix" >"$T/ipfix.log" 2>&1
check $? "--features all with JSON and an IPFIX file: $(cat "$T/ipfix.log")"
n=$(grep -c "warning" "$T/ipfix.log")
check "$([ "$n" -eq 0 ] && echo 0 || echo 1)" "no warning with an IPFIX collector, got $n"
# The file's messages, each in a UDP datagram to port 4739 (Ethernet, IPv4 with its
# checksum, UDP without one), as a classic pcap file: python3's struct only.
wrap() {
	"$PY" - "$1" "$2" <<'PYEOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
out, o = [struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)], 0
def csum(h):
    s = sum(struct.unpack("!10H", h))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
while o + 16 <= len(b):
    n = struct.unpack(">H", b[o + 2:o + 4])[0]
    if n < 16 or o + n > len(b):
        sys.exit("a message's length runs past the file at %d" % o)
    udp = struct.pack("!HHHH", 40000, 4739, 8 + n, 0) + b[o:o + n]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     bytes([127, 0, 0, 1]), bytes([127, 0, 0, 1]))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    fr = bytes([2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 8, 0]) + ip + udp
    out.append(struct.pack("<IIII", 0, 0, len(fr), len(fr)) + fr)
    o += n
if o != len(b):
    sys.exit("%d bytes after the last message" % (len(b) - o))
open(sys.argv[2], "wb").write(b"".join(out))
PYEOF
}
# The hex of string member $1 of the JSON record of the flow to port $2.
json_hex() { # member port
	jq -r --argjson p "$2" --arg m "$1" 'select(.dport == $p) | .[$m] // empty' "$T/ix.json" |
		head -1 | tr -d '\n' | od -An -tx1 | tr -d ' \n'
}
if ! command -v tshark >/dev/null; then
	check 1 "tshark not installed (scripts/deps.sh installs it)"
else
	wrap "$T/x.ipfix" "$T/x.pcap"
	check $? "could not wrap the IPFIX file"
	# tshark takes templates of at most 60 fields unless told (a biflow's TCP template with
	# every set has 72)
	TSO=(-o cflow.max_template_fields:0)
	tshark "${TSO[@]}" -r "$T/x.pcap" -d udp.port==4739,cflow -V >"$T/x.txt" 2>&1
	check $? "tshark could not read the wrapped export"
	! grep -qi 'malformed\|no template\|template not found\|Expert Info (Error\|Expert Info (Warn' "$T/x.txt"
	check $? "tshark: $(grep -i -m3 'malformed\|no template\|template not found\|Expert Info' "$T/x.txt" | tr '\n' ' ')"
	recs=$(wc -l <"$T/ix.json")
	got=$(grep -c '^ *Flow [0-9][0-9]*$' "$T/x.txt")
	[ "$recs" -gt 0 ] && [ "$got" = $((recs + 1)) ] # and the statistics record
	check $? "tshark decoded $got data records, the JSON has $recs (+1 statistics record)"
	# templates of records with features (1024 and up): at least one, each used by data
	tids=$(grep -oE '^ *Template Id: 1[0-9]{3}$' "$T/x.txt" | grep -oE '[0-9]+' | sort -u)
	[ -n "$tids" ]
	check $? "no template of ID 1024 and up"
	for t in $tids; do
		grep -qE "^ *FlowSet Id: \(Data\) \($t\)$" "$T/x.txt"
		check $? "template $t: no data set uses it"
	done
	# The values, from tshark's PDML (whole values; -V cuts long ones): tshark 4.0 shows an
	# element of an enterprise it has no definitions for as bytes, and a basicList as the
	# bytes after its length prefix. Strings: the SNI, HTTP Host and DNS query name equal the
	# JSON record's; lists: every basicList is semantic 3, an 8057 member of ipfixprobe's
	# with the enterprise bit, a whole number of entries; the TLS flow's packet lengths and
	# extension types equal the JSON's.
	tshark "${TSO[@]}" -r "$T/x.pcap" -d udp.port==4739,cflow -T pdml >"$T/x.pdml" 2>/dev/null
	check $? "tshark -T pdml"
	"$PY" - "$T/x.pdml" "$T/ix.json" "$TPORT" "$HPORT" "$DPORT" <<'PYEOF'
import json, re, sys
pdml, js, tport, hport, dport = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
vals = {}  # (org, type) -> [hex values]
for m in re.finditer(r'name="cflow.enterprise_private_entry" showname="Enterprise Private '
                     r'entry: \((.*?)\) Type (\d+): [^"]*"[^>]*value="([0-9a-f]*)"',
                     open(pdml).read()):
    vals.setdefault((m.group(1), int(m.group(2))), []).append(m.group(3))
recs = [json.loads(l) for l in open(js)]
bad = 0
def fail(msg):
    global bad
    bad += 1
    if bad <= 8:
        print("FAIL-DETAIL " + msg)
def rec(port):
    r = [x for x in recs if x.get("dport") == port]
    return r[0] if r else {}
for member, port, org, t in (("tls_sni", tport, "CESNET", 808),
                             ("http_host", hport, "Flowmon Networks a.s.", 1),
                             ("dns_req_query_name", dport, "CESNET", 2),
                             ("tls_issuer_cn", tport, "Flowmon Networks a.s.", 349),
                             ("tls_subject_cn", tport, "Flowmon Networks a.s.", 350)):
    want = rec(port).get(member, "").encode().hex()
    if not want or want not in vals.get((org, t), []):
        fail("%s: JSON %r not among %s/%d values %s" % (member, want, org, t,
                                                      vals.get((org, t))))
# every set's template went out: QUIC (the generated Initials) and WireGuard (scapy's) too
for what, key in (("quic: QUIC_SNI", ("CESNET", 890)), ("wg: WG_SRC_PEER", ("CESNET", 1101)),
                  ("tls: tlsCipherSuite", ("Flowmon Networks a.s.", 336))):
    if not vals.get(key):
        fail("no value of %s (%s/%d) decoded" % (what, key[0], key[1]))
ids = set(range(1013, 1017)) | set(range(1050, 1058)) | set(range(1060, 1064)) | \
      {802, 803, 884, 885}
lists = {}
for v in vals.get(("(null)", 291), []):
    b = bytes.fromhex(v)
    fid, elen = int.from_bytes(b[1:3], "big"), int.from_bytes(b[3:5], "big")
    if len(b) < 9 or b[0] != 3 or not fid & 0x8000 or (fid & 0x7fff) not in ids or \
       b[5:9] != (8057).to_bytes(4, "big") or elen == 0 or (len(b) - 9) % elen:
        fail("basicList %s: not semantic 3, an 8057 member of ipfixprobe's, whole entries" % v)
        continue
    lists.setdefault(fid & 0x7fff, []).append(
        [int.from_bytes(b[i:i + elen], "big") for i in range(9, len(b), elen)])
if not lists:
    fail("no basicList")
t = rec(tport)
for member, fid in (("ppi_pkt_lengths", 1013), ("tls_ext_type", 802)):
    if not t.get(member) or t[member] not in lists.get(fid, []):
        fail("%s: JSON %s not among the 8057/%d lists %s" % (member, t.get(member), fid,
                                                            lists.get(fid)))
print("checked %d string values and %d basicLists" % (sum(map(len, vals.values())),
                                                     sum(map(len, lists.values()))))
sys.exit(1 if bad else 0)
PYEOF
	check $? "the values tshark reads: see FAIL-DETAIL above"
fi
# libfixbuf (tests/tools/ipfix_fixbuf) decodes every record, lists included, on its own: each
# record's strings and lists equal the JSON line's (the same records, in the same order)
if [ ! -x "$BUILD/tools/ipfix_fixbuf" ]; then
	check 1 "$BUILD/tools/ipfix_fixbuf not built"
else
	"$BUILD/tools/ipfix_fixbuf" "$T/x.ipfix" >"$T/fb.txt" 2>"$T/fb.err"
	check $? "libfixbuf could not read the export: $(cat "$T/fb.err")"
	"$PY" - "$T/fb.txt" "$T/ix.json" <<'PYEOF'
import json, re, sys
fb = [dict(re.findall(r" (\d+/\d+)=(\S*)", l)) for l in open(sys.argv[1])]
js = [json.loads(l) for l in open(sys.argv[2])]
bad = 0
def fail(msg):
    global bad
    bad += 1
    if bad <= 8:
        print("FAIL-DETAIL " + msg)
if len(fb) != len(js):
    fail("libfixbuf read %d records, the JSON has %d" % (len(fb), len(js)))
strings = {"tls_sni": "8057/808", "tls_ja4": "8057/809", "tls_alpn": "39499/337",
           "http_host": "39499/1", "http_url": "39499/2", "http_agent": "39499/20",
           "http_method": "8057/200", "http_server": "8057/201",
           "http_content_type": "39499/10", "dns_req_query_name": "8057/2",
           "dns_rdata": "8057/7"}
ms = lambda v: [x // 1000000 for x in v]
u8 = lambda v: [x & 0xff for x in v]
same = lambda v: v
lists = {"ppi_pkt_lengths": ("8057/1013", same), "ppi_pkt_times": ("8057/1014", ms),
         "ppi_pkt_flags": ("8057/1015", same), "ppi_pkt_directions": ("8057/1016", u8),
         "tls_ext_type": ("8057/802", same), "tls_ext_len": ("8057/803", same),
         "s_phists_sizes": ("8057/1060", same), "s_phists_ipt": ("8057/1061", same),
         "d_phists_sizes": ("8057/1062", same), "d_phists_ipt": ("8057/1063", same)}
for d, base in (("sbi", 1050), ("dbi", 1054)):
    for k, name in enumerate(("packets", "bytes", "time_start", "time_stop")):
        lists["%s_brst_%s" % (d, name)] = ("8057/%d" % (base + k), ms if k > 1 else same)
n = 0
for i, (f, j) in enumerate(zip(fb, js)):
    for m, e in strings.items():
        want = j[m].encode().hex() if m in j else None
        if want is not None and f.get(e) != want:
            fail("record %d %s: JSON %s, libfixbuf %s=%s" % (i, m, want, e, f.get(e)))
        n += want is not None
    if "tls_ja3" in j and f.get("39499/357") != j["tls_ja3"]:
        fail("record %d tls_ja3: JSON %s, libfixbuf %s" % (i, j["tls_ja3"], f.get("39499/357")))
    for m, (e, conv) in lists.items():
        got = f.get(e)
        got = None if got is None else [int(x) for x in got.strip("[]").split(",") if x]
        if m in j:
            n += 1
            if got != conv(j[m]):
                fail("record %d %s: JSON %s, libfixbuf %s=%s" % (i, m, conv(j[m]), e, got))
        elif got not in (None, [], [0] * 8):  # JSON leaves empty lists out, IPFIX not
            fail("record %d %s: not in JSON, libfixbuf %s=%s" % (i, m, e, got))
# numbers: tshark's enterprise elements are bytes, libfixbuf's are numbers (signed64 printed
# unsigned); the public key algorithm: the JSON's dotted OID, as libcrypto's NID
import ctypes
crypto = ctypes.CDLL("libcrypto.so.3")
crypto.OBJ_txt2nid.argtypes = [ctypes.c_char_p]
s64 = lambda v: v - (1 << 64) if v >= 1 << 63 else v
nums = {"tls_client_version": "39499/340", "tls_cipher_suite": "39499/336",
        "tls_validity_not_before": "39499/352", "tls_validity_not_after": "39499/353",
        "http_status_code": "39499/12", "dns_id": "8057/10", "dns_resp_rcode": "8057/1",
        "dns_flags": "39499/111",
        "dns_req_query_type": "8057/3", "quic_version": "8057/892",
        "quic_client_version": "8057/893", "wg_src_peer": "8057/1101",
        "wg_dst_peer": "8057/1102"}
seen = set()
for i, (f, j) in enumerate(zip(fb, js)):
    for m, e in nums.items():
        if m not in j:
            continue
        got = f.get(e)
        got = None if got is None else s64(int(got))
        if got != j[m]:
            fail("record %d %s: JSON %s, libfixbuf %s=%s" % (i, m, j[m], e, got))
        n += 1
        seen.add(m)
    for m, e in (("tls_issuer_cn", "39499/349"), ("tls_subject_cn", "39499/350")):
        if m in j and f.get(e) != j[m].encode().hex():
            fail("record %d %s: JSON %s, libfixbuf %s=%s" % (i, m, j[m], e, f.get(e)))
    if "tls_public_key_alg" in j:
        nid = crypto.OBJ_txt2nid(j["tls_public_key_alg"].encode())
        if nid <= 0 or f.get("39499/355") != str(nid):
            fail("record %d tls_public_key_alg %s: libcrypto's NID %d, libfixbuf 39499/355=%s"
                 % (i, j["tls_public_key_alg"], nid, f.get("39499/355")))
        n += 1
        seen.add("tls_public_key_alg")
for m in ("tls_cipher_suite", "tls_validity_not_before", "tls_public_key_alg", "dns_id",
          "dns_flags",
          "http_status_code", "quic_version", "wg_src_peer"):
    if m not in seen:
        fail("no record with %s to compare" % m)
print("libfixbuf: %d records, %d values equal to the JSON's" % (len(fb), n))
sys.exit(1 if bad or not n else 0)
PYEOF
	check $? "libfixbuf's values against the JSON: see FAIL-DETAIL above"
fi
end_group
[ "${g_failed:-0}" -eq 0 ]
