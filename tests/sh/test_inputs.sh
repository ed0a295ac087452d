#!/usr/bin/env bash
# tests/sh/test_inputs.sh - inputs a careless or hostile user gives: every one refused
# with one line on stderr and the right exit status, none hanging or half accepted.
#
#   - numbers, MACs and lists parsed strictly by every command (no leading space, sign,
#     hex, empty list item): keygen, serve, speed, host, dashboard -> exit 2, one line;
#   - key and state files that are FIFOs: serve --key, serve --state, host counters --key
#     refuse them at once ("not a regular file", exit 2) instead of waiting for a writer;
#     a key file that is a symbolic link is refused saying so (links are not followed);
#   - corrupt captures for serve --pcap-in (a truncated record, a record longer than the
#     file's snapshot length, a record larger than any snapshot length): an input error,
#     exit 1 with the record named, not a drop; a sound capture exits 0.
# No network, no root needed (serve reads a capture file). Every command runs under
# timeout. One PASS/FAIL line per group.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
S=${SECHO_BIN:-$ROOT/${BUILD:-build}/secho}
T=$(mktemp -d /tmp/secho-inputs.XXXXXX)
trap 'rm -rf "$T"' EXIT

# shellcheck source=tests/sh/check_lib.bash
G_SHOW=8
. "$ROOT/tests/sh/check_lib.bash"
# run WANT_RC WANT_TEXT ARGS...: secho ARGS under a 10 s timeout, stdin empty; checks the
# exit status, exactly one stderr line containing WANT_TEXT (for WANT_RC 2; for other
# statuses, the last line).
run() {
	local want=$1 text=$2 rc line n
	shift 2
	timeout -s KILL 10 "$S" "$@" </dev/null >"$T/out" 2>"$T/err"
	rc=$?
	n=$(wc -l <"$T/err")
	line=$(tail -1 "$T/err")
	[ "$rc" -eq "$want" ] && [[ "$line" == *"$text"* ]] && { [ "$want" -ne 2 ] || [ "$n" -eq 1 ]; }
	check $? "secho $* -> exit $rc (want $want), $n stderr lines, last: $line"
}
[ -x "$S" ] || { echo "FAIL inputs: $S not built"; exit 1; }

key=$T/ep.key
"$S" keygen --key-id 5 --out "$key" >/dev/null || { echo "FAIL inputs: keygen"; exit 1; }
MAC=02:00:00:00:00:02

# ---- pcap files: le32 N prints N as 4 little-endian bytes ----
le32() { printf '%b' "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 & 255)) \
	$((($1 >> 8) & 255)) $((($1 >> 16) & 255)) $((($1 >> 24) & 255)))"; }
pcap_hdr() { printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00'; le32 0; le32 0; le32 "$1"; le32 1; }
rec_hdr() { le32 1; le32 0; le32 "$1"; le32 "$2"; } # caplen, wire length
frame() { head -c "$1" /dev/zero | tr '\0' '\125'; } # N bytes of 0x55
{ pcap_hdr 65535; rec_hdr 60 60; frame 60; rec_hdr 60 60; frame 60; } >"$T/good.pcap"
{ pcap_hdr 65535; rec_hdr 60 60; frame 60; rec_hdr 60 60; frame 20; } >"$T/truncated.pcap"
{ pcap_hdr 1000; rec_hdr 60 60; frame 60; rec_hdr 2000 2000; frame 2000; } >"$T/over-snaplen.pcap"
{ pcap_hdr 65535; rec_hdr 60 60; frame 60; rec_hdr 70000 70000; frame 70000; } >"$T/over-65535.pcap"
{ pcap_hdr 65535; rec_hdr 300000 300000; frame 64; } >"$T/huge.pcap"
serve_pcap() { # want text pcap [extra args]
	local want=$1 text=$2 f=$3
	shift 3
	rm -f "$T/seq.state"*
	run "$want" "$text" serve --pcap-in "$f" --mac "$MAC" --ip 192.0.2.2 --key "$key" \
		--state "$T/seq.state" "$@"
}

group "strict numbers, MACs and lists (every command)"
for id in " 7" "+7" "7 " "0x7" "-0" ""; do
	run 2 "--key-id" keygen --key-id "$id" --out "$T/k2"
done
[ ! -e "$T/k2" ]
check $? "no key file written for a refused --key-id"
for mac in " 2: 2: 3: 4: 5: 6" "02:00:00:00:00:0g" "2:0:0:0:0:2" "02:00:00:00:00:02:" \
	"02-00-00-00-00-02" "+2:00:00:00:00:02"; do
	run 2 "--mac" serve --pcap-in "$T/good.pcap" --mac "$mac" --ip 192.0.2.2 --key "$key"
	run 2 "--dst-mac" host paired --key "$key" --iface lo --dst-mac "$mac"
done
run 2 "--dst-mac" dashboard --iface lo --host-iface lo --dst-mac " 2: 2: 3: 4: 5: 6"
for v in " 1500" "+1500" "1500 " "0x5dc"; do
	run 2 "--mtu" serve --pcap-in "$T/good.pcap" --mac "$MAC" --ip 192.0.2.2 --key "$key" --mtu "$v"
	run 2 "--mtu" host paired --key "$key" --mtu "$v"
done
for v in "4000, 4001,4002" "4000,4001" "4000,,4001,4002" "4000,4001,4002," " 4000,4001,4002" \
	"4000,4001,+4002"; do
	run 2 "--ports" serve --pcap-in "$T/good.pcap" --mac "$MAC" --ip 192.0.2.2 --key "$key" --ports "$v"
done
for v in " 2" "inf" "nan" "0x1p1" "1e"; do
	run 2 "--report-rate" serve --pcap-in "$T/good.pcap" --mac "$MAC" --ip 192.0.2.2 --key "$key" --report-rate "$v"
	run 2 "--seconds" speed --seconds "$v"
done
for v in "1,,2" ",16" "16," "," "16, 64" "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17"; do
	run 2 "--sizes" speed --sizes "$v"
done
run 2 "--mode" speed --mode "gcm,,cbc"
run 2 "port" host paired --key "$key" --port-stream " 4000"
# the three ports select the engines: two alike are refused, whichever two
run 2 "different ports" host paired --key "$key" --port-stream 4001
run 2 "different ports" host counters --key "$key" --port-counters 4000
run 2 "different ports" host load --key "$key" --port-offload 4002
run 2 "--listen" dashboard --listen "127.0.0.1: 8765"
end_group

group "key and state files that are FIFOs: refused at once"
mkfifo "$T/fifo"
serve_pcap 2 "not a regular file" "$T/good.pcap" --key "$T/fifo"
rm -f "$T/seq.state"*
mkfifo "$T/seq.state"
run 2 "not a regular file" serve --pcap-in "$T/good.pcap" --mac "$MAC" --ip 192.0.2.2 \
	--key "$key" --state "$T/seq.state" --quiet
rm -f "$T/seq.state"*
run 2 "not a regular file" host counters --key "$T/fifo" --dst-ip 127.0.0.1 --timeout 20
run 2 "not a regular file" host paired --key "$T/fifo" --dst-ip 127.0.0.1 --timeout 20
end_group

group "a key file given as a symbolic link: refused, saying links are refused"
ln -s "$key" "$T/key.link"
run 2 "is a symbolic link" host counters --key "$T/key.link" --dst-ip 127.0.0.1 --timeout 20
serve_pcap 2 "links are refused" "$T/good.pcap" --key "$T/key.link"
end_group

group "corrupt captures: an input error (exit 1), not a drop"
serve_pcap 0 "" "$T/good.pcap"
grep -q 'kernel drops 0' "$T/out"
check $? "sound capture: no drops ($(grep -o 'kernel drops [0-9]*' "$T/out"))"
serve_pcap 1 "record 2: truncated dump file" "$T/truncated.pcap"
serve_pcap 1 "record 2: captured length 2000 bytes, more than the file's snapshot length 1000" \
	"$T/over-snaplen.pcap"
serve_pcap 1 "record 2: captured length 70000 bytes, more than the file's snapshot length 65535" \
	"$T/over-65535.pcap"
serve_pcap 1 "record 1: invalid packet capture length 300000" "$T/huge.pcap"
serve_pcap 1 "the file is corrupt" "$T/truncated.pcap"
grep -q 'frames    rx 1 ' "$T/out"
check $? "the frame before the bad record was read ($(grep -o 'rx [0-9]*' "$T/out" | head -1))"
end_group
[ "$g_failed" -eq 0 ]
