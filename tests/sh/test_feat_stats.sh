#!/usr/bin/env bash
# tests/sh/test_feat_stats.sh - the per-packet statistics (pstats, phists, bstats) on real
# traffic, against an independent computation: curl fetching pages of several sizes from a
# Python http.server on 127.0.0.1, and UDP datagrams sent in timed groups (bursts and
# pauses) by a Python client to a Python receiver, captured on lo by dumpcap. The capture's
# flows go through the three sets (build/tests/test_feat_pstats in its SECHO_FEAT_PCAP
# mode); tshark decodes the same capture and a Python program here computes the lists,
# histograms and bursts from ipfixprobe's definitions (docs/FLOW.md); every flow's fields
# must be equal. Every wait bounded; servers, capture and files go on any exit.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
PROG=$BUILD/tests/test_feat_pstats
PY=/usr/bin/python3
T=$(mktemp -d /tmp/secho-feat-stats.XXXXXX)
SRV_PID=
UDP_PID=
. "$ROOT/tests/sh/check_lib.bash"
. "$ROOT/tests/sh/feat_lib.bash"
cleanup() {
	cap_stop
	feat_stop "$SRV_PID" "$UDP_PID"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

NAME="pstats, phists, bstats: real flows against tshark and a reference computation"
feat_need "$NAME" "$PROG" curl dumpcap tshark jq "$PY" || exit 1

PORT=$((20000 + RANDOM % 20000))
UPORT=$((PORT + 1))
mkdir -p "$T/www"
head -c 300 /dev/zero | tr '\0' a >"$T/www/small"
head -c 70000 /dev/urandom >"$T/www/medium"
head -c 400000 /dev/urandom >"$T/www/large"
(cd "$T/www" && exec "$PY" -m http.server --bind 127.0.0.1 "$PORT") >"$T/srv.log" 2>&1 &
SRV_PID=$!
"$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
while True:
    d, a = s.recvfrom(65535)
    s.sendto(d[:len(d) // 2], a)
' "$UPORT" >"$T/udp.log" 2>&1 &
UDP_PID=$!
ready=1
for _ in $(seq 1 50); do
	curl -s -m 2 -o /dev/null "http://127.0.0.1:$PORT/small" && { ready=0; break; }
	sleep 0.1
done
[ "$ready" -eq 0 ] || { echo "FAIL $NAME: the server did not answer"; exit 1; }
if ! cap_start "$T/s.pcapng" "port $PORT or port $UPORT"; then
	echo "FAIL $NAME: dumpcap did not start"
	exit 1
fi
for f in small medium large; do
	curl -s -m 5 -o /dev/null "http://127.0.0.1:$PORT/$f"
done
# UDP: groups of datagrams 20 ms apart, groups 1.1 s apart (bursts), one group of 2 (none)
timeout 20 "$PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
for g, n in enumerate([4, 2, 3, 5, 3]):
    for i in range(n):
        s.sendto(bytes(40 + 300 * g + i), ("127.0.0.1", int(sys.argv[1])))
        s.recvfrom(65535)
        time.sleep(0.02)
    time.sleep(1.1)
' "$UPORT" || { echo "FAIL $NAME: the UDP client failed"; exit 1; }
cap_stop
SECHO_FEAT_PCAP="$T/s.pcapng" "$PROG" >"$T/ours.json" 2>"$T/err"
rc=$?
tshark -r "$T/s.pcapng" -T fields -E separator=, -e frame.time_epoch -e ip.src -e ip.dst \
	-e tcp.srcport -e tcp.dstport -e udp.srcport -e udp.dstport -e tcp.len -e udp.length \
	-e tcp.flags >"$T/tshark.csv" 2>"$T/tshark.err"
trc=$?

# The reference: ipfixprobe's definitions, written here from docs/FLOW.md, over tshark's view.
"$PY" - "$T/tshark.csv" >"$T/ref.json" <<'PYEOF'
import json, sys
flows, order = {}, []
for line in open(sys.argv[1]):
    t, src, dst, tsp, tdp, usp, udp_, tlen, ulen, fl = line.strip().split(",")
    sec, frac = t.split(".")
    ns = int(sec) * 10**9 + int((frac + "000000000")[:9])
    tcp = tsp != ""
    sp, dp = (int(tsp), int(tdp)) if tcp else (int(usp), int(udp_))
    size = int(tlen) if tcp else int(ulen) - 8
    flags = int(fl, 16) & 0xff if tcp else 0
    k = (src, sp, dst, dp, tcp)
    rk = (dst, dp, src, sp, tcp)
    if k in flows:
        d = 0
    elif rk in flows:
        k, d = rk, 1
    else:
        flows[k] = []
        order.append(k)
        d = 0
    flows[k].append((ns, size, flags, d))

def binof(v):
    if v < 16:
        return 0
    if v > 1023:
        return 7
    return v.bit_length() - 1 - 3

for k in order:
    pk = flows[k]
    nz = [p for p in pk if p[1] > 0]
    first = nz[:30]
    out = {"sport": k[1], "dport": k[3]}
    if first:
        out["ppi_pkt_lengths"] = [p[1] for p in first]
        out["ppi_pkt_times"] = [p[0] for p in first]
        out["ppi_pkt_flags"] = [p[2] for p in first]
        out["ppi_pkt_directions"] = [1 if p[3] == 0 else -1 for p in first]
        for d, pre in ((0, "s"), (1, "d")):
            sizes, ipt, last = [0] * 8, [0] * 8, None
            for p in nz:
                if p[3] != d:
                    continue
                sizes[binof(p[1])] += 1
                ms = p[0] // 10**6
                if last is not None:
                    ipt[binof(max(ms - last, 0))] += 1
                last = ms
            out[pre + "_phists_sizes"] = sizes
            out[pre + "_phists_ipt"] = ipt
    bursts = {0: [], 1: []}
    for d in (0, 1):
        cand = None
        for p in nz:
            if p[3] != d:
                continue
            if cand and p[0] // 1000 < cand["stop"] // 1000 + 10**6:
                cand["n"] += 1; cand["b"] += p[1]; cand["stop"] = p[0]
                continue
            if cand and cand["n"] >= 3:
                bursts[d].append(cand)
            if len(bursts[d]) >= 15:
                cand = None
                break
            cand = {"n": 1, "b": p[1], "start": p[0], "stop": p[0]}
        if cand and cand["n"] >= 3 and len(bursts[d]) < 15:
            bursts[d].append(cand)
    if bursts[0] or bursts[1]:
        for d, pre in ((0, "sbi_brst_"), (1, "dbi_brst_")):
            out[pre + "packets"] = [b["n"] for b in bursts[d]]
            out[pre + "bytes"] = [b["b"] for b in bursts[d]]
            out[pre + "time_start"] = [b["start"] for b in bursts[d]]
            out[pre + "time_stop"] = [b["stop"] for b in bursts[d]]
    print(json.dumps(out))
PYEOF
prc=$?

group "$NAME"
check "$rc" "the test program failed on the capture: $(cat "$T/err")"
check "$trc" "tshark failed: $(cat "$T/tshark.err")"
check "$prc" "the reference computation failed"
n_ours=$(wc -l <"$T/ours.json")
n_ref=$(wc -l <"$T/ref.json")
check "$([ "$n_ours" -eq 4 ] && [ "$n_ref" -eq 4 ] && echo 0 || echo 1)" \
	"4 flows expected (3 TCP, 1 UDP): ours $n_ours, reference $n_ref"
while read -r ref; do
	sp=$(echo "$ref" | jq .sport)
	dp=$(echo "$ref" | jq .dport)
	ours=$(jq -c --argjson s "$sp" --argjson d "$dp" \
		'select(.sport == $s and .dport == $d) | del(.flow, .proto, .packets)' "$T/ours.json")
	same=$(jq -n --argjson a "${ours:-null}" --argjson b "$ref" '$a == $b')
	check "$([ "$same" = true ] && echo 0 || echo 1)" "flow $sp -> $dp differs:
    ours      $ours
    reference $ref"
done <"$T/ref.json"
# the UDP flow has the bursts the client timed: 4, 3, 5, 3 each way (the pair is none), and
# its 34 datagrams fill pstats (30)
udp_ok='select(.dport == $u) | .sbi_brst_packets == [4,3,5,3] and
	.dbi_brst_packets == [4,3,5,3] and (.ppi_pkt_lengths | length) == 30'
check "$(jq -e --argjson u "$UPORT" "$udp_ok" "$T/ours.json" >/dev/null && echo 0 || echo 1)" \
	"UDP bursts: $(jq -c --argjson u "$UPORT" 'select(.dport == $u) | .sbi_brst_packets' \
	"$T/ours.json")"
# the meter itself over the same capture: its records' statistics members equal the
# reference's (ipfixprobe's rules over tshark's view, above)
feat_meter_same pstats,phists,bstats "$T/s.pcapng" "$T/ref.json" '(ppi_|[sd]_phists_|[sd]bi_brst_)'
end_group
[ "${g_failed:-0}" -eq 0 ]
