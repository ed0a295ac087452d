#!/usr/bin/env bash
# tests/sh/test_serve_cli.sh - `secho serve` and `secho keygen` options that need no network:
#   - bad values of --seq-window, --instance, --report-rate, --vlan, --mtu: exit 2, one line on
#     stderr naming the option, nothing on stdout;
#   - a key file marked "shared yes" (keygen --shared) without --instance, and --instance
#     with a key that is not shared: refused at start (exit 2, one line saying why);
#   - --help documents every option the code accepts.
# Offline (--pcap-in): the refusals come before any I/O is opened.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
S=${SECHO_BIN:-$ROOT/build/secho}
T=$(mktemp -d /tmp/secho-serve-cli.XXXXXX)
chmod 700 "$T"
trap 'rm -rf "$T"' EXIT

# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"
lines() { wc -l <"$1" | tr -d ' '; }

"$S" keygen --key-id 5 --out "$T/plain.key" >/dev/null &&
	"$S" keygen --key-id 6 --shared --out "$T/shared.key" >"$T/kg.out" ||
	{ echo "FAIL serve cli: keygen"; exit 1; }
OFF=(--pcap-in "$T/none.pcap" --mac 02:00:00:00:00:02 --ip 192.0.2.2 --state "$T/seq.state")

# refused WANT args...: exit 2, exactly one stderr line containing WANT, empty stdout
refused() {
	local want=$1
	shift
	"$S" serve "$@" >"$T/out" 2>"$T/err" </dev/null
	local rc=$?
	[ $rc -eq 2 ] && [ "$(lines "$T/err")" -eq 1 ] && [ ! -s "$T/out" ] &&
		grep -q -- "$want" "$T/err"
	check $? "serve $* -> exit $rc, $(lines "$T/err") stderr lines: $(head -c 200 "$T/err")"
}

group "serve bad option values"
for v in 0 255 4294967297 -1 " 4096" +4096 4k ""; do
	refused "--seq-window" --key "$T/plain.key" "${OFF[@]}" --seq-window "$v"
done
for v in 0 4294967296 -3 " 7" 7x ""; do
	refused "--instance" --key "$T/shared.key" "${OFF[@]}" --instance "$v"
done
for v in 0 -1 1001 abc ""; do
	refused "--report-rate" --key "$T/plain.key" "${OFF[@]}" --report-rate "$v"
done
for v in 575 9001 " 1500" 1500x; do
	refused "--mtu" --key "$T/plain.key" "${OFF[@]}" --mtu "$v"
done
for v in 0 4095 -5 " 5" 5x ""; do
	refused "--vlan" --key "$T/plain.key" "${OFF[@]}" --vlan "$v"
done
end_group

group "shared keys: refused without --instance, --instance refused without a shared key"
grep -qx 'shared yes' "$T/shared.key"
check $? "keygen --shared writes 'shared yes'"
! grep -q '^shared' "$T/plain.key"
check $? "keygen without --shared writes no shared line"
grep -q 'shared' "$T/kg.out"
check $? "keygen --shared says so: $(cat "$T/kg.out")"
refused "key id 6 is shared by several endpoints: give this one its own --instance" \
	--key "$T/shared.key" "${OFF[@]}"
refused "--instance: key id 5 is not marked shared" --key "$T/plain.key" "${OFF[@]}" \
	--instance 3
end_group

group "serve --help documents every option"
"$S" serve --help >"$T/help" 2>&1
for o in --iface --ip --key --mac --state --seq-window --instance --io --offload --mtu --ports \
	--arp --vlan --busy-poll --throughput --queue --xdp-mode --packet-tx --pcap-in --pcap-out \
	--offload-ring --report-rate --seconds --quiet; do
	grep -q -- "  $o" "$T/help"
	check $? "serve --help lacks $o"
done
"$S" keygen --help | grep -q -- '--shared'
check $? "keygen --help lacks --shared"
end_group
exit 0
