#!/usr/bin/env bash
# scripts/demo.sh - the main job, run by `make demo` after the build.
# Today: the crypto self-test and a short speed table against OpenSSL and ipsec-mb.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SECHO="$BUILD/secho"

echo "== secho selftest"
"$SECHO" selftest
echo
echo "== secho speed --quick (AES-256-GCM and every mode, ours beside OpenSSL EVP and ipsec-mb)"
"$SECHO" speed --quick
