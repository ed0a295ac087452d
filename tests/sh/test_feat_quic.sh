#!/usr/bin/env bash
# tests/sh/test_feat_quic.sh - the quic feature set against a real QUIC implementation:
# Debian's ngtcp2 example client and server (gtlsclient, gtlsserver: ngtcp2 with GnuTLS,
# HTTP/3, so ALPN "h3"), on loopback, captured with dumpcap, the connection's datagrams fed to
# src/flow/feature/quic.c by build/tests/test_feat_quic (SECHO_QUIC_PCAP).
#
#   gtlsclient (its own mount namespace: /etc/hosts maps the test's name to the loopback
#   address, so the name it connects to is the SNI it sends) --> gtlsserver on 127.0.0.1 or
#   ::1, port $PORT; dumpcap -i lo -f "udp port $PORT"
#
# Cases: IPv4, IPv6, and IPv4 with the server validating addresses (-V: a Retry, then a
# second Initial with a token). Expected: version 1 (what the client is told: -v v1), the
# server port, the ClientHello reassembled whole with no Initial failing and parsed (tls.h):
# the SNI the test chose, ALPN h3, no user agent (gtlsclient sends none), JA4 equal to one
# computed here from tshark's fields; its random and length equal to what tshark decodes of
# the same capture (an independent QUIC decryptor). Every wait is bounded; server, capture
# and files go on any exit (KEEP=1 keeps the directory; SECHO_QUIC_VERIFY=DIR runs only the
# checks on the captures such a run kept).
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
DRV="$BUILD/tests/test_feat_quic"
# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"

names=("quic: ngtcp2 v1 over IPv4" "quic: ngtcp2 v1 over IPv6" "quic: ngtcp2 v1 with a Retry")
need_tools "quic" gtlsclient gtlsserver dumpcap tshark jq openssl unshare || exit 1
[ -x "$DRV" ] || { echo "FAIL quic: $DRV not built"; exit 1; }
if ! unshare -m true 2>/dev/null; then
	for n in "${names[@]}"; do unavailable "$n" "no mount namespaces here (unshare -m)"; done
	exit 0
fi

T=$(mktemp -d /tmp/secho-feat-quic.XXXXXX)
SP= DP=
cleanup() {
	[ -n "$SP" ] && kill "$SP" 2>/dev/null
	[ -n "$DP" ] && kill "$DP" 2>/dev/null
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/key.pem" \
	-out "$T/cert.pem" -days 1 -subj /CN=quic-sni.secho.test >/dev/null 2>&1 ||
	{ echo "FAIL quic: no certificate"; exit 1; }
mkdir -p "$T/htdocs" && echo hello >"$T/htdocs/index.html"


# JA4 (FoxIO's technical_details/JA4.md) of the capture's first ClientHello, from the fields
# tshark decodes (its 4.0 has no JA4 of its own): tests/sh/ja4_tshark.py, with q for QUIC
ja4_of() {
	tshark -r "$1" -Y 'tls.handshake.type == 1' -T fields -e frame.number \
		-e tls.handshake.version -e tls.handshake.ciphersuite \
		-e tls.handshake.extension.type -e tls.handshake.sig_hash_alg \
		-e tls.handshake.extensions.supported_version \
		-e tls.handshake.extensions_alpn_str 2>/dev/null | head -1 |
		python3 "$ROOT/tests/sh/ja4_tshark.py" q 1 | cut -f2
}

# run NAME ADDR PORT SNI [server options...]
run() {
	local name=$1 addr=$2 port=$3 sni=$4 cap="$T/$3.pcap" i
	shift 4
	group "$name"
	printf '%s %s\n' "$addr" "$sni" >"$T/hosts.$port"
	timeout 30 gtlsserver -q "$@" -d "$T/htdocs" "$addr" "$port" "$T/key.pem" "$T/cert.pem" \
		>"$T/srv.$port.log" 2>&1 &
	SP=$!
	timeout 30 dumpcap -q -i lo -f "udp port $port" -P -w "$cap" >"$T/dc.$port.log" 2>&1 &
	DP=$!
	# dumpcap writes the file's header once it captures
	for i in $(seq 50); do
		[ -s "$cap" ] && break
		sleep 0.1
	done
	check $([ -s "$cap" ]; echo $?) "dumpcap did not start: $(head -c 300 "$T/dc.$port.log")"
	sleep 0.3
	timeout 10 unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift &&
		exec gtlsclient -q -v v1 --exit-on-all-streams-close "$@"' sh "$T/hosts.$port" \
		"$sni" "$port" "https://$sni/index.html" >"$T/cli.$port.log" 2>&1
	check $? "the client failed: $(head -c 300 "$T/cli.$port.log")"
	sleep 0.3
	kill -INT "$DP" 2>/dev/null
	for i in $(seq 50); do
		kill -0 "$DP" 2>/dev/null || break
		sleep 0.1
	done
	kill "$SP" 2>/dev/null
	wait 2>/dev/null
	SP= DP=
	verify "$cap" "$port" "$sni" "${1:-}"
	end_group
}

# verify CAPTURE PORT SNI [-V]: the checks on one capture (of the group begun)
verify() {
	local cap=$1 port=$2 sni=$3 retry=$4
	local out js ch
	out=$(SECHO_QUIC_PCAP="$cap" "$DRV")
	check $? "the driver failed on $cap"
	js=$(printf '%s\n' "$out" | sed -n 's/^json: //p')
	ch=$(printf '%s\n' "$out" | sed -n 's/^ch: //p')
	check $(jq -e . >/dev/null 2>&1 <<<"$js"; echo $?) "not JSON: $js"
	jf() { jq -r "$1 // \"none\"" <<<"$js" 2>/dev/null; }
	check $([ "$(jf .quic_version)" = 1 ]; echo $?) "version $(jf .quic_version), not 1"
	check $([ "$(jf .quic_client_version)" = 1 ]; echo $?) "client version"
	check $([ "$(jf .quic_server_port)" = "$port" ]; echo $?) "server port $(jf .quic_server_port)"
	check $([ "$(jf .quic_ch_parsed)" = 1 ]; echo $?) "no ClientHello: $js"
	check $([ "$(jf .quic_initials_failed)" = 0 ]; echo $?) "Initials failed: $js"
	check $([ "$(jf .quic_scid)" != none ]; echo $?) "no server CID: $js"
	check $([ "$(jf .quic_sni)" = "$sni" ]; echo $?) "SNI $(jf .quic_sni), not $sni"
	check $([ "$(jf .quic_alpn)" = h3 ]; echo $?) "ALPN $(jf .quic_alpn), not h3"
	check $([ "$(jf .quic_user_agent)" = none ]; echo $?) "a user agent gtlsclient never sends"
	local ja4
	ja4=$(ja4_of "$cap")
	check $([ -n "$ja4" ] && [ "$(jf .quic_ja4)" = "$ja4" ]; echo $?) \
		"JA4 $(jf .quic_ja4), computed from tshark's fields $ja4"
	# the same ClientHello as tshark's decryption of the same capture
	local ts
	ts=$(tshark -r "$cap" -Y 'tls.handshake.type == 1' -T fields -e tls.handshake.random \
		-e tls.handshake.length -e tls.handshake.extensions_server_name \
		-e tls.handshake.extensions_alpn_str 2>/dev/null | head -1)
	local rnd len tsni talpn
	IFS=$'\t' read -r rnd len tsni talpn <<<"$ts"
	check $([ "$tsni" = "$sni" ] && [ "$talpn" = h3 ]; echo $?) "tshark: SNI $tsni ALPN $talpn"
	check $([ -n "$rnd" ] && [ "${ch:12:64}" = "${rnd//:/}" ]; echo $?) \
		"random ${ch:12:64}, tshark's $rnd"
	check $([ -n "$len" ] && [ "$(jf .quic_ch_length)" = $((len + 4)) ]; echo $?) \
		"length $(jf .quic_ch_length), tshark's $len + 4"
	if [ "$retry" = -V ]; then
		check $([ "$(jf .quic_retry_scid)" != none ]; echo $?) "no Retry seen: $js"
	fi
	# the meter itself over the same capture: its one record with quic_ members has the
	# module's (the state lent from the set's pool, kept in its done pool)
	local mine want
	mine=$("$BUILD/secho" flow --pcap "$cap" --features quic --json - --quiet 2>/dev/null |
		jq -cS 'with_entries(select(.key | startswith("quic_"))) | select(length > 0)')
	want=$(jq -cS 'with_entries(select(.key | startswith("quic_")))' <<<"$js")
	check $([ -n "$want" ] && [ "$mine" = "$want" ]; echo $?) \
		"secho flow's quic_ members: $mine; the module's: $want"
}

# SECHO_QUIC_VERIFY=DIR: only the checks, on DIR/44461.pcap ... kept by an earlier run
# (KEEP=1 keeps the run's directory), without starting anything
if [ -n "${SECHO_QUIC_VERIFY:-}" ]; then
	group "${names[0]} (kept)" && verify "$SECHO_QUIC_VERIFY/44461.pcap" 44461 \
		quic-sni.secho.test "" && end_group
	group "${names[1]} (kept)" && verify "$SECHO_QUIC_VERIFY/44462.pcap" 44462 \
		quic6.secho.test "" && end_group
	group "${names[2]} (kept)" && verify "$SECHO_QUIC_VERIFY/44463.pcap" 44463 \
		retry.secho.test -V && end_group
	exit $g_failed
fi
run "${names[0]}" 127.0.0.1 44461 quic-sni.secho.test
run "${names[1]}" ::1 44462 quic6.secho.test
run "${names[2]}" 127.0.0.1 44463 retry.secho.test -V
exit $g_failed
