#!/usr/bin/env bash
# tests/sh/test_flow_gen_app.sh - `secho flow gen --app`: application payloads and the
# feature fields in the truth (docs/FLOW.md, "Application payloads").
#
# Checks (one PASS/FAIL/UNAVAILABLE line per group, see tests/unit/harness.h):
#   - usage: --app in --help; a bad --app exits 2 with one line and writes nothing;
#     without --app the truth has its usual header (no app columns);
#   - determinism: the same arguments give the same bytes;
#   - the captures against their truth recounted by tools/flow_truth_check;
#   - the meter against the truth: `secho flow --features tls,quic,dns,http --json`
#     (biflow, uniflow, 1 and 2 workers) on the conformance and light profiles (and light in
#     VXLAN, and a FlowTest profile) with --app all: every record's tls_/quic_/dns_/http_ members (JA3/JA4 left
#     out) equal the truth's "bi" (biflow) or "uni" (uniflow) object of its flow, every
#     flow is matched, each application is there, no record of a flow without port 53 has
#     dns_ members (the dns set reads port 53 only); the flow counters still equal the truth;
#   - tshark, independently: every TLS ClientHello decodes with the SNI the truth gives
#     its flow, every QUIC client Initial decrypts (tshark derives the RFC 9001 keys
#     itself) to a ClientHello with the truth's SNI, and the server's Initials decrypt too,
#     every DNS query and answer decodes with the truth's name and addresses, every HTTP
#     request and response decodes with the truth's Host, method, URL, User-Agent, status
#     and Server; every TLS flow's tls_ja3 (which the truth leaves out) equals tshark's
#     tls.handshake.ja3 of its ClientHello, tls_ja4 and quic_ja4 one computed from
#     tshark's fields (tests/sh/ja4_tshark.py); every TLS 1.2 server's certificate decodes
#     with the truth's issuer and subject CN, validity and key algorithm; no frame of the
#     capture is malformed for tshark.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
S=${SECHO_BIN:-$ROOT/$BUILD/secho}
CHECK=$ROOT/$BUILD/tools/flow_truth_check
T=$(mktemp -d /tmp/secho-genapp.XXXXXX)
trap 'rm -rf "$T"' EXIT

# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"
# shellcheck source=tests/sh/flow_lib.bash
. "$ROOT/tests/sh/flow_lib.bash"

for b in "$S" "$CHECK"; do
	if [ ! -x "$b" ]; then
		echo "FAIL flow gen --app: $b not built"
		exit 1
	fi
done
need_tools "flow gen --app" jq python3 tshark || exit 1

# ---- usage ----
group "flow gen --app: usage"
"$S" flow gen --help >"$T/out" 2>&1
grep -q -- '--app LIST' "$T/out"
check $? "--help names --app LIST"
for a in "" "tls,smtp" "tls," "," "ALL"; do
	"$S" flow gen --profile light --packets 100 --app "$a" -o "$T/x.pcap" >"$T/out" 2>"$T/err"
	r=$?
	[ $r -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -s "$T/out" ] &&
		! ls "$T"/x.pcap* >/dev/null 2>&1
	check $? "--app '$a': exit $r, $(head -1 "$T/err")"
done
"$S" flow gen -q --profile light --packets 300 -o "$T/plain.pcap"
head -1 "$T/plain.pcap.truth.csv" | grep -q ',tcp_flags$'
check $? "without --app the truth's header ends in tcp_flags: $(head -1 "$T/plain.pcap.truth.csv")"
end_group

# ---- determinism ----
group "flow gen --app: the same arguments, the same bytes"
"$S" flow gen -q --profile light --packets 2000 --seed 3 --app all -o "$T/a1.pcap" &&
	"$S" flow gen -q --profile light --packets 2000 --seed 3 --app all -o "$T/a2.pcap"
check $? "generation failed"
cmp -s "$T/a1.pcap" "$T/a2.pcap" && cmp -s "$T/a1.pcap.truth.csv" "$T/a2.pcap.truth.csv"
check $? "two runs differ"
"$S" flow gen -q --profile light --packets 2000 --seed 4 --app all -o "$T/a3.pcap"
! cmp -s "$T/a1.pcap" "$T/a3.pcap"
check $? "another seed gives the same capture"
end_group

# A FlowTest profile: TCP rows whose SYNs carry payload (the message goes there), a UDP row
# from port 53 (its client port moves), rows with addresses of their own.
cat >"$T/ft.csv" <<'EOF'
SRC_IP,DST_IP,START_TIME,END_TIME,L3_PROTO,L4_PROTO,SRC_PORT,DST_PORT,PACKETS,BYTES,PACKETS_REV,BYTES_REV
,,0,2000,4,6,445,51572,12,6316,12,4281
,,10,20,4,17,53,38176,1,84,1,68
,,20,90000,4,6,16386,443,28,10122,27,11019
,,30,9000,6,6,49154,59075,39,57849,9,1064
198.51.100.2,203.0.113.9,40,891,4,17,5060,5060,15,21013,7,5901
198.51.100.2,203.0.113.9,50,2000,4,17,5060,5060,3,300,0,0
198.51.100.3,203.0.113.9,60,2000,4,17,5061,80,3,3000,3,3000
,,70,2000,4,1,0,0,3,252,3,252
EOF

# The checker: records (JSON lines) against the truth's features column.
cat >"$T/cmp.py" <<'EOF'
import json, sys
truth, records, mode = sys.argv[1], sys.argv[2], sys.argv[3]
need = sys.argv[4].split(",") if len(sys.argv) > 4 else []  # applications that must be there
PREFIX = ("tls_", "quic_", "dns_", "rev_dns_", "http_")
SKIP = {"tls_ja3", "tls_ja4", "quic_ja4"}
lines = [l.rstrip("\n") for l in open(truth) if not l.startswith("#")]
cols = lines[0].split(",")
ia = cols.index("app")
flows = {}
apps = {}
for l in lines[1:]:
    p = l.split(",", ia + 1)
    key = (p[4], p[5], p[6], p[7], p[3], p[12])  # src dst sport dport proto first_ns
    flows[key] = (p[ia], json.loads(p[ia + 1]))
bad, seen, n, dns_elsewhere = [], set(), 0, 0
for r in map(json.loads, open(records)):
    got = {k: v for k, v in r.items() if k.startswith(PREFIX) and k not in SKIP}
    # docs/FLOW.md: the dns set reads flows with port 53 at either end only
    # (secho_feat_dns_wants): a record of other ports with dns members is wrong
    if 53 not in (r["sport"], r["dport"]):
        d = sorted(k for k in got if k.startswith(("dns_", "rev_dns_")))
        if d:
            dns_elsewhere += 1
            bad.append("dns members outside port 53: %s %s" % (d[:3], r))
    key = (r["src"], r["dst"], str(r["sport"]), str(r["dport"]), str(r["proto"]),
           str(r["first_ns"]))
    if key not in flows:
        bad.append("no truth line for %s" % (key,))
        continue
    app, f = flows[key]
    want = f.get("bi" if mode == "bi" else "uni")
    if want is None:
        bad.append("%s: the record of a reverse flow" % (key,))
        continue
    seen.add(key)
    n += 1
    if want:
        apps[app] = apps.get(app, 0) + 1
    if got != want:
        diff = sorted(set(got) ^ set(want)) or [k for k in want if got.get(k) != want[k]]
        bad.append("%s %s: %s: got %s want %s" % (app, key, diff[:3],
                   {k: got.get(k) for k in diff[:2]}, {k: want.get(k) for k in diff[:2]}))
expect = {k for k, (a, f) in flows.items() if mode != "bi" or "bi" in f}
for k in sorted(expect - seen)[:3]:
    bad.append("truth flow %s has no record" % (k,))
for a in need:
    if apps.get(a, 0) == 0:
        bad.append("no %s flow with features" % a)
print("%d records, %s; records with dns members outside port 53: %d" % (n, " ".join(
    "%s=%d" % kv for kv in sorted(apps.items())), dns_elsewhere))
for b in bad[:5]:
    print(b)
sys.exit(1 if bad else 0)
EOF

# ---- the meter against the truth ----
group "flow gen --app: secho flow --features equals the truth (biflow, uniflow, 2 workers)"
gen() { # name profile packets seed [args]
	local name=$1
	shift
	local n=(--packets "$2")
	[ "$2" = 0 ] && n=()
	"$S" flow gen -q --profile "$1" "${n[@]}" --seed "$3" --app all "${@:4}" -o "$T/$name.pcap"
	check $? "$name: generation failed"
	head -1 "$T/$name.pcap.truth.csv" | grep -q ',app,features$'
	check $? "$name: no app columns in the truth"
}
gen conf conformance 800 5
gen light light 2000 7
gen vx light 1500 8 --encap vxlan:77
gen ft "$T/ft.csv" 0 9
# the capture against its truth, recounted independently (tools/flow_truth_check: the
# grown packets, the ports moved, the contract of a flow)
for name in conf light ft; do
	"$CHECK" "$T/$name.pcap" "$T/$name.pcap.truth.csv" >"$T/chk.out" 2>&1
	check $? "$name: flow_truth_check: $(grep -v '^ok' "$T/chk.out" | head -3 | tr '\n' ' ')"
done
for name in conf light vx ft; do
	for m in bi uni w2 uni2; do
		case $m in
		bi) set -- ;;
		uni) set -- --uniflow ;;
		w2) set -- --workers 2 ;;
		uni2) set -- --uniflow --workers 2 ;;
		esac
		"$S" flow --pcap "$T/$name.pcap" --features tls,quic,dns,http --json "$T/r.json" \
			--quiet "$@" >/dev/null 2>"$T/err"
		check $? "$name $m: secho flow: $(head -1 "$T/err")"
		need=tls,quic,dns,http
		[ "$name" = ft ] && need=quic,http # its few rows: not every application
		python3 "$T/cmp.py" "$T/$name.pcap.truth.csv" "$T/r.json" \
			"$([ "${m#uni}" != "$m" ] && echo uni || echo bi)" "$need" >"$T/cmp.out" 2>&1
		check $? "$name $m: $(tr '\n' ' ' <"$T/cmp.out" | cut -c1-600)"
		record_lines "$T/r.json" >"$T/got.lines"
		cut -d, -f1-15 "$T/$name.pcap.truth.csv" | truth_lines /dev/stdin >"$T/want.lines"
		[ "$name" = vx ] && grep -v '^#' "$T/$name.pcap.truth.csv" | tail -n +2 |
			cut -d, -f1-18 | sed 's/,none,0,0$//' | LC_ALL=C sort >"$T/want.lines"
		cmp -s "$T/got.lines" "$T/want.lines"
		check $? "$name $m: counters differ from the truth: $(diff "$T/got.lines" "$T/want.lines" | head -3 | tr '\n' ' ')"
	done
done
# the checker itself: one SNI changed in the truth is found
"$S" flow --pcap "$T/light.pcap" --features tls,quic,dns,http --json "$T/r.json" --quiet \
	>/dev/null 2>&1
sed '0,/"tls_sni":"/{s/"tls_sni":"/"tls_sni":"x/g}' "$T/light.pcap.truth.csv" >"$T/bad.csv"
! cmp -s "$T/bad.csv" "$T/light.pcap.truth.csv" &&
	! python3 "$T/cmp.py" "$T/bad.csv" "$T/r.json" bi >/dev/null 2>&1
check $? "the checker takes a truth with one SNI changed"
end_group

# ---- tshark ----
group "flow gen --app: tshark decodes every message as the truth says"
# The truth's forward lines: client address and port -> the uni object.
cat >"$T/ts.py" <<'EOF'
import json, sys
truth, kind, tsv = sys.argv[1], sys.argv[2], sys.argv[3]
lines = [l.rstrip("\n") for l in open(truth) if not l.startswith("#")]
ia = lines[0].split(",").index("app")
fwd, rev = {}, {}
for l in lines[1:]:
    p = l.split(",", ia + 1)
    f = json.loads(p[ia + 1])
    if "bi" in f:
        fwd[(p[4], p[6])] = (p[ia], f)
    else:
        rev[(p[5], p[7])] = (p[ia], f)
want = {}
for k, (a, f) in fwd.items():
    bi = f["bi"]
    if kind == "tls" and "tls_sni" in f["uni"]:
        want[k] = [bi["tls_sni"]]
    elif kind == "quic" and "quic_sni" in f["uni"]:
        want[k] = [bi["quic_sni"]]
    elif kind == "quic_server" and "quic_scid" in bi:
        want[k] = ["0"]
    elif kind == "dnsq" and "dns_flags" in bi:
        want[k] = [bi["dns_req_query_name"], "0x%04x" % bi["dns_id"]]
    elif kind == "dnsr" and "rev_dns_flags" in bi:
        want[k] = [bi["dns_req_query_name"],
                   ",".join(rr["data"] for rr in bi["dns_resp_rr"])]
    elif kind == "httpq" and "http_method" in bi:
        want[k] = [bi["http_host"], bi["http_method"], bi["http_url"], bi["http_agent"]]
    elif kind == "httpr" and "http_status_code" in bi:
        want[k] = [str(bi["http_status_code"]), bi["http_server"], bi["http_content_type"]]
got, bad = {}, []
for l in open(tsv):
    c = l.rstrip("\n").split("\t")
    addr = c[0] or c[1]
    k = (addr, c[2])
    v = c[3:]
    if kind in ("dnsr",):
        v = [v[0], ",".join(x for x in (v[1] + "," + v[2]).split(",") if x)]
    if k in got and got[k] != v:
        bad.append("%s: two different messages %s %s" % (k, got[k], v))
    got[k] = v
for k, v in want.items():
    if got.get(k) != v:
        bad.append("%s: tshark %s, truth %s" % (k, got.get(k), v))
for k in got:
    if k not in want:
        bad.append("%s: tshark decodes %s, the truth has none" % (k, got[k]))
print("%s: %d messages" % (kind, len(want)))
for b in bad[:4]:
    print(b)
sys.exit(1 if bad or not want else 0)
EOF
ts() { # kind filter fields... (the client's address and port come first)
	local kind=$1 filter=$2
	shift 2
	local fl=()
	for f in "$@"; do fl+=(-e "$f"); done
	tshark -r "$T/light.pcap" -o tls.desegment_ssl_records:TRUE -Y "$filter" -T fields \
		-E occurrence=a -E aggregator=, "${fl[@]}" >"$T/ts.tsv" 2>"$T/ts.err"
	python3 "$T/ts.py" "$T/light.pcap.truth.csv" "$kind" "$T/ts.tsv" >"$T/ts.out" 2>&1
	check $? "$kind: $(tr '\n' ' ' <"$T/ts.out" | cut -c1-400) $(head -1 "$T/ts.err")"
}
ts tls 'tcp && tls.handshake.type == 1' ip.src ipv6.src tcp.srcport \
	tls.handshake.extensions_server_name
ts quic 'quic && tls.handshake.type == 1' ip.src ipv6.src udp.srcport \
	tls.handshake.extensions_server_name
ts quic_server 'quic && tls.handshake.type == 2' ip.dst ipv6.dst udp.dstport quic.long.packet_type
ts dnsq 'dns && dns.flags.response == 0' ip.src ipv6.src udp.srcport dns.qry.name dns.id
ts dnsr 'dns && dns.flags.response == 1' ip.dst ipv6.dst udp.dstport dns.qry.name dns.a dns.aaaa
ts httpq 'http.request' ip.src ipv6.src tcp.srcport http.host http.request.method \
	http.request.uri http.user_agent
ts httpr 'http.response' ip.dst ipv6.dst tcp.dstport http.response.code http.server \
	http.content_type
# The fingerprints, which the truth leaves out (the generator computes none): in light's
# biflow records (r.json, the run above) every flow's tls_ja3 equals tshark's
# tls.handshake.ja3 of its ClientHello, its tls_ja4 and quic_ja4 one computed from tshark's
# fields (tests/sh/ja4_tshark.py: FoxIO's rules, independent of secho's code; tshark opens
# the QUIC Initials itself), and every ClientHello has a record with one
cat >"$T/fp.py" <<'PYEOF'
import json, sys
tsv, records, member = sys.argv[1:4]
want = {}
for l in open(tsv):  # ip.src, ipv6.src, port, the value
    c = l.rstrip("\n").split("\t")
    want[(c[0] or c[1], c[2])] = c[3]
bad, n, seen = [], 0, set()
for l in open(records):
    r = json.loads(l)
    if member not in r:
        continue
    k = next((k for k in ((r["src"], str(r["sport"])), (r["dst"], str(r["dport"])))
              if k in want), None)
    if k is None:
        bad.append("%s:%s: a %s tshark has no ClientHello for" % (r["src"], r["sport"], member))
    elif want[k] != r[member]:
        bad.append("%s: meter %s, tshark %s" % (k, r[member], want[k]))
    else:
        n += 1
        seen.add(k)
bad += ["%s: tshark's %s, no record has it" % (k, v) for k, v in want.items() if k not in seen]
print("%d %s equal to tshark's, of %d ClientHellos" % (n, member, len(want)))
for b in bad[:4]:
    print(b)
sys.exit(1 if bad or not n else 0)
PYEOF
HF=(-e tls.handshake.version -e tls.handshake.ciphersuite -e tls.handshake.extension.type
	-e tls.handshake.sig_hash_alg -e tls.handshake.extensions.supported_version
	-e tls.handshake.extensions_alpn_str)
tshark -r "$T/light.pcap" -Y 'tcp && tls.handshake.type == 1' -T fields -e ip.src \
	-e ipv6.src -e tcp.srcport -e tls.handshake.ja3 >"$T/ja3.tsv" 2>"$T/fp.err"
tshark -r "$T/light.pcap" -Y 'tcp && tls.handshake.type == 1' -T fields -e ip.src \
	-e ipv6.src -e tcp.srcport "${HF[@]}" 2>>"$T/fp.err" |
	python3 "$ROOT/tests/sh/ja4_tshark.py" t 3 >"$T/ja4t.tsv" 2>>"$T/fp.err"
tshark -r "$T/light.pcap" -Y 'quic && tls.handshake.type == 1' -T fields -e ip.src \
	-e ipv6.src -e udp.srcport "${HF[@]}" 2>>"$T/fp.err" |
	python3 "$ROOT/tests/sh/ja4_tshark.py" q 3 >"$T/ja4q.tsv" 2>>"$T/fp.err"
for m in ja3:tls_ja3 ja4t:tls_ja4 ja4q:quic_ja4; do
	python3 "$T/fp.py" "$T/${m%%:*}.tsv" "$T/r.json" "${m#*:}" >"$T/fp.out" 2>&1
	check $? "${m#*:}: $(tr '\n' ' ' <"$T/fp.out" | cut -c1-400) $(head -1 "$T/fp.err")"
done
# the TLS 1.2 servers' certificates as tshark decodes them: the issuer's and subject's CN,
# the validity and the key's algorithm (the second algorithm identifier, the
# subjectPublicKeyInfo's) equal the truth's, certificate for certificate
tshark -r "$T/light.pcap" -Y 'tcp && tls.handshake.type == 11' -T fields -E occurrence=a \
	-E aggregator='|' -e ip.dst -e ipv6.dst -e tcp.dstport -e x509sat.uTF8String \
	-e x509af.utcTime -e x509af.algorithm.id >"$T/cert.tsv" 2>"$T/cert.err"
python3 - "$T/cert.tsv" "$T/light.pcap.truth.csv" >"$T/cert.out" 2>&1 <<'PYEOF'
import calendar, json, sys, time
got = {}
for l in open(sys.argv[1]):
    c = l.rstrip("\n").split("\t")
    cn, tm, alg = c[3].split("|"), c[4].split("|"), c[5].split("|")
    secs = [calendar.timegm(time.strptime(t.replace(" (UTC)", ""), "%Y-%m-%d %H:%M:%S"))
            for t in tm if t]
    got[(c[0] or c[1], c[2])] = [cn[-2] if len(cn) > 1 else "", cn[-1], secs,
                                 alg[1] if len(alg) > 1 else ""]
lines = [l.rstrip("\n") for l in open(sys.argv[2]) if not l.startswith("#")]
ia = lines[0].split(",").index("app")
want = {}
for l in lines[1:]:
    p = l.split(",", ia + 1)
    bi = json.loads(p[ia + 1]).get("bi", {})
    if "tls_issuer_cn" in bi:
        want[(p[4], p[6])] = [bi["tls_issuer_cn"], bi["tls_subject_cn"],
                              [bi["tls_validity_not_before"], bi["tls_validity_not_after"]],
                              bi["tls_public_key_alg"]]
bad = ["%s: tshark %s, truth %s" % (k, got.get(k), w) for k, w in want.items() if got.get(k) != w]
bad += ["%s: a certificate the truth has not: %s" % (k, v) for k, v in got.items() if k not in want]
print("%d certificates as the truth says" % (len(want) - len(bad)))
for b in bad[:4]:
    print(b)
sys.exit(1 if bad or not want else 0)
PYEOF
check $? "certificates: $(tr '\n' ' ' <"$T/cert.out" | cut -c1-400) $(head -1 "$T/cert.err")"
mal=$(tshark -r "$T/light.pcap" -Y _ws.malformed -T fields -e frame.number 2>/dev/null | head -3 | tr '\n' ' ')
[ -z "$mal" ]
check $? "frames tshark finds malformed: $mal"
end_group

exit "$g_failed"
