#!/usr/bin/env bash
# scripts/demo.sh - the main job, run by `make demo` after the build:
#
#   1. the crypto self-test and a short speed table (ours beside OpenSSL and ipsec-mb);
#   2. a virtual wire (`secho lab`, through tests/sh/netns.sh: the one the tests and the
#      dashboard use): two network namespaces joined by a veth pair (host 192.0.2.1/24,
#      endpoint 192.0.2.2), a fresh key, `secho serve` on the endpoint side (it gets SIGTERM
#      should this script die);
#   3. the paired run (500 packets per path, every response verified against nettle's
#      AES-256-GCM) and the seed-style report: per path sent/verified, host RTT, endpoint
#      latency in ns and TSC cycles, headroom, the offload/streaming ratio;
#   4. a short load run per path; then everything is removed and it exits 0.
# Traffic stays inside the namespaces it creates.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
S="$ROOT/$BUILD/secho"

echo "== secho selftest"
"$S" selftest || exit 1
echo
echo "== secho speed --quick (AES-256-GCM and every mode: ours beside OpenSSL EVP and ipsec-mb)"
"$S" speed --quick || exit 1
echo

# shellcheck source=tests/sh/netns.sh
. "$ROOT/tests/sh/netns.sh"
if why=$(netns_unavailable); then
	echo "demo: the virtual wire needs $why; stopping after the crypto part" >&2
	exit 1
fi
D=$(mktemp -d /tmp/secho-demo.XXXXXX)
EP=
cleanup() {
	[ -n "$EP" ] && kill -TERM "$EP" 2>/dev/null && wait "$EP" 2>/dev/null
	netns_cleanup
	rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
echo "== virtual wire: $NS_H ($IP_H, $IF_H) <== veth ==> $NS_E ($IP_E, $IF_E)"
netns_setup || exit 1
"$S" keygen --key-id 1 --out "$D/key" || exit 1
serve_start endpoint "$D/serve.log" --iface "$IF_E" --ip "$IP_E/24" --key "$D/key" \
	--state "$D/seq.state" || { cat "$D/serve.log"; exit 1; }
EP=$SERVE_PID
sed 's/^/  /' "$D/serve.log"
host() {
	local sub=$1
	shift
	in_h "$S" host "$sub" --key "$D/key" --iface "$IF_H" --dst-mac "$MAC_E" --src-ip "$IP_H" \
		--dst-ip "$IP_E" "$@"
}
echo
echo "== secho host paired --count 500 (raw AF_PACKET; nettle is the independent oracle)"
host paired --count 500 --quiet || { echo "demo: the paired run failed" >&2; exit 1; }
echo
echo "== secho host load: 3 s per path, flat out, every answer verified"
for p in stream offload; do
	host load --path "$p" --seconds 3 --max-loss 1000000000 --quiet ||
		{ echo "demo: the load run ($p) failed verification" >&2; exit 1; }
done
echo
echo "== endpoint summary (SIGTERM: queues drained, sequence state flushed)"
kill -TERM "$EP" && wait "$EP"
EP=
sed -n '/summary/,$p' "$D/serve.log" | sed 's/^/  /'
echo
echo "demo: done; namespaces removed."
