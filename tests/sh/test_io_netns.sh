#!/usr/bin/env bash
# tests/sh/test_io_netns.sh - every packet I/O backend answers real frames on a veth pair.
#
# Topology: tests/sh/netns.sh (host ns 192.0.2.1 <-veth-> endpoint ns, 192.0.2.2 answered
# by the program). For each backend, bench/bare_echo runs in the endpoint namespace and
# bench/udp_load in the host namespace sends:
#   1. 300 ping-pong datagrams through a kernel UDP socket (64 B payload),
#   2. 3000 frames of 1440 B payload, 64 in flight, as raw frames through AF_PACKET,
# and checks every reply: all answered, payload unchanged, MAC/IP/port swapped (--grow:
# replies 32 bytes longer, shaped like the endpoint's, built in place where the backend
# can, with IPv4/UDP lengths and checksums checked by udp_load). After the
# echo exits, no XDP program may be left on the interface. Then the AF_XDP close contract:
# the queue can be bound again as soon as close returns (tests/tools/xdp_reopen: close and
# reopen at once, native and generic XDP alternating; the kernel releases a closed socket's
# queue asynchronously). One PASS/FAIL line per backend;
# a backend the kernel cannot provide prints UNAVAILABLE with the reason. Bounded: each
# program runs under timeout, a few seconds per backend.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN="$ROOT/${BUILD:-build}/bench"
# shellcheck source=tests/sh/netns.sh
. "$ROOT/tests/sh/netns.sh"

if why=$(netns_unavailable); then
	for b in packet-v3 packet-v2 packet-v2-sendmmsg xdp-native xdp-skb grow-packet-v3 \
		grow-packet-v3-sendmmsg grow-packet-v2-sendmmsg grow-xdp-native auto xdp-reopen; do
		echo "UNAVAILABLE io $b: $why"
	done
	exit 0
fi
for f in bare_echo udp_load ../tools/xdp_reopen; do
	[ -x "$BIN/$f" ] || { echo "FAIL io: $BIN/$f not built"; exit 1; }
done
TMP=$(mktemp -d /tmp/secho-io-test.XXXXXX)
cleanup() {
	netns_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT
netns_setup || { echo "FAIL io: cannot build the veth topology"; exit 1; }

failed=0
PROBE=$BIN/../tools/feature_probe
[ -x "$PROBE" ] || { echo "FAIL io: $PROBE not built"; exit 1; }
# machine_lacks NAME bare_echo-args...: why the kernel cannot give this backend what it
# needs (AF_XDP, an XDP program in the mode asked for), or nothing when it can. Asked of
# the kernel itself (tests/tools/feature_probe): generic mode on the namespace's lo, native
# mode on the endpoint's own veth end (only a driver offers it; nothing is attached to it
# while this runs).
machine_lacks() {
	local name=$1 out
	shift
	case " $* " in
	*" --xdp-mode native "*) out=$(in_e "$PROBE" xdp "$IF_E" native 2>&1) ;;
	*" --io xdp "*) out=$(in_e "$PROBE" xdp lo 2>&1) ;;
	*) return 1 ;; # AF_PACKET (and auto, which falls back to it): every Linux has it
	esac
	case $? in
	3) echo "$out"; return 0 ;;
	0) return 1 ;;
	*) echo "feature_probe failed: $out" >&2; return 1 ;;
	esac
}
# run_backend NAME bare_echo-args...
run_backend() {
	local name=$1 pid rc i why
	shift
	rm -f "$TMP/ready"
	ip netns exec "$NS_E" timeout -s TERM 20 "$BIN/bare_echo" --iface "$IF_E" --seconds 15 \
		--ready-file "$TMP/ready" "$@" >"$TMP/echo.log" 2>&1 &
	pid=$!
	for i in $(seq 1 50); do
		[ -f "$TMP/ready" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if [ ! -f "$TMP/ready" ]; then
		wait "$pid"
		rc=$?
		why=$(grep -v '^libbpf\|^libxdp' "$TMP/echo.log" | head -1)
		# Skipped only when the kernel itself says it lacks the feature (an AF_PACKET
		# backend never is): a message that merely reads "not supported" is a failure.
		if lacks=$(machine_lacks "$name" "$@"); then
			echo "UNAVAILABLE io $name: the machine lacks it: $lacks (bare_echo: ${why:-exit $rc})"
		else
			echo "FAIL io $name: bare_echo did not start (exit $rc): $why"
			failed=1
		fi
		return
	fi
	local ok=1
	local grow=
	case " $* " in *" --grow "*) grow=--grow ;; esac
	ip netns exec "$NS_H" timeout 10 "$BIN/udp_load" --mode udp --count 300 --window 1 \
		--size 64 --seconds 5 --min-replies 300 $grow >"$TMP/load1.log" 2>&1 || ok=0
	ip netns exec "$NS_H" timeout 10 "$BIN/udp_load" --mode packet --iface "$IF_H" \
		--count 3000 --window 64 --size 1440 --seconds 5 --min-replies 3000 $grow \
		>"$TMP/load2.log" 2>&1 || ok=0
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	[ "$rc" -eq 0 ] || ok=0
	if ip netns exec "$NS_E" ip link show "$IF_E" | grep -q 'prog/xdp'; then
		echo "   XDP program left attached on $IF_E after exit"
		ok=0
	fi
	if [ $ok -eq 1 ]; then
		echo "PASS io $name: $(sed -n 's/^bare_echo: //p' "$TMP/echo.log" | head -1)"
		sed 's/^/   /' "$TMP/load1.log" "$TMP/load2.log" | grep 'sent\|rtt'
	else
		sed 's/^/   /' "$TMP/echo.log" "$TMP/load1.log" "$TMP/load2.log"
		echo "FAIL io $name (bare_echo exit $rc)"
		failed=1
	fi
}

run_backend packet-v3 --io packet --packet-version 3
run_backend packet-v2 --io packet --packet-version 2
run_backend packet-v2-sendmmsg --io packet --packet-version 2 --sendmmsg
run_backend xdp-native --io xdp --xdp-mode native
run_backend xdp-skb --io xdp --xdp-mode skb
# Responses 32 bytes longer than requests, as the endpoint sends: in place (AF_XDP,
# sendmmsg from a V2 ring), from the TX ring, and the out-of-place fallback (V3 sendmmsg).
run_backend grow-packet-v3 --io packet --packet-version 3 --grow
run_backend grow-packet-v3-sendmmsg --io packet --packet-version 3 --sendmmsg --grow
run_backend grow-packet-v2-sendmmsg --io packet --packet-version 2 --sendmmsg --grow
run_backend grow-xdp-native --io xdp --xdp-mode native --grow
# auto must say what it chose and why.
run_backend auto --io auto
if [ -f "$TMP/ready" ] && ! grep -q 'auto: \|AF_XDP zero-copy' "$TMP/ready"; then
	echo "FAIL io auto: description gives no reason: $(cat "$TMP/ready")"
	failed=1
fi
# Close, then reopen the same queue at once, 10 times, native and generic XDP alternating.
out=$(ip netns exec "$NS_E" timeout 30 "$BIN/../tools/xdp_reopen" "$IF_E" alternate 10 2>&1)
rc=$?
if [ "$rc" -eq 0 ]; then
	echo "PASS io xdp-reopen: queue bound again at once after every close ($out)"
elif [ "$rc" -eq 3 ] && lacks=$(machine_lacks xdp-native --io xdp --xdp-mode native); then
	echo "UNAVAILABLE io xdp-reopen: the machine lacks it: $lacks"
else
	echo "FAIL io xdp-reopen: $(echo "$out" | tr '\n' ' ')"
	failed=1
fi
exit $failed
