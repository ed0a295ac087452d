#!/usr/bin/env bash
# tests/sh/test_flow_lag.sh - a live meter that falls behind its ring must not split flows
# (docs/FLOW.md, "Time": timeouts follow packet time; the wall clock moves a table's clock
# only when its rings were found empty).
#
#   +-------- ns $NS_H ---------+        +-------- ns $NS_E ----------------------+
#   |  tcpreplay -> $IF_H       |========|  $IF_E  <- secho flow --iface $IF_E    |
#   +---------------------------+  veth  +-----------------------------------------+
#   (tests/sh/netns.sh; the replayed traffic is 198.18.0.0/15 and never leaves the pair)
#
# The capture: frame X (UDP 198.18.0.1:1111 -> 198.19.0.1:2222), 300,000 other flows,
# then X again, replayed flat out into `secho flow --io packet --inactive 3` while the
# meter is stopped (SIGSTOP) for 4.5 s: everything waits in the ring (about 100 MiB of its
# 256), X's two frames less than 3 s apart (checked), and when the meter goes on the wall
# clock is more than 3 s past the first X, while reading the backlog takes longer than the
# 100 ms between two looks at the wall clock. X must come out as one record of 2 packets,
# and nothing dropped. Bounded: the replay 30 s, the meter's stop 10 s; the namespaces go
# in any case.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
S=${SECHO_BIN:-$ROOT/build/secho}
# shellcheck source=tests/sh/netns.sh
. "$ROOT/tests/sh/netns.sh"
# shellcheck source=tests/sh/flow_lib.bash
. "$ROOT/tests/sh/flow_lib.bash"

name="flow lag: a meter stopped 4.5 s behind its ring keeps X's flow whole"
if why=$(netns_unavailable); then
	echo "UNAVAILABLE $name: $why"
	exit 0
fi
# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"
need_tools "flow lag" tcpreplay jq perl || exit 1
[ -x "$S" ] || { echo "FAIL flow lag: $S not built"; exit 1; }

T=$(mktemp -d /tmp/secho-flow-lag.XXXXXX)
MP=
cleanup() {
	[ -n "$MP" ] && kill -CONT "$MP" 2>/dev/null && kill -9 "$MP" 2>/dev/null
	netns_cleanup
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
netns_setup || { echo "FAIL flow lag: cannot build the veth topology"; exit 1; }

# the capture (classic pcap; replayed flat out, its times do not matter): X, 300,000 flows
# (source ports and addresses varied), X
perl -e '
	my $t0 = 1767225600;
	my $eth = pack("H*", "0200000000020200000000010800");
	sub udp { pack("H*", "45000020000040004011") . pack("n", 0) .
		pack("H*", "c61200") . pack("C", 1 + ($_[1] // 0)) . pack("H*", "c6130001") .
		pack("n", $_[0]) . pack("H*", "08ae000c000061626364") }
	sub rec { my ($us, $f) = @_; my $n = length($f) + 14;
		pack("VVVV", $t0 + int($us / 1e6), $us % 1000000, $n, $n) . $eth . $f }
	print pack("VvvVVVV", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1);
	print rec(0, udp(1111));
	print rec(1 + $_, udp(2000 + $_ % 60000, $_ / 60000)) for 0 .. 299999;
	print rec(400000, udp(1111));
' >"$T/lag.pcap" || { echo "FAIL flow lag: the capture"; exit 1; }

group "$name"
ip netns exec "$NS_E" "$S" flow --iface "$IF_E" --io packet --ring 256 --inactive 3 \
	--json "$T/lag.json" --json-stats >"$T/lag.out" 2>"$T/lag.err" &
MP=$!
for _ in $(seq 1 300); do # the table made resident first: up to seconds
	grep -q '^secho flow: metering' "$T/lag.out" 2>/dev/null && break
	kill -0 "$MP" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q '^secho flow: metering' "$T/lag.out"; then
	check 1 "the meter did not start: $(head -2 "$T/lag.err")"
else
	sleep 0.5
	kill -STOP "$MP"
	t0=$(date +%s%N)
	in_h timeout 30 tcpreplay --topspeed -i "$IF_H" "$T/lag.pcap" >"$T/replay.log" 2>&1
	rrc=$?
	# stopped 4.5 s in all, the replay included
	left=$((4500 - ($(date +%s%N) - t0) / 1000000))
	[ "$left" -gt 0 ] && sleep "$(printf '%d.%03d' $((left / 1000)) $((left % 1000)))"
	kill -CONT "$MP"
	sleep 3 # it reads what waited, then sees nothing more
	meter_stop 10
	check $rrc "tcpreplay: $(tail -2 "$T/replay.log")"
	[ "$mrc" -eq 0 ]
	check $? "the meter: exit $mrc, $(head -2 "$T/lag.err")"
	x=$(grep '"sport":1111,"dport":2222,' "$T/lag.json")
	[ "$(printf '%s\n' "$x" | grep -c .)" -eq 1 ] && [[ "$x" == *'"packets":2,'* ]]
	check $? "X: $(printf '%s\n' "$x" | grep -c .) records: $(printf '%s\n' "$x" | cut -c1-60,150-290 | tr '\n' ' ')"
	read -r frames drops <<<"$(grep '^{' "$T/lag.out" | jq -r 'select(.final) | "\(.frames_read) \(.kernel_drops)"')"
	[ "${frames:-0}" -ge 300002 ] && [ "${drops:-1}" -eq 0 ]
	check $? "frames read ${frames:-?} (at least 300002), kernel drops ${drops:-?}"
	# the test's premise: X's frames less than the inactive timeout apart, in the ring
	# when the meter went on (its wall clock then more than 3 s past the first)
	gap=$(printf '%s\n' "$x" | jq -rs '(map(.last_ns) | max) - (map(.first_ns) | min)')
	[ -n "$gap" ] && [ "$gap" -lt 3000000000 ]
	check $? "X's frames ${gap:-?} ns apart: the replay was too slow for this test"
fi
end_group
[ "$g_failed" -eq 0 ]
