#!/usr/bin/env bash
# tests/sh/test_feat_dns.sh - the dns feature set on a real resolver and client: dnsmasq
# (dnsmasq-base) on 127.0.0.1 and ::1 with records this test writes, asked by dig
# (bind9-dnsutils; EDNS payload size 1400, DO set on one) for A, AAAA, a CNAME chain, MX,
# SRV, a name that does not exist (NXDOMAIN), TXT over TCP and A over IPv6, captured on lo
# by dumpcap and fed flow by flow to the feature set (build/tests/test_feat_dns in its
# SECHO_FEAT_PCAP mode). Expected: what the configuration and dig's options say, and each
# message ID as dig itself reports it. Then the meter itself over the same capture
# (`secho flow --features dns`): its records carry the module's dns members. Every wait
# bounded; dnsmasq, the capture and the files go on any exit.
#
#   dig --(UDP/TCP 127.0.0.1:PORT, UDP [::1]:PORT)--> dnsmasq   (dumpcap on lo, "port PORT")
#
# As root the test runs in a network namespace of its own (unshare -n: its own loopback,
# gone with the process), where dnsmasq takes port 53, the port the meter's dns set reads
# (as ipfixprobe's); otherwise a port of its own, and the meter's part says why it is skipped.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
if [ -z "${SECHO_DNS_NETNS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
	unshare -n true 2>/dev/null; then
	exec env SECHO_DNS_NETNS=1 BUILD="$BUILD" unshare -n bash "$0" "$@"
fi
PROG=$BUILD/tests/test_feat_dns
T=$(mktemp -d /tmp/secho-feat-dns.XXXXXX)
DM_PID=
. "$ROOT/tests/sh/check_lib.bash"
. "$ROOT/tests/sh/feat_lib.bash"
cleanup() {
	cap_stop
	feat_stop "$DM_PID"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

NAME="dns feature set: dig and dnsmasq on loopback"
feat_need "$NAME" "$PROG" dnsmasq dig dumpcap jq || exit 1

if [ -n "${SECHO_DNS_NETNS:-}" ]; then
	ip link set lo up || { echo "FAIL $NAME: no loopback in the test's namespace"; exit 1; }
	PORT=53
else
	PORT=$((20000 + RANDOM % 20000))
fi
cat >"$T/dnsmasq.conf" <<CONF
no-resolv
no-hosts
port=$PORT
listen-address=127.0.0.1,::1
bind-interfaces
local-ttl=300
address=/a.secho.test/198.18.0.10
address=/v6.secho.test/198.18.0.16
host-record=h.secho.test,198.18.0.11,2001:db8::11
cname=www.secho.test,h.secho.test
mx-host=secho.test,mail.secho.test,10
txt-record=t.secho.test,"hello world","two"
srv-host=_ldap._tcp.secho.test,ldap.secho.test,389,1,5
local=/secho.test/
CONF
dnsmasq --no-daemon --conf-file="$T/dnsmasq.conf" --pid-file= >"$T/dnsmasq.log" 2>&1 &
DM_PID=$!
DIG=(dig -p "$PORT" @127.0.0.1 +time=2 +tries=1 +bufsize=1400)
ready=1
for _ in $(seq 1 50); do
	"${DIG[@]}" +short a.secho.test A 2>/dev/null | grep -q 198.18.0.10 && { ready=0; break; }
	kill -0 "$DM_PID" 2>/dev/null || break
	sleep 0.1
done
if [ "$ready" -ne 0 ]; then
	cat "$T/dnsmasq.log"
	echo "FAIL $NAME: dnsmasq did not answer on 127.0.0.1:$PORT"
	exit 1
fi
cap_start "$T/dns.pcapng" "port $PORT" || { echo "FAIL $NAME: dumpcap did not start"; exit 1; }

# ask NAME TYPE [DIG-OPTION...]; keep dig's output (its ID) per question
ask() {
	local name=$1 type=$2
	shift 2
	"${DIG[@]}" "$@" "$name" "$type" >"$T/dig.$name.$type" 2>&1
}
ask a.secho.test A
ask h.secho.test AAAA
ask www.secho.test A
ask secho.test MX +dnssec
ask _ldap._tcp.secho.test SRV
ask nx.secho.test A
ask t.secho.test TXT +tcp
# one over IPv6
dig -p "$PORT" @::1 +time=2 +tries=1 +bufsize=1400 v6.secho.test A >"$T/dig.v6.secho.test.A" 2>&1
cap_stop
feat_flows "$PROG" "$T/dns.pcapng" >"$T/flows.json" 2>"$T/flows.err"
rc=$?

dig_id() { sed -n 's/.*opcode: QUERY, status: [A-Z]*, id: \([0-9]*\).*/\1/p' "$T/dig.$1.$2"; }
# flow NAME QTYPE: the JSON line of the flow that asked it
flow() { jq -c --arg n "$1" --argjson t "$2" \
	'select(.dns_req_query_name == $n and .dns_req_query_type == $t)' "$T/flows.json"; }
# expect NAME QTYPE JQ-FILTER DESCRIPTION: the flow's line satisfies the filter
expect() {
	local f
	f=$(flow "$1" "$3")
	if [ -z "$f" ]; then
		check 1 "$1 $2: no flow"
		return
	fi
	local id
	id=$(dig_id "$1" "$2")
	echo "$f" | jq -e --argjson id "${id:-0}" "$4" >/dev/null
	check $? "$1 $2: $5: $f (dig's ID ${id:-none})"
}

group "$NAME"
check "$rc" "the test program failed on the capture: $(cat "$T/flows.err")"
check "$([ "$(wc -l <"$T/flows.json")" -eq 8 ] && echo 0 || echo 1)" \
	"8 flows expected, got $(wc -l <"$T/flows.json")"
common='.dns_id == $id and .done == 1 and .refused == 0 and .dns_req_query_class == 1
	and (.dns_flags / 32768 | floor) == 0 and (.rev_dns_flags / 32768 | floor) == 1
	and .dns_psize == 1400 and (has("dns_truncated") | not)'
expect a.secho.test A 1 "$common and .dns_do == 0 and .proto == 17 and .dns_resp_rcode == 0 and
	.dns_answers == 1 and .dns_resp_rr == [{name:\"a.secho.test\",type:1,class:1,ttl:300,
	data:\"198.18.0.10\"}] and .dns_rdata == \"198.18.0.10\" and .dns_rlength == 11 and
	.dns_rr_ttl == 300" "A"
expect h.secho.test AAAA 28 "$common and .dns_answers == 1 and
	.dns_resp_rr[0].data == \"2001:db8::11\" and .dns_resp_rr[0].type == 28" "AAAA"
expect www.secho.test A 1 "$common and .dns_answers == 2 and .dns_resp_rr == [
	{name:\"www.secho.test\",type:5,class:1,ttl:300,data:\"h.secho.test\"},
	{name:\"h.secho.test\",type:1,class:1,ttl:300,data:\"198.18.0.11\"}]" "CNAME chain"
expect secho.test MX 15 "$common and .dns_do == 1 and .dns_answers == 1 and
	.dns_resp_rr[0].data == \"10 mail.secho.test\" and .dns_resp_rr[0].type == 15" "MX"
expect _ldap._tcp.secho.test SRV 33 "$common and .dns_answers == 1 and
	.dns_resp_rr[0].data == \"1 5 389 ldap.secho.test\"" "SRV"
expect nx.secho.test A 1 "$common and .dns_resp_rcode == 3 and .dns_answers == 0 and
	.dns_resp_rr == [] and (has(\"dns_rdata\") | not)" "NXDOMAIN"
expect t.secho.test TXT 16 "$common and .proto == 6 and .dns_answers == 1 and
	.dns_resp_rr[0].data == \"hello world two\"" "TXT over TCP"
expect v6.secho.test A 1 "$common and .proto == 17 and
	.dns_resp_rr == [{name:\"v6.secho.test\",type:1,class:1,ttl:300,data:\"198.18.0.16\"}]" \
	"A over IPv6 (::1)"
# dig's own view of the answers agrees (an independent decoder of the same messages)
check "$(grep -q 'status: NXDOMAIN' "$T/dig.nx.secho.test.A" && echo 0 || echo 1)" \
	"dig did not see NXDOMAIN"
check "$(grep -q '"hello world" "two"' "$T/dig.t.secho.test.TXT" && echo 0 || echo 1)" \
	"dig did not see the TXT strings"
# the meter itself over the same capture: every flow's dns members in its records
if [ "$PORT" = 53 ]; then
	feat_meter_same dns "$T/dns.pcapng" "$T/flows.json" '(dns_|rev_dns_)'
else
	echo "  (not root: dnsmasq is not on port 53, which the meter's dns set reads; the meter's part skipped)"
fi
end_group
[ "${g_failed:-0}" -eq 0 ]
