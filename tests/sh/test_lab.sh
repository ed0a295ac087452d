#!/usr/bin/env bash
# tests/sh/test_lab.sh - `secho lab`, the one virtual wire (src/lab/lab.h):
#   1. up: both namespaces, the veth ends with their MACs, MTU 1500, one queue each, the
#      host address and permanent neighbour entry, IPv6 and tx checksum offload off, no
#      address on the endpoint side; a second up of the same lab is refused (exit 1);
#      --mtu and --queues shape a second lab;
#   2. run: the program runs in the namespace asked for, keeps the pid (its parent's $!),
#      and gets SIGTERM when the script that started it is killed (SIGKILL);
#   3. sweep: the lab of an owner that no longer runs is removed (by `sweep` and by the
#      next `up`), a live owner's is left alone;
#   4. down removes everything; bad arguments exit 2 with one line.
# Names carry this shell's PID (tag "s" and "t"); every lab is removed on exit (trap).
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/sh/netns.sh
. "$ROOT/tests/sh/netns.sh"
S=$SECHO_LAB
CASES="up run death-signal sweep down usage"
if why=$(netns_unavailable); then
	for c in $CASES; do echo "UNAVAILABLE lab $c: $why"; done
	exit 0
fi
T=$(mktemp -d /tmp/secho-lab-test.XXXXXX)
OWNER= # a stand-in owner that we kill
cleanup() {
	[ -n "$OWNER" ] && kill -9 "$OWNER" 2>/dev/null
	"$S" lab down --id $$ --tag t 2>/dev/null
	"$S" lab down --id $(($$ + 1000000)) --tag t 2>/dev/null
	netns_cleanup
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fails=0
check() { # description, shell condition (one string, evaluated)
	if eval "$2"; then :; else echo "  failed: $1"; fails=$((fails + 1)); fi
}
verdict() { # case name
	if [ "$fails" -eq 0 ]; then echo "PASS lab $1"; else echo "FAIL lab $1 ($fails checks)"; fi
	fails=0
}

# ---- 1. up
netns_setup || { echo "FAIL lab up: secho lab up failed"; exit 1; }
check "namespaces $NS_H $NS_E" 'ip netns list | grep -qw "$NS_H" && ip netns list | grep -qw "$NS_E"'
hl=$(ip -n "$NS_H" -o link show "$IF_H")
el=$(ip -n "$NS_E" -o link show "$IF_E")
check "host end up, MAC, MTU 1500: $hl" '[[ $hl == *LOWER_UP* && $hl == *"mtu 1500 "* && $hl == *"$MAC_H"* ]]'
check "endpoint end up, MAC, MTU 1500: $el" '[[ $el == *LOWER_UP* && $el == *"mtu 1500 "* && $el == *"$MAC_E"* ]]'
check "host address" 'ip -n "$NS_H" -o addr show dev "$IF_H" | grep -q "inet $IP_H/24"'
check "no address on the endpoint side" '! ip -n "$NS_E" -o addr show dev "$IF_E" | grep -q inet'
check "permanent neighbour" 'ip -n "$NS_H" neigh show "$IP_E" | grep -q "$MAC_E PERMANENT"'
for side in h e; do
	ifn=$([ $side = h ] && echo "$IF_H" || echo "$IF_E")
	check "IPv6 off ($side)" '[ "$("in_$side" cat /proc/sys/net/ipv6/conf/all/disable_ipv6)" = 1 ]'
	check "tx checksum offload off ($side)" '"in_$side" ethtool -k "$ifn" | grep -q "^tx-checksumming: off"'
	check "one rx queue ($side)" '[ "$("in_$side" ls "/sys/class/net/$ifn/queues" | grep -c rx-)" = 1 ]'
done
"$S" lab up --id $$ --tag s --owner $$ 2>"$T/again.err"
rc=$?
check "a second up is refused with exit 1 ($rc: $(cat "$T/again.err"))" '[ "$rc" -eq 1 ] && [ "$(wc -l <"$T/again.err")" -eq 1 ]'
eval "$("$S" lab env --id $$ --tag t | sed 's/^/T_/')"
"$S" lab up --id $$ --tag t --owner $$ --mtu 9000 --queues 2 ||
	check "up --mtu 9000 --queues 2" false
check "--mtu 9000" 'ip -n "$T_NS_E" -o link show "$T_IF_E" | grep -q "mtu 9000 "'
check "--queues 2" '[ "$("$S" lab run --id $$ --tag t endpoint ls "/sys/class/net/$T_IF_E/queues" | grep -c rx-)" = 2 ]'
verdict up

# ---- 2. run
out=$(in_e ip -o link show)
check "run endpoint: sees $IF_E, not $IF_H" '[[ $out == *"$IF_E"* && $out != *"$IF_H@"* ]]'
"${LAB_RUN[@]}" endpoint sh -c 'echo $$ >"$1"; exec sleep 30' sh "$T/pid" &
job=$!
for _ in $(seq 1 50); do [ -s "$T/pid" ] && break; sleep 0.1; done
check "run keeps the pid (\$! $job, the program's $(cat "$T/pid" 2>/dev/null))" '[ "$(cat "$T/pid" 2>/dev/null)" = "$job" ]'
kill "$job" 2>/dev/null
wait "$job" 2>/dev/null
"$S" lab run --id $$ --tag s nowhere true 2>/dev/null
check "run: a side that is neither host nor endpoint is refused (exit 2)" '[ $? -eq 2 ]'
verdict run

# ---- 2b. the death signal: a script started a program in the lab and was killed.
rm -f "$T/pid"
bash -c '"$@" endpoint sh -c "echo \$\$ >$0; exec sleep 30" & wait' "$T/pid" "${LAB_RUN[@]}" &
script=$!
for _ in $(seq 1 50); do [ -s "$T/pid" ] && break; sleep 0.1; done
prog=$(cat "$T/pid" 2>/dev/null)
check "the program started" '[ -n "$prog" ] && kill -0 "$prog" 2>/dev/null'
{
	kill -9 "$script"
	wait "$script"
} 2>/dev/null # killed on purpose: no "Killed" notice
gone=no
for _ in $(seq 1 30); do
	kill -0 "$prog" 2>/dev/null || { gone=yes; break; }
	sleep 0.1
done
check "the program died with its script (within 3 s)" '[ "$gone" = yes ]'
[ "$gone" = yes ] || kill -9 "$prog" 2>/dev/null
verdict death-signal

# ---- 3. sweep: an owner that is gone, one that runs.
sleep 60 &
OWNER=$!
id2=$(($$ + 1000000))
"$S" lab up --id "$id2" --tag t --owner "$OWNER" || check "up for a stand-in owner" false
"$S" lab sweep >"$T/sweep1" 2>&1
check "a live owner's lab is left alone" 'ip netns list | grep -qw "secho-th-$id2"'
check "and the caller's own ($T_NS_H)" 'ip netns list | grep -qw "$T_NS_H"'
{
	kill -9 "$OWNER"
	wait "$OWNER"
} 2>/dev/null
OWNER=
"$S" lab sweep >"$T/sweep2" 2>&1
check "a dead owner's lab is swept: $(tr '\n' ' ' <"$T/sweep2")" '! ip netns list | grep -qw "secho-th-$id2" && ! ip netns list | grep -qw "secho-te-$id2"'
check "the sweep says which" 'grep -q "removed the lab secho-th-$id2 secho-te-$id2" "$T/sweep2"'
check "its mark is gone" '[ ! -e "/run/secho-lab/secho-th-$id2" ]'
# The next `up` sweeps too.
sleep 60 &
OWNER=$!
"$S" lab up --id "$id2" --tag t --owner "$OWNER" || check "up for a stand-in owner (2)" false
{
	kill -9 "$OWNER"
	wait "$OWNER"
} 2>/dev/null
OWNER=
"$S" lab down --id $$ --tag t
"$S" lab up --id $$ --tag t --owner $$ 2>"$T/up.err" || check "up again" false
check "up removed a dead owner's lab first" '! ip netns list | grep -qw "secho-th-$id2"'
verdict sweep

# ---- 4. down
"${LAB_RUN[@]}" endpoint sleep 30 &
sleeper=$!
for _ in $(seq 1 50); do ip netns pids "$NS_E" | grep -qx "$sleeper" && break; sleep 0.1; done
netns_cleanup
check "down: namespaces gone" '! ip netns list | grep -qw "$NS_H" && ! ip netns list | grep -qw "$NS_E"'
check "down: mark gone" '[ ! -e "/run/secho-lab/$NS_H" ]'
stopped=no
for _ in $(seq 1 30); do # bounded: it was signalled already, the wait only reaps it
	jobs -rp | grep -qx "$sleeper" || { stopped=yes; break; }
	sleep 0.1
done
check "down: what ran in it was stopped" '[ "$stopped" = yes ]'
{
	kill -9 "$sleeper"
	wait "$sleeper"
} 2>/dev/null
netns_cleanup
check "down twice is fine" '[ $? -eq 0 ]'
verdict down

# ---- usage: one line, exit 2
for args in "" "bogus" "up --mtu 100" "up --mtu 9001" "up --queues 0" "up --id x" "up --tag AB" \
	"up --tag abcd" "down --mtu 1500" "env extra" "run --id 1 host" "sweep extra" "up --nope"; do
	# shellcheck disable=SC2086
	"$S" lab $args >/dev/null 2>"$T/err"
	rc=$?
	check "'secho lab $args': exit 2 and one line (got $rc, $(wc -l <"$T/err") lines)" \
		'[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ]'
done
"$S" lab --help | grep -q "secho lab up"
check "--help" '[ $? -eq 0 ]'
verdict usage
