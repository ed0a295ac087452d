#!/usr/bin/env bash
# bench/gcm_bench.sh - the AES-256-GCM comparison as markdown, for docs/PERFORMANCE.md.
#
# Runs `secho speed --mode gcm --repeat 7 --json` (extra arguments are passed on, e.g.
# --impl vaes or --seconds 30) and prints, per packet size: TSC cycles per packet, MB/s
# and speed ratios of ours (single call, batch of 16, batch of 32) against OpenSSL EVP
# and Intel ipsec-mb. Needs jq. Usage: bench/gcm_bench.sh [speed options] > table.md
# GCM_BENCH_JSON=file formats a saved `secho speed --json` output instead of measuring.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S=${SECHO_BIN:-$ROOT/${BUILD:-build}/secho}
command -v jq >/dev/null || { echo "gcm_bench: jq is needed (scripts/deps.sh)" >&2; exit 1; }
[ -n "${GCM_BENCH_JSON:-}" ] || [ -x "$S" ] || { echo "gcm_bench: $S not built" >&2; exit 1; }

if [ -n "${GCM_BENCH_JSON:-}" ]; then
	json=$(<"$GCM_BENCH_JSON")
else
	json=$("$S" speed --mode gcm --repeat 7 --json "$@")
fi

jq -r '
def rowname: if .kind == "ours" then
		"ours " + .impl + (if .batch > 1 then ", batch of \(.batch)" else "" end)
	elif .kind == "openssl-evp" then "OpenSSL EVP (context reused)"
	else "ipsec-mb IMB_AES256_GCM_ENC" end;
def cell(f): if . == null then "-" else f end;
def num0: (. + 0.5 | floor | tostring);
# fixed($d): round to $d decimals and always print them (jq has no printf)
def fixed($d): (pow(10; $d)) as $m | ((. * $m + 0.5) | floor) as $i
	| ($i / $m | floor | tostring) + "."
	+ (($i % $m) | tostring | ("0" * ($d - length)) + .);
def num1: fixed(1);
def num2: fixed(2);
.gcm.sizes as $sizes
| .gcm.rows as $rows
| ([$rows[] | select(.available)]) as $ok
| ([$rows[] | select(.available | not)]) as $na
| def header: "| implementation | " + ($sizes | map("\(.) B") | join(" | ")) + " |",
	"|---|" + ($sizes | map("---:") | join("|")) + "|";
  def at($r; $s): ($r.results | map(select(.size == $s)) | .[0]);
"## AES-256-GCM encrypt, per packet",
"",
"16-byte AAD, new 12-byte IV per packet, 16-byte tag; median of \(.repeat) runs of each cell.",
"Machine: \(.machine.cpu), TSC \(.machine.tsc_hz / 1e9 * 1000 | floor / 1000) GHz (calibrated against \(.machine.tsc_calibration)); \(.peers.openssl); Intel ipsec-mb \(.peers.ipsec_mb) (\(.peers.ipsec_mb_arch)).",
"Cycles are TSC cycles (constant rate), per packet; batch rows divide one `secho_gcm_seal_batch()` call by its packets.",
"",
"### TSC cycles per packet",
"",
header,
($ok[] as $r | "| \($r | rowname) | " +
	([$sizes[] as $s | at($r; $s) | cell(.cycles_per_packet | num0)] | join(" | ")) + " |"),
"",
"### MB/s (10^6 bytes per second)",
"",
header,
($ok[] as $r | "| \($r | rowname) | " +
	([$sizes[] as $s | at($r; $s) | cell(.mbps | num1)] | join(" | ")) + " |"),
"",
"### Speed ratio ours / peer (peer cycles per packet / ours; above 1.00: ours is faster)",
"",
"| ours | peer | " + ($sizes | map("\(.) B") | join(" | ")) + " |",
"|---|---|" + ($sizes | map("---:") | join("|")) + "|",
((["ratio_vs_ipsec_mb", "ipsec-mb"], ["ratio_vs_evp", "OpenSSL EVP"]) as [$key, $peer]
	| ($ok[] | select(.kind == "ours")) as $r
	| "| \($r | rowname) | \($peer) | " +
	([$sizes[] as $s | at($r; $s) | cell(.[$key] | cell(num2))] | join(" | ")) + " |"),
(if ($na | length) > 0 then "",
	($na[] | "Not measured: \(rowname): \(.reason).") else empty end)
' <<<"$json"
