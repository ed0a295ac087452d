#!/usr/bin/env bash
# bench/replay_bench.sh - how fast a capture goes onto a veth pair: `secho flow replay`
# (sendmmsg and TX ring) beside tcpreplay (Debian), flat out, in one run.
#
#   bench/replay_bench.sh [PACKETS] [ROUNDS]     (defaults 100000 and 3)
#
# For each of the generator's nix and geant profiles (PACKETS packets, seed 1, written once
# to a temporary directory) and each round, the three senders take turns sending the file
# twice from one namespace to a veth peer in another (nothing attached on the receiving
# end: the kernel drops the frames after its packet taps). Prints frames per second per
# sender and round, the median, and the ratio of each to tcpreplay's median.
# Run it under `flock /tmp/secho-bench.lock`. Needs root (namespaces).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S=${SECHO_BIN:-$ROOT/${BUILD:-build}/secho}
PACKETS=${1:-100000}
ROUNDS=${2:-3}
command -v tcpreplay >/dev/null || { echo "replay_bench: tcpreplay not installed"; exit 1; }
[ -x "$S" ] || { echo "replay_bench: $S not built"; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "replay_bench: needs root"; exit 1; }

A=secho-rb-a-$$ B=secho-rb-b-$$ T=$(mktemp -d /tmp/secho-replay-bench.XXXXXX)
cleanup() {
	ip netns del "$A" 2>/dev/null
	ip netns del "$B" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
ip netns add "$A" && ip netns add "$B" &&
	ip link add rba$$ numtxqueues 1 numrxqueues 1 netns "$A" type veth peer name rbb$$ \
		numtxqueues 1 numrxqueues 1 netns "$B" || exit 1
for n in "$A" "$B"; do
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
done
ip netns exec "$A" ip link set rba$$ mtu 9100 up
ip netns exec "$B" ip link set rbb$$ mtu 9100 up
sleep 0.5

median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
	"family $(grep -m1 'cpu family' /proc/cpuinfo | awk '{print $NF}')" \
	"model $(grep -m1 '^model\s' /proc/cpuinfo | awk '{print $NF}'); shared machine," \
	"load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-7s %-20s %s\n' profile sender "frames/s per round ... median (ratio to tcpreplay)"
for p in nix geant; do
	"$S" flow gen --profile "$p" --packets "$PACKETS" --seed 1 -o "$T/$p.pcap" -q || exit 1
	: >"$T/secho-sendmmsg" && : >"$T/secho-ring" && : >"$T/tcpreplay"
	for _ in $(seq 1 "$ROUNDS"); do
		for mode in sendmmsg ring; do
			ip netns exec "$A" "$S" flow replay --iface rba$$ --pcap "$T/$p.pcap" --loop 2 \
				--tx "$mode" --seconds 120 --json |
				sed -n 's/.*"pps":\([0-9]*\).*/\1/p' >>"$T/secho-$mode"
		done
		ip netns exec "$A" tcpreplay -q -i rba$$ --topspeed --loop 2 "$T/$p.pcap" 2>&1 |
			sed -n 's/.*Rated: .* \([0-9.]*\) pps.*/\1/p' | cut -d. -f1 >>"$T/tcpreplay"
	done
	ref=$(median <"$T/tcpreplay")
	for s in secho-sendmmsg secho-ring tcpreplay; do
		m=$(median <"$T/$s")
		printf '%-7s %-20s %s ... %s (%.2fx)\n' "$p" "$s" "$(tr '\n' ' ' <"$T/$s")" "$m" \
			"$(awk -v a="$m" -v b="$ref" 'BEGIN {print (b > 0) ? a / b : 0}')"
	done
done
