#!/usr/bin/env bash
# tests/sh/test_provider.sh - the OpenSSL provider (build/secho.so) under unmodified programs.
#
# Every program here is Debian's own binary, unchanged; secho comes in through OPENSSL_CONF
# alone (a configuration that activates it beside the default provider and prefers it with
# default_properties = ?provider=secho, as docs/PROVIDER.md shows). Proof that secho did
# the work: with SECHO_PROVIDER_STATS=FILE the provider appends its counters to FILE when
# the process ends; only secho.so writes that line and only its own code counts, so a
# connection served by the default provider shows no records (checked as a control).
#
# Groups (one PASS/FAIL/UNAVAILABLE line each):
#   - the module: one exported symbol (OSSL_provider_init), no OpenSSL library linked,
#     `openssl list` shows the provider and its 21 algorithms;
#   - make install DESTDIR=...: lands in the directory `openssl version -m` names and loads
#     from there by name (OPENSSL_MODULES);
#   - openssl enc, AES-128/192/256 ECB, CBC, CTR, CFB, OFB, padded and -nopad: the bytes
#     equal the default provider's, decryption gives the input back, the counters moved;
#     AES-PCBC (OpenSSL has none) equals `secho crypt --mode pcbc`;
#   - TLS on 127.0.0.1 (a random port the server picks), openssl s_server -naccept 1 -www
#     against curl and openssl s_client: TLS 1.2 ECDHE-RSA-AES256-GCM-SHA384 and TLS 1.3
#     TLS_AES_256_GCM_SHA384 (both sides sealed and opened records in secho), TLS 1.2
#     ECDHE-RSA-AES256-SHA384 with and without encrypt-then-MAC (secho's CBC record path),
#     and a control preferring the default provider (secho counts nothing);
#   - Debian's python3-cryptography (/usr/bin/python3): AESGCM round trips, forgeries
#     rejected, ciphertexts equal to the default provider's, counters moved.
# Needs: openssl, curl, python3-cryptography (scripts/deps.sh installs them).
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$ROOT/$BUILD ;; esac
SO=$B/secho.so
S=${SECHO_BIN:-$B/secho}
T=$(mktemp -d /tmp/secho-provider-test.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"
# shellcheck source=tests/sh/provider_lib.bash
. "$ROOT/tests/sh/provider_lib.bash"

need_tools "secho provider" openssl curl xxd || exit 1
if [ ! -f "$SO" ]; then
	echo "FAIL secho provider: $SO not built"
	exit 1
fi

# The configuration an unmodified program gets (docs/PROVIDER.md), and a control that
# loads secho but prefers the default provider.
provider_conf "$T/secho.cnf" "$SO" secho
provider_conf "$T/control.cnf" "$SO" default

# counter FILE NAME [LINE]: counter NAME from the LINE-th stats line of FILE (default: the sum
# over all lines); empty when the file has no line.
counter() {
	[ -s "$1" ] || return 0
	awk -v k="$2" -v want="${3:-0}" '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) v[NR] = kv[2] }
	} END {
		if (want > 0) { print v[want] + 0; exit }
		s = 0; for (n in v) s += v[n]; print s
	}' "$1"
}

# ---- the module ----
group "provider module: exports, dependencies, openssl list"
exports=$(nm -D --defined-only "$SO" | awk '{print $3}')
[ "$exports" = "OSSL_provider_init" ]
check $? "exported symbols: $(echo "$exports" | tr '\n' ' ')"
needed=$(readelf -d "$SO" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
! grep -q 'libcrypto\|libssl' <<<"$needed"
check $? "links an OpenSSL library: $needed"
openssl list -providers -provider-path "$B" -provider secho >"$T/list" 2>&1
check $? "openssl list -providers failed: $(head -2 "$T/list")"
grep -q 'status: active' "$T/list" && grep -q 'secho AES provider' "$T/list"
check $? "secho not listed active"
n=$(openssl list -cipher-algorithms -provider-path "$B" -provider secho 2>/dev/null | grep -c '@ secho')
[ "$n" -eq 21 ]
check $? "secho lists $n algorithms, want 21"
end_group

# ---- make install ----
group "make install (DESTDIR) into the directory openssl version -m names"
moddir=$(openssl version -m | sed -n 's/^MODULESDIR: "\(.*\)"$/\1/p')
if [ -z "$moddir" ]; then
	check 1 "openssl version -m names no directory"
else
	make -C "$ROOT" --no-print-directory -s install BUILD="$BUILD" DESTDIR="$T/dest" >"$T/inst" 2>&1
	check $? "make install failed: $(tail -2 "$T/inst")"
	cmp -s "$SO" "$T/dest$moddir/secho.so"
	check $? "not installed at $T/dest$moddir/secho.so"
	[ "$(stat -c %a "$T/dest$moddir/secho.so" 2>/dev/null)" = 644 ]
	check $? "installed mode is not 0644"
	OPENSSL_MODULES=$T/dest$moddir openssl list -providers -provider secho 2>&1 | grep -q 'status: active'
	check $? "the installed module does not load by name"
fi
end_group

# ---- openssl enc ----
group "openssl enc through OPENSSL_CONF: the default provider's bytes (ECB CBC CTR CFB OFB, PCBC)"
: >"$T/st.enc"
head -c 5000 /dev/urandom >"$T/rand"
for mode in ecb cbc ctr cfb ofb; do
	for bits in 128 192 256; do
		key=$(head -c $((bits / 8)) /dev/urandom | xxd -p -c 64)
		iv=$(head -c 16 /dev/urandom | xxd -p -c 64)
		for pad in "" -nopad; do
			len=$((RANDOM % 1200))
			if [ -n "$pad" ] && { [ $mode = ecb ] || [ $mode = cbc ]; }; then
				len=$((len / 16 * 16))
			fi
			head -c "$len" "$T/rand" >"$T/in"
			args=("-aes-$bits-$mode" -K "$key")
			[ -n "$pad" ] && args+=("$pad")
			[ $mode = ecb ] || args+=(-iv "$iv")
			OPENSSL_CONF=$T/secho.cnf SECHO_PROVIDER_STATS=$T/st.enc \
				openssl enc -e "${args[@]}" -in "$T/in" -out "$T/ours" 2>"$T/err"
			r1=$?
			OPENSSL_CONF=/dev/null openssl enc -e "${args[@]}" -in "$T/in" -out "$T/theirs" 2>>"$T/err"
			r2=$?
			[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && cmp -s "$T/ours" "$T/theirs"
			check $? "aes-$bits-$mode $pad $len bytes: differs from the default provider ($(head -1 "$T/err"))"
			OPENSSL_CONF=$T/secho.cnf SECHO_PROVIDER_STATS=$T/st.enc \
				openssl enc -d "${args[@]}" -in "$T/theirs" -out "$T/back" 2>"$T/err"
			[ $? -eq 0 ] && cmp -s "$T/back" "$T/in"
			check $? "aes-$bits-$mode $pad $len bytes: decryption ($(head -1 "$T/err"))"
		done
	done
	[ "$(counter "$T/st.enc" bytes_$mode)" -gt 0 ] 2>/dev/null
	check $? "no $mode bytes counted by secho"
done
key=$(head -c 32 /dev/urandom | xxd -p -c 64)
iv=$(head -c 16 /dev/urandom | xxd -p -c 64)
head -c 1024 "$T/rand" >"$T/in"
OPENSSL_CONF=$T/secho.cnf openssl enc -e -aes-256-pcbc -nopad -K "$key" -iv "$iv" -in "$T/in" -out "$T/ours" 2>"$T/err" &&
	"$S" crypt -e --mode pcbc --key "$key" --iv "$iv" <"$T/in" >"$T/theirs" &&
	cmp -s "$T/ours" "$T/theirs"
check $? "aes-256-pcbc: openssl enc and secho crypt differ ($(head -1 "$T/err"))"
end_group

# ---- TLS ----
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/key.pem" -out "$T/cert.pem" \
	-subj /CN=localhost -days 1 >/dev/null 2>&1

# serve CONF STATS SERVER-ARGS...: start s_server on 127.0.0.1, a port it picks; sets port
# and spid (empty port when it did not come up within 10 s).
serve() {
	local cf=$1 st=$2
	shift 2
	: >"$T/srv.out"
	OPENSSL_CONF=$cf SECHO_PROVIDER_STATS=$st timeout 30 openssl s_server \
		-accept 127.0.0.1:0 -naccept 1 -www -cert "$T/cert.pem" -key "$T/key.pem" \
		"$@" >"$T/srv.out" 2>"$T/srv.err" &
	spid=$!
	pids+=("$spid")
	port=
	for _ in $(seq 1 200); do
		port=$(sed -n 's/^ACCEPT 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$T/srv.out")
		[ -n "$port" ] && break
		sleep 0.05
	done
}
# Wait (at most 10 s) for the server to end after its one connection.
server_done() {
	for _ in $(seq 1 200); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
}
# connect CLIENT CONF STATS PROTO CIPHER [EXTRA]: fetch the status page; output in $T/page.
connect() {
	local client=$1 cf=$2 st=$3 proto=$4 cipher=$5 extra=${6:-}
	if [ "$client" = curl ]; then
		local c=(--tlsv1.2 --tls-max 1.2 --ciphers "$cipher")
		[ "$proto" = 1.3 ] && c=(--tlsv1.3 --tls13-ciphers "$cipher")
		OPENSSL_CONF=$cf SECHO_PROVIDER_STATS=$st timeout 20 curl -sS --cacert "$T/cert.pem" \
			--resolve "localhost:$port:127.0.0.1" "${c[@]}" "https://localhost:$port/" \
			>"$T/page" 2>"$T/cl.err"
	else
		local c=(-tls1_2 -cipher "$cipher")
		[ "$proto" = 1.3 ] && c=(-tls1_3 -ciphersuites "$cipher")
		# shellcheck disable=SC2086
		printf 'GET / HTTP/1.0\r\n\r\n' | OPENSSL_CONF=$cf SECHO_PROVIDER_STATS=$st timeout 20 \
			openssl s_client -connect "127.0.0.1:$port" "${c[@]}" $extra -CAfile "$T/cert.pem" \
			-verify_return_error -quiet >"$T/page" 2>"$T/cl.err"
	fi
}

# tls NAME CLIENT PROTO CIPHER SERVER-FLAGS CLIENT-FLAGS SEALED-COUNTER OPENED-COUNTER
tls() {
	local name=$1 client=$2 proto=$3 cipher=$4 sflags=$5 cflags=$6 sealed=$7 opened=$8
	local ss=$T/st.s.$name cs=$T/st.c.$name
	local sargs=(-tls1_2 -cipher "$cipher")
	[ "$proto" = 1.3 ] && sargs=(-tls1_3 -ciphersuites "$cipher")
	# shellcheck disable=SC2086
	serve "$T/secho.cnf" "$ss" "${sargs[@]}" $sflags
	if [ -z "$port" ]; then
		check 1 "$name: s_server did not start: $(head -2 "$T/srv.err")"
		return
	fi
	connect "$client" "$T/secho.cnf" "$cs" "$proto" "$cipher" "$cflags"
	check $? "$name: $client failed: $(head -2 "$T/cl.err")"
	server_done
	grep -q "Cipher is $cipher" "$T/page" && grep -q "Protocol  : TLSv$proto" "$T/page"
	check $? "$name: the page does not show TLSv$proto $cipher"
	local side st
	for side in server client; do
		st=$ss
		[ $side = client ] && st=$cs
		[ "$(counter "$st" "$sealed")" -gt 0 ] 2>/dev/null &&
			[ "$(counter "$st" "$opened")" -gt 0 ] 2>/dev/null
		check $? "$name: the $side did not seal and open records in secho ($sealed=$(counter "$st" "$sealed"), $opened=$(counter "$st" "$opened"))"
	done
	echo "  # $name: server $sealed=$(counter "$ss" "$sealed") $opened=$(counter "$ss" "$opened"), client $sealed=$(counter "$cs" "$sealed") $opened=$(counter "$cs" "$opened")"
}

group "TLS through OPENSSL_CONF: s_server with curl and s_client, records sealed by secho"
if [ ! -s "$T/cert.pem" ]; then
	check 1 "no test certificate"
else
	tls tls12-curl curl 1.2 ECDHE-RSA-AES256-GCM-SHA384 "" "" tls12_sealed tls12_opened
	tls tls12-s_client s_client 1.2 ECDHE-RSA-AES256-GCM-SHA384 "" "" tls12_sealed tls12_opened
	tls tls13-curl curl 1.3 TLS_AES_256_GCM_SHA384 "" "" gcm_sealed gcm_opened
	tls tls13-s_client s_client 1.3 TLS_AES_256_GCM_SHA384 "" "" gcm_sealed gcm_opened
	tls tls12-cbc s_client 1.2 ECDHE-RSA-AES256-SHA384 -no_etm -no_etm tls_cbc_sealed tls_cbc_opened
	tls tls12-cbc-etm s_client 1.2 ECDHE-RSA-AES256-SHA384 "" "" tls_cbc_sealed tls_cbc_opened
	# control: secho loaded but the default provider preferred; secho must count nothing
	serve "$T/control.cnf" "$T/st.ctl" -tls1_2 -cipher ECDHE-RSA-AES256-GCM-SHA384
	connect curl "$T/control.cnf" "$T/st.ctl" 1.2 ECDHE-RSA-AES256-GCM-SHA384
	check $? "control: curl failed: $(head -2 "$T/cl.err")"
	server_done
	[ "$(grep -c secho-provider "$T/st.ctl" 2>/dev/null)" = 2 ] &&
		[ "$(counter "$T/st.ctl" tls12_sealed)" = 0 ] && [ "$(counter "$T/st.ctl" tls12_opened)" = 0 ]
	check $? "control (default preferred): secho loaded in both ($(grep -c secho-provider "$T/st.ctl" 2>/dev/null) lines) and sealed $(counter "$T/st.ctl" tls12_sealed) records"
fi
end_group

# ---- Python ----
group "Debian python3-cryptography AESGCM through OPENSSL_CONF"
PY=/usr/bin/python3
if ! "$PY" -c 'import cryptography, sys; sys.exit(not cryptography.__file__.startswith("/usr/lib/python3/"))' 2>/dev/null; then
	check 1 "Debian's python3-cryptography is not installed (scripts/deps.sh installs it)"
	end_group
else
	cat >"$T/aesgcm.py" <<'EOF'
import hashlib, sys
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
seed = bytes.fromhex(sys.argv[1])
out = []
for i, n in enumerate([0, 1, 15, 16, 17, 64, 1000, 1500, 16384, 70000]):
    key = (seed * 8)[: (16, 24, 32)[i % 3]]
    nonce = hashlib.sha256(seed + bytes([i])).digest()[:12]
    aad = (seed * 4)[: i * 5] or None
    data = (seed * (n // len(seed) + 1))[:n]
    g = AESGCM(key)
    ct = g.encrypt(nonce, data, aad)
    assert g.decrypt(nonce, ct, aad) == data, "round trip"
    for where in (0, len(ct) - 1):
        bad = bytearray(ct)
        bad[where] ^= 1
        try:
            g.decrypt(nonce, bytes(bad), aad)
            sys.exit("forgery accepted")
        except InvalidTag:
            pass
    out.append(ct)
print(hashlib.sha256(b"".join(out)).hexdigest())
EOF
	seed=$(head -c 16 /dev/urandom | xxd -p -c 64)
	a=$(OPENSSL_CONF=$T/secho.cnf SECHO_PROVIDER_STATS=$T/st.py "$PY" "$T/aesgcm.py" "$seed" 2>"$T/py.err")
	check $? "python with secho: $(tail -1 "$T/py.err")"
	b=$(OPENSSL_CONF=/dev/null "$PY" "$T/aesgcm.py" "$seed" 2>"$T/py.err")
	check $? "python with the default provider: $(tail -1 "$T/py.err")"
	[ -n "$a" ] && [ "$a" = "$b" ]
	check $? "ciphertexts differ from the default provider's ($a vs $b)"
	[ "$(counter "$T/st.py" gcm_sealed)" -ge 10 ] 2>/dev/null &&
		[ "$(counter "$T/st.py" gcm_opened)" -ge 10 ] 2>/dev/null &&
		[ "$(counter "$T/st.py" gcm_rejected)" -ge 20 ] 2>/dev/null
	check $? "secho's counters in python: sealed $(counter "$T/st.py" gcm_sealed), opened $(counter "$T/st.py" gcm_opened), rejected $(counter "$T/st.py" gcm_rejected)"
	end_group
fi
