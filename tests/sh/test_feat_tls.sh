#!/usr/bin/env bash
# tests/sh/test_feat_tls.sh - the tls feature set (src/flow/feature/tls.h) on real handshakes:
# `openssl s_server` with a certificate chain the test makes (known CNs, dates from
# `openssl x509`), `openssl s_client` (TLS 1.0 to 1.3, SNI or none, ALPN, configured cipher
# suites) and curl, captured by dumpcap, the capture's flows fed to the state by
# build/tests/test_feat_tls (SECHO_TLS_PCAP).
#
#   +------------------ ns secho-tls-$$ -----------------+
#   |  lo 127.0.0.1, MTU 128 (MSS 88): every ClientHello  |
#   |  and Certificate spans several TCP segments         |
#   |  s_server :4433  <--  s_client / curl               |
#   |  dumpcap -i lo                                      |
#   +-----------------------------------------------------+
#
# Checks, per handshake: SNI, the ALPN offered and chosen, client and server versions, the
# cipher suite, the certificate's issuer and subject CNs, dates and key algorithm equal what
# the test configured; JA3 equals tshark's tls.handshake.ja3 for the same ClientHello; JA4
# equals one computed here from tshark's fields and sha256sum (FoxIO's JA4 rules). TLS 1.0
# and 1.1 need OpenSSL's security level 0: when this OpenSSL refuses them, those two cases
# are UNAVAILABLE, never passed.
# Every wait is bounded; the namespace, processes and files go on any exit (trap).
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
DRV=$BUILD/tests/test_feat_tls
# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"
# shellcheck source=tests/sh/feat_lib.bash
. "$ROOT/tests/sh/feat_lib.bash"

NAME="tls: real handshakes"
need_tools "$NAME" openssl curl tshark dumpcap ip jq sha256sum timeout || exit 1
if [ ! -x "$DRV" ]; then
	echo "FAIL $NAME: $DRV not built (make tests)"
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	unavailable "$NAME" "needs root for a network namespace"
	exit 0
fi

T=$(mktemp -d /tmp/secho-tls.XXXXXX)
NS=secho-tls-$$
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	wait 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
in_ns() { ip netns exec "$NS" "$@"; }

PORT=4433
MSS=88
if ! ip netns add "$NS" || ! in_ns ip link set lo up mtu $((MSS + 40)); then
	echo "FAIL $NAME: cannot create namespace $NS"
	exit 1
fi

# ---- the certificate chain: an EC CA and an RSA leaf ----
ISSUER="Secho Test CA"
SUBJECT="tls.secho.test"
DAYS=400
(
	cd "$T" &&
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key \
			-out ca.pem -subj "/O=secho/CN=$ISSUER" -days 30 &&
		openssl req -newkey rsa:2048 -nodes -keyout leaf.key -out leaf.csr \
			-subj "/O=secho/OU=flow/CN=$SUBJECT" &&
		openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
			-days $DAYS -out leaf.pem
) >"$T/certs.log" 2>&1 || {
	sed 's/^/  /' "$T/certs.log"
	echo "FAIL $NAME: openssl could not make the certificates"
	exit 1
}
NB=$(date -u -d "$(openssl x509 -in "$T/leaf.pem" -noout -startdate | cut -d= -f2)" +%s)
NA=$(date -u -d "$(openssl x509 -in "$T/leaf.pem" -noout -enddate | cut -d= -f2)" +%s)
# the leaf's public key algorithm as openssl x509 names it, dotted by libcrypto (OBJ_obj2txt,
# numbers only): FlowTest's tls_public_key_alg
PKA=$(openssl x509 -in "$T/leaf.pem" -noout -text | sed -n 's/^ *Public Key Algorithm: //p' |
	head -1 | python3 -c '
import ctypes, sys
c = ctypes.CDLL("libcrypto.so.3")
c.OBJ_txt2obj.restype = ctypes.c_void_p
c.OBJ_txt2obj.argtypes = [ctypes.c_char_p, ctypes.c_int]
c.OBJ_obj2txt.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
o = c.OBJ_txt2obj(sys.stdin.read().strip().encode(), 0)
b = ctypes.create_string_buffer(80)
print(b.value.decode() if o and c.OBJ_obj2txt(b, 80, o, 1) > 0 else "")')

# ---- server and capture ----
ip netns exec "$NS" openssl s_server -accept 127.0.0.1:$PORT -cert "$T/leaf.pem" -key "$T/leaf.key" \
	-cert_chain "$T/ca.pem" -alpn h2,http/1.1 -cipher 'DEFAULT@SECLEVEL=0' -www -quiet \
	>"$T/server.log" 2>&1 &
PIDS+=($!)
ip netns exec "$NS" dumpcap -q -P -i lo -f "tcp port $PORT" -w "$T/cap.pcap" >"$T/dumpcap.log" 2>&1 &
DUMPCAP=$!
PIDS+=("$DUMPCAP")
up=0
for _ in $(seq 100); do
	if in_ns ss -ltn | grep -q "127.0.0.1:$PORT " && [ -s "$T/cap.pcap" ]; then
		up=1
		break
	fi
	sleep 0.1
done
if [ $up -ne 1 ]; then
	sed 's/^/  /' "$T/server.log" "$T/dumpcap.log"
	echo "FAIL $NAME: s_server or dumpcap did not start within 10 s"
	exit 1
fi
sleep 0.5 # dumpcap's filter is in place once the file has its header; a margin anyway

# ---- the handshakes: NAME|client|SNI|ALPN offered|client ver|server ver|cipher|ALPN|cert ----
# TLS 1.3 sends the chosen ALPN and the certificate encrypted (EncryptedExtensions,
# Certificate): neither is expected there.
CASES=(
	"tls1.3|-tls1_3 -servername one.secho.test -alpn h2 -ciphersuites TLS_CHACHA20_POLY1305_SHA256|one.secho.test|h2|772|772|4867||0"
	"tls1.2|-tls1_2 -servername two.secho.test -alpn http/1.1,h2 -cipher ECDHE-RSA-AES128-GCM-SHA256|two.secho.test|http/1.1,h2|771|771|49199|h2|1"
	"tls1.1|-tls1_1 -servername three.secho.test -cipher ECDHE-RSA-AES256-SHA@SECLEVEL=0|three.secho.test||770|770|49172||1"
	"tls1.0|-tls1 -servername four.secho.test -cipher ECDHE-RSA-AES128-SHA@SECLEVEL=0|four.secho.test||769|769|49171||1"
	"no sni|-tls1_2 -noservername -cipher AES128-GCM-SHA256|||771|771|156||1"
	"curl|curl|curl.secho.test|http/1.1|771|771|49200|http/1.1|1"
)
RAN=()
for c in "${CASES[@]}"; do
	IFS='|' read -r name args _ <<<"$c"
	if [ "$args" = curl ]; then
		in_ns timeout 10 curl -sk --http1.1 --tlsv1.2 --tls-max 1.2 \
			--ciphers ECDHE-RSA-AES256-GCM-SHA384 \
			--resolve "curl.secho.test:$PORT:127.0.0.1" "https://curl.secho.test:$PORT/" \
			-o "$T/curl.out" >"$T/client.log" 2>&1
		ok=$?
	else
		# shellcheck disable=SC2086 # args are words
		echo Q | in_ns timeout 10 openssl s_client -connect 127.0.0.1:$PORT $args \
			>"$T/client.log" 2>&1
		ok=$?
		grep -q '^ *Protocol *: TLSv\|^New, TLSv' "$T/client.log" || ok=1
	fi
	if [ $ok -ne 0 ]; then
		case "$name" in
		tls1.1 | tls1.0)
			unavailable "tls: $name handshake" "this OpenSSL refuses it even at SECLEVEL=0"
			continue
			;;
		esac
		sed 's/^/  /' "$T/client.log" | tail -5
		echo "FAIL tls: $name handshake: the client failed"
		g_failed=1
		continue
	fi
	RAN+=("$c")
done
sleep 0.5
kill -INT "$DUMPCAP" 2>/dev/null
for _ in $(seq 50); do
	kill -0 "$DUMPCAP" 2>/dev/null || break
	sleep 0.1
done

# ---- the module's view and tshark's ----
SECHO_TLS_PCAP="$T/cap.pcap" "$DRV" >"$T/drv.out" 2>&1
drv_rc=$?
grep "^FLOW [0-9]* $PORT " "$T/drv.out" >"$T/flows"
tshark -r "$T/cap.pcap" -d tcp.port==$PORT,tls -Y 'tls.handshake.type == 1' -T fields \
	-E separator='|' -e tcp.srcport -e tls.handshake.ja3 -e tls.handshake.version \
	-e tls.handshake.ciphersuite -e tls.handshake.extension.type -e tls.handshake.sig_hash_alg \
	-e tls.handshake.extensions.supported_version -e tls.handshake.extensions_alpn_str \
	-e tls.handshake.length >"$T/tshark" 2>"$T/tshark.err"

# JA4 of every ClientHello from tshark's fields (tests/sh/ja4_tshark.py: FoxIO's rules,
# independent of the module's code): client port, JA4
tshark -r "$T/cap.pcap" -d tcp.port==$PORT,tls -Y 'tls.handshake.type == 1' -T fields \
	-e tcp.srcport -e tls.handshake.version -e tls.handshake.ciphersuite \
	-e tls.handshake.extension.type -e tls.handshake.sig_hash_alg \
	-e tls.handshake.extensions.supported_version -e tls.handshake.extensions_alpn_str \
	2>>"$T/tshark.err" | python3 "$ROOT/tests/sh/ja4_tshark.py" t 1 >"$T/ja4" 2>>"$T/tshark.err"
field() { jq -r "$1 // \"\"" <<<"$2"; }

group "tls: the capture"
check $drv_rc "test_feat_tls over the capture exited $drv_rc: $(grep FAIL "$T/drv.out" | head -3)"
nflows=$(wc -l <"$T/flows")
check $((nflows == ${#RAN[@]} ? 0 : 1)) "$nflows flows to port $PORT, ${#RAN[@]} handshakes run"
check $(($(wc -l <"$T/tshark") == ${#RAN[@]} ? 0 : 1)) "tshark saw $(wc -l <"$T/tshark") ClientHellos: $(head -3 "$T/tshark.err")"
end_group

i=0
while read -r _ cport sport json; do
	[ $i -lt ${#RAN[@]} ] || break
	IFS='|' read -r name _ sni offer cver sver cipher alpn cert <<<"${RAN[$i]}"
	i=$((i + 1))
	group "tls: $name handshake"
	[ "$(field .tls_sni "$json")" = "$sni" ]
	check $? "sni '$(field .tls_sni "$json")', configured '$sni'"
	[ "$(field .tls_alpn_offer "$json")" = "$offer" ]
	check $? "alpn offered '$(field .tls_alpn_offer "$json")', configured '$offer'"
	[ "$(field .tls_alpn "$json")" = "$alpn" ]
	check $? "alpn chosen '$(field .tls_alpn "$json")', expected '$alpn'"
	[ "$(field .tls_client_version "$json")" = "$cver" ]
	check $? "client version $(field .tls_client_version "$json"), configured $cver"
	[ "$(field .tls_server_version "$json")" = "$sver" ]
	check $? "server version $(field .tls_server_version "$json"), configured $sver"
	[ "$(field .tls_cipher_suite "$json")" = "$cipher" ]
	check $? "cipher suite $(field .tls_cipher_suite "$json"), configured $cipher"
	if [ "$cert" = 1 ]; then
		[ "$(field .tls_issuer_cn "$json")" = "$ISSUER" ]
		check $? "issuer CN '$(field .tls_issuer_cn "$json")'"
		[ "$(field .tls_subject_cn "$json")" = "$SUBJECT" ]
		check $? "subject CN '$(field .tls_subject_cn "$json")'"
		[ "$(field .tls_validity_not_before "$json")" = "$NB" ] &&
			[ "$(field .tls_validity_not_after "$json")" = "$NA" ] &&
			[ $((NA - NB)) -eq $((DAYS * 86400)) ]
		check $? "validity $(field .tls_validity_not_before "$json")..$(field .tls_validity_not_after "$json"), openssl x509 says $NB..$NA"
		[ -n "$PKA" ] && [ "$(field .tls_public_key_alg "$json")" = "$PKA" ]
		check $? "public key algorithm '$(field .tls_public_key_alg "$json")', openssl says '$PKA'"
	else
		[ -z "$(field .tls_issuer_cn "$json")" ]
		check $? "a certificate read from an encrypted flight"
	fi
	for k in tls_gap tls_snapped tls_malformed tls_oversize tls_overflow; do
		[ -z "$(field ".$k" "$json")" ]
		check $? "$k $(field ".$k" "$json")"
	done
	line=$(grep "^$cport|" "$T/tshark")
	IFS='|' read -r _ ja3 _ _ _ _ _ _ hlen <<<"$line"
	[ -n "$ja3" ] && [ "$(field .tls_ja3 "$json")" = "$ja3" ]
	check $? "ja3 $(field .tls_ja3 "$json"), tshark $ja3"
	want4=$(awk -F'\t' -v p="$cport" '$1 == p { print $2; exit }' "$T/ja4")
	[ "$(field .tls_ja4 "$json")" = "$want4" ]
	check $? "ja4 $(field .tls_ja4 "$json"), from tshark's fields $want4"
	[ -n "$hlen" ] && [ $((hlen + 9)) -gt $MSS ]
	check $? "ClientHello of $hlen bytes (+ 9 of headers): not split over segments (MSS $MSS)"
	[ "$sport" = $PORT ]
	check $? "server port $sport"
	end_group
done <"$T/flows"
# the meter itself over the same capture: every handshake's tls_ members in its records, as
# the module gave them above
group "tls: secho flow over the capture"
feat_meter_same tls "$T/cap.pcap" "$T/flows" tls_
end_group
exit $g_failed
