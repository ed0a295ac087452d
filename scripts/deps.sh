#!/usr/bin/env bash
# Install the Debian packages secho needs, only those missing.
# Idempotent; prints nothing when everything is already present.
# Usage: scripts/deps.sh [build|test|demo]   (all install the same set today)
set -euo pipefail

PKGS=(
  build-essential pkg-config
  clang clang-tidy cppcheck clang-format libclang-rt-14-dev   # analysers, fuzzing, sanitizers
  libssl-dev          # OpenSSL EVP: speed peer, offload backend, test oracle
  libipsec-mb-dev     # Intel ipsec-mb: speed peer, offload backend
  nettle-dev          # nettle: the host tool's independent AES-GCM oracle
  libpcap-dev         # pcap I/O backend
  libxdp-dev libbpf-dev  # AF_XDP I/O backend; the flow offload tier's XDP program
  bpftool             # the build turns BPF objects into libbpf skeletons (clang builds them)
  libjansson-dev      # JSON (tests, host tool, dashboard)
  libxxhash-dev       # xxHash: the flow table's key hash
  tcpreplay           # flow meter live test: a capture replayed onto a veth
  libmicrohttpd-dev   # dashboard HTTP server
  iproute2 ethtool    # network namespaces and veth for tests and demo
  openssl jq xxd      # command-line tests: openssl enc oracle and the provider's programs, JSON, hex
  curl                # dashboard API test, provider TLS test
  tshark              # flow tests: packet sizes of generated captures, IPFIX decoding
  nfdump              # flow tests: nfcapd, the IPFIX collector the export is checked against
  libfixbuf-dev       # bench/ipfix_encode (measured beside ours), tests/tools/ipfix_fixbuf (reads the export)
  python3-cryptography  # provider test: Debian's cryptography (AESGCM) through OPENSSL_CONF
  python3-scapy       # flow encapsulation tests: MPLS, PPPoE... captures built by an independent tool
  ngtcp2-client ngtcp2-server  # quic feature test: a real QUIC client and server (gtlsclient, gtlsserver)
  dnsmasq-base bind9-dnsutils  # dns feature test: a local resolver (dnsmasq) and its client (dig)
  nodejs npm chromium # dashboard browser test (playwright-core from npm drives chromium)
)

missing=()
for p in "${PKGS[@]}"; do
  # A nodejs build that bundles npm (NodeSource's) conflicts with Debian's npm package.
  [ "$p" = npm ] && command -v npm >/dev/null && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing packages: ${missing[*]}; run as root or install them with apt-get" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp /tmp/secho-deps.XXXXXX)
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "deps: apt-get failed (log above)" >&2
  exit 1
fi
rm -f "$log"
