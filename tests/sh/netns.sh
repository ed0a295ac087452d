#!/usr/bin/env bash
# tests/sh/netns.sh - shared helpers: the virtual wire for network tests, scripts/demo.sh and
# bench/endpoint_bench.sh. Source it, then:   netns_setup || exit;  trap netns_cleanup EXIT
#
#   +--------------------------- ns $NS_H (host) -----+     +---- ns $NS_E (endpoint) ------+
#   |  udp_load, UDP sockets                          |     |  secho / bare_echo             |
#   |  $IF_H  192.0.2.1/24  02:00:00:00:00:01         |=====|  $IF_E  02:00:00:00:00:02      |
#   |  neigh 192.0.2.2 -> 02:00:00:00:00:02 permanent |veth |  no address: the endpoint      |
#   +-------------------------------------------------+     |  answers for 192.0.2.2 itself  |
#                                                           +--------------------------------+
# The wire is `secho lab` (src/lab/lab.h has its one definition: one RX and one TX queue per
# end, tx checksum offload and IPv6 off, MTU 1500 and why); this file only names it for a
# script. Names carry the PID of the sourcing shell (tag "s": secho-sh-$$, secho-se-$$, sh$$,
# se$$), so concurrent tests do not collide, and the shell is the lab's owner: should it be
# killed before its trap runs, the next `secho lab up` (any test's) or dashboard removes the
# lab. Programs started with in_h/in_e get SIGTERM when the shell that started them dies.

_netns_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ -n "${SECHO_BIN:-}" ]; then
	SECHO_LAB=$SECHO_BIN
else
	case "${BUILD:-build}" in
	/*) SECHO_LAB=${BUILD}/secho ;;
	*) SECHO_LAB=$_netns_root/${BUILD:-build}/secho ;;
	esac
fi
# NS_H NS_E IF_H IF_E IP_H IP_E MAC_H MAC_E LAB_MTU, from the one definition.
if [ -x "$SECHO_LAB" ]; then
	eval "$("$SECHO_LAB" lab env --id $$ --tag s)"
fi

# Run a command in the host or endpoint namespace. In the background, run it as
# "${LAB_RUN[@]}" endpoint PROG ARGS... & so that $! is PROG itself (in_e, a function, would
# run in a subshell of its own).
LAB_RUN=("$SECHO_LAB" lab run --id $$ --tag s)
in_h() { "$SECHO_LAB" lab run --id $$ --tag s host "$@"; }
in_e() { "$SECHO_LAB" lab run --id $$ --tag s endpoint "$@"; }

# running PID: is PID a background job of this shell that still runs? A PID that has exited
# may already belong to another process (PIDs wrap, at 32768 here): never signal it.
running() { jobs -rp | grep -qx "$1"; }
# stop_job PID [SIGNAL]: send SIGNAL (default TERM) to a background job of ours while it
# still runs, SIGKILL after 5 s, and reap it. Bounded; does nothing for an empty PID.
stop_job() {
	local pid=$1
	[ -n "$pid" ] || return 0
	# (stderr of the whole: bash's "Killed" notice for a job killed on purpose comes when
	# the shell reaps it, which may be at any command from the kill to the wait)
	{
		if running "$pid"; then
			kill "-${2:-TERM}" "$pid"
			for _ in $(seq 1 50); do running "$pid" || break; sleep 0.1; done
			running "$pid" && kill -9 "$pid"
		fi
		wait "$pid"
	} 2>/dev/null
	return 0
}

# stop_ep [SIGNAL]: stop the endpoint the test started last, $EP (stop_job: bounded, only
# while it runs), and empty EP. The endpoint tests keep the PID there.
stop_ep() {
	stop_job "$EP" "${1:-TERM}"
	EP=
}

# serve_up LOG PID: wait (bounded: 10 s) until `secho serve` says in LOG that it is up (its
# "secho serve: key id" banner); 1 when PID exited first or time ran out. The caller empties
# LOG before it starts the endpoint: a banner left there by an earlier run would pass for
# this one's.
serve_up() {
	for _ in $(seq 1 100); do
		grep -qs '^secho serve: key id' "$1" && return 0
		running "$2" || return 1
		sleep 0.1
	done
	return 1
}
# serve_start SIDE LOG SERVE-ARGS...: `secho serve SERVE-ARGS` in the namespace SIDE
# (endpoint or host; its $SECHO_LAB), its output in LOG (emptied first), and serve_up.
# SERVE_PID is its PID (a job of this shell; it gets SIGTERM should the shell die). When it
# did not come up (status 1): SERVE_RC is its exit status and SERVE_PID empty when it
# exited, SERVE_RC empty when it still runs (stop it: stop_job).
serve_start() {
	local side=$1 log=$2
	shift 2
	SERVE_RC=
	: >"$log"
	"${LAB_RUN[@]}" "$side" "$SECHO_LAB" serve "$@" >"$log" 2>&1 &
	SERVE_PID=$!
	serve_up "$log" "$SERVE_PID" && return 0
	if ! running "$SERVE_PID"; then
		wait "$SERVE_PID" 2>/dev/null
		SERVE_RC=$?
		SERVE_PID=
	fi
	return 1
}

# Why the topology cannot be built here, or nothing if it can. Prints the reason. (A
# missing ip is not such a reason: scripts/deps.sh installs iproute2, and netns_setup fails.)
netns_unavailable() {
	if [ "$(id -u)" -ne 0 ]; then echo "needs root (network namespaces)"; return 0; fi
	[ -x "$SECHO_LAB" ] || { echo "$SECHO_LAB not built"; return 0; }
	return 1
}

# Create both namespaces and the veth pair, owned by this shell. Extra arguments go to
# `secho lab up` (--mtu N, --queues N). Returns non-zero (after cleaning up) on error.
netns_setup() {
	command -v ip >/dev/null ||
		{ echo "netns_setup: ip not installed (scripts/deps.sh installs iproute2)" >&2; return 1; }
	"$SECHO_LAB" lab up --id $$ --tag s --owner $$ "$@" || { echo "netns_setup failed" >&2; return 1; }
}

# Stop what still runs in the namespaces (SIGTERM, then SIGKILL), then delete them (the
# veth pair goes with them). Safe to call twice and on a partial setup.
netns_cleanup() {
	"$SECHO_LAB" lab down --id $$ --tag s
	return 0
}
