#!/usr/bin/env bash
# tests/sh/test_host_cli.sh - `secho host` command line: usage, refusals and exit codes.
#
# Loopback only (127.0.0.1, ports nothing listens on), every run bounded by --timeout.
# The full verification paths are covered by build/tests/test_host_verify (fake
# responders over loopback UDP and AF_PACKET on lo). `host --help` is one of the checks:
# a binary without a working `host` command fails.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${SECHO_BIN:-$ROOT/build/secho}
name="host cli: usage, key refusal, destination safety, losses"

if [ ! -x "$BIN" ]; then
	echo "FAIL $name: $BIN not built"
	exit 1
fi
work=$(mktemp -d /tmp/secho-hostcli.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0 checks=0
expect() { # rc description command...
	local want=$1 what=$2
	shift 2
	"$@" >"$work/out" 2>&1
	local rc=$?
	checks=$((checks + 1))
	if [ "$rc" -ne "$want" ]; then
		echo "  $what: exit $rc, want $want"
		sed 's/^/    /' "$work/out" | head -20
		fails=$((fails + 1))
	fi
}
key="$work/ep.key"
{
	echo "secho-key 1"
	echo "key-id 3"
	echo "key 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	echo "salt a1b2c3d4"
} >"$key"
chmod 600 "$key"

expect 0 "paired --help" "$BIN" host paired --help
expect 0 "load --help" "$BIN" host load --help
expect 0 "counters --help" "$BIN" host counters --help
expect 2 "no subcommand" "$BIN" host
expect 2 "unknown subcommand" "$BIN" host nosuch
expect 2 "missing --key" "$BIN" host paired
expect 2 "unknown option" "$BIN" host paired --key "$key" --nosuch
expect 2 "--seconds above 60" "$BIN" host load --key "$key" --seconds 61
expect 2 "--size above MTU-60" "$BIN" host paired --key "$key" --size 1441
expect 2 "--iface without --dst-mac" "$BIN" host paired --key "$key" --iface lo
chmod 644 "$key"
expect 2 "key readable by others" "$BIN" host counters --key "$key" --dst-ip 127.0.0.1
chmod 600 "$key"
expect 2 "destination outside the lab nets" "$BIN" host paired --key "$key" --dst-ip 198.51.100.1
# the ports select the engines: two alike are refused (one line, exit 2)
expect 2 "--port-stream equal to the offload port" "$BIN" host paired --key "$key" \
	--dst-ip 127.0.0.1 --port-stream 4001 --timeout 20
[ "$(wc -l <"$work/out")" -eq 1 ] || { echo "  equal ports: not one line"; fails=$((fails + 1)); }
expect 2 "--port-counters equal to the streaming port" "$BIN" host counters --key "$key" \
	--dst-ip 127.0.0.1 --port-counters 4000 --timeout 20
expect 1 "nobody answers: lost" "$BIN" host paired --key "$key" --dst-ip 127.0.0.1 \
	--port-stream 9 --port-offload 47201 --port-counters 47202 --count 2 --timeout 20 --quiet
grep -q "lost" "$work/out" || { echo "  no 'lost' in the report"; fails=$((fails + 1)); }
expect 0 "losses within --max-loss" "$BIN" host paired --key "$key" --dst-ip 127.0.0.1 \
	--port-stream 9 --port-offload 47201 --port-counters 47202 --count 2 --timeout 20 --quiet \
	--max-loss 4
expect 1 "counters: nobody answers" "$BIN" host counters --key "$key" --dst-ip 127.0.0.1 \
	--port-counters 9 --timeout 20
expect 0 "load json, nobody answers, losses allowed" "$BIN" host load --key "$key" \
	--dst-ip 127.0.0.1 --port-stream 9 --port-offload 47201 --seconds 1 --rate 200 --timeout 20 \
	--max-loss 100000 --json
grep -q '"per_second"' "$work/out" || { echo "  load --json lacks per_second"; fails=$((fails + 1)); }

if [ "$fails" -eq 0 ]; then
	echo "PASS $name ($checks checks)"
else
	echo "FAIL $name ($fails of $checks checks failed)"
	exit 1
fi
