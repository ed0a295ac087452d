#!/usr/bin/env bash
# tests/sh/netns.sh - shared helpers: the two-namespace veth topology for network tests.
# Source it, then:   netns_setup || exit;  trap netns_cleanup EXIT
#
#   +--------------------------- ns $NS_H (host) -----+     +---- ns $NS_E (endpoint) ------+
#   |  udp_load, UDP sockets                          |     |  secho / bare_echo             |
#   |  $IF_H  192.0.2.1/24  02:00:00:00:00:01         |=====|  $IF_E  02:00:00:00:00:02      |
#   |  neigh 192.0.2.2 -> 02:00:00:00:00:02 permanent |veth |  no address: the endpoint      |
#   +-------------------------------------------------+     |  answers for 192.0.2.2 itself  |
#                                                           +--------------------------------+
# Both ends: one RX and one TX queue (an AF_XDP socket sees only its own queue), tx
# checksum offload off (so UDP checksums are filled in the frames on the wire), IPv6 off
# (no ND/MLD noise). 192.0.2.2 is deliberately not configured in $NS_E: like the FPGA
# endpoint there is no IP stack or ARP there, and the kernel must not answer (ICMP port
# unreachable) for the program that owns the interface. Traffic never leaves the pair.
#
# Names carry the PID of the sourcing shell so concurrent tests do not collide.

NS_H="secho-h-$$"
NS_E="secho-e-$$"
IF_H="sh$$"
IF_E="se$$"
IP_H=192.0.2.1
IP_E=192.0.2.2
MAC_H=02:00:00:00:00:01
MAC_E=02:00:00:00:00:02

# Run a command in the host or endpoint namespace.
in_h() { ip netns exec "$NS_H" "$@"; }
in_e() { ip netns exec "$NS_E" "$@"; }

# Why the topology cannot be built here, or nothing if it can. Prints the reason.
netns_unavailable() {
	if [ "$(id -u)" -ne 0 ]; then echo "needs root (network namespaces)"; return 0; fi
	command -v ip >/dev/null || { echo "iproute2 (ip) not installed"; return 0; }
	command -v ethtool >/dev/null || { echo "ethtool not installed"; return 0; }
	return 1
}

# Create both namespaces and the veth pair. Returns non-zero (after cleaning up) on error.
netns_setup() {
	local q
	ip netns add "$NS_H" || return 1
	ip netns add "$NS_E" || { netns_cleanup; return 1; }
	{
		ip link add "$IF_H" netns "$NS_H" numtxqueues 1 numrxqueues 1 type veth \
			peer name "$IF_E" netns "$NS_E" numtxqueues 1 numrxqueues 1 &&
		in_h ip link set dev "$IF_H" address "$MAC_H" &&
		in_e ip link set dev "$IF_E" address "$MAC_E" &&
		for q in h e; do
			"in_$q" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 &&
			"in_$q" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 || return 1
		done &&
		in_h ethtool -K "$IF_H" tx off >/dev/null 2>&1 &&
		in_e ethtool -K "$IF_E" tx off >/dev/null 2>&1 &&
		in_h ip addr add "$IP_H/24" dev "$IF_H" &&
		in_h ip link set dev lo up &&
		in_e ip link set dev lo up &&
		in_h ip link set dev "$IF_H" up &&
		in_e ip link set dev "$IF_E" up &&
		in_h ip neigh replace "$IP_E" lladdr "$MAC_E" dev "$IF_H" nud permanent
	} || { echo "netns_setup failed" >&2; netns_cleanup; return 1; }
	# Wait (bounded) for the carrier on both ends.
	for q in $(seq 1 50); do
		in_h ip link show "$IF_H" | grep -q 'LOWER_UP' &&
			in_e ip link show "$IF_E" | grep -q 'LOWER_UP' && return 0
		sleep 0.1
	done
	echo "netns_setup: link did not come up" >&2
	netns_cleanup
	return 1
}

# Kill what still runs in the namespaces, then delete them (the veth pair goes with them).
# Safe to call twice and on a partial setup.
netns_cleanup() {
	local ns pids
	for ns in "$NS_E" "$NS_H"; do
		ip netns list 2>/dev/null | grep -qw "$ns" || continue
		pids=$(ip netns pids "$ns" 2>/dev/null)
		# shellcheck disable=SC2086
		[ -n "$pids" ] && kill $pids 2>/dev/null
	done
	for ns in "$NS_E" "$NS_H"; do
		ip netns list 2>/dev/null | grep -qw "$ns" || continue
		pids=$(ip netns pids "$ns" 2>/dev/null)
		# shellcheck disable=SC2086
		[ -n "$pids" ] && { sleep 0.2; kill -9 $pids 2>/dev/null; }
		ip netns del "$ns" 2>/dev/null
	done
	return 0
}
