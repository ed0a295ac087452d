#!/usr/bin/env bash
# bench/gcm_bench.sh - the AES-256-GCM comparison as markdown, for docs/PERFORMANCE.md.
#
# Runs `secho speed --mode gcm --repeat 7 --json` (extra arguments are passed on, e.g.
# --impl vaes or --seconds 30) and prints, per packet size: TSC cycles per packet, MB/s
# and speed ratios of ours (single call, batch of 16, batch of 32) against OpenSSL EVP
# and Intel ipsec-mb. Needs jq. Usage: bench/gcm_bench.sh [speed options] > table.md
#
# GCM_BENCH_RUNS=N runs `secho speed` N times (one after the other; wrap the whole script
# in flock): every cell is then the median over the runs, and a last table gives the
# spread (lowest and highest) of the ratio against ipsec-mb. A shared machine moves single
# runs by 5-15%; ratios taken within one run move less than absolute numbers.
# GCM_BENCH_JSON="file ..." formats saved `secho speed --json` outputs (several: as runs)
# instead of measuring.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S=${SECHO_BIN:-$ROOT/${BUILD:-build}/secho}
RUNS=${GCM_BENCH_RUNS:-1}
command -v jq >/dev/null || { echo "gcm_bench: jq is needed (scripts/deps.sh)" >&2; exit 1; }
[[ "$RUNS" =~ ^[1-9][0-9]?$ ]] || { echo "gcm_bench: GCM_BENCH_RUNS must be 1..99" >&2; exit 2; }
[ -n "${GCM_BENCH_JSON:-}" ] || [ -x "$S" ] || { echo "gcm_bench: $S not built" >&2; exit 1; }

if [ -n "${GCM_BENCH_JSON:-}" ]; then
	read -r -a files <<<"$GCM_BENCH_JSON"
	all=$(cat "${files[@]}" | jq -s .)
else
	runs=()
	for ((i = 0; i < RUNS; i++)); do
		runs+=("$("$S" speed --mode gcm --repeat 7 --json "$@")")
	done
	all=$(printf '%s\n' "${runs[@]}" | jq -s .)
fi

# One document: the first run's, every number replaced by its median over the runs
# (the runs have the same rows and sizes: same binary, same options), the ratio against
# ipsec-mb's lowest and highest kept beside it.
json=$(jq '
def med: sort | if length == 0 then null
	elif length % 2 == 1 then .[(length - 1) / 2]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def across($runs; $i; $j; f): [$runs[] | .gcm.rows[$i].results[$j] | f | select(. != null)];
. as $runs
| $runs[0]
| .runs = ($runs | length)
| .gcm.rows |= [to_entries[] | .key as $i | .value
	| .results |= [to_entries[] | .key as $j | .value
		| .cycles_per_packet = (across($runs; $i; $j; .cycles_per_packet) | med)
		| .mbps = (across($runs; $i; $j; .mbps) | med)
		| .ratio_vs_evp = (across($runs; $i; $j; .ratio_vs_evp) | med)
		| .ratio_vs_ipsec_mb_min = (across($runs; $i; $j; .ratio_vs_ipsec_mb) | min)
		| .ratio_vs_ipsec_mb_max = (across($runs; $i; $j; .ratio_vs_ipsec_mb) | max)
		| .ratio_vs_ipsec_mb = (across($runs; $i; $j; .ratio_vs_ipsec_mb) | med)]]
' <<<"$all")

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
"16-byte AAD, new 12-byte IV per packet, 16-byte tag; each cell the median of \(.repeat) repeats\(if .runs > 1 then ", then the median over \(.runs) runs of `secho speed`" else "" end).",
"Machine: \(.machine.cpu)\(if .machine.vendor then " (\(.machine.vendor) family \(.machine.family) model \(.machine.model))" else "" end), TSC \(.machine.tsc_hz / 1e9 * 1000 | floor / 1000) GHz (calibrated against \(.machine.tsc_calibration)); \(.peers.openssl); Intel ipsec-mb \(.peers.ipsec_mb) (\(.peers.ipsec_mb_arch)).",
(if .machine.gcm_auto then "GCM dispatch on this CPU: auto = \(.machine.gcm_auto)\(if .machine.gcm_auto != .machine.gcm_best then " (forced; the CPU'"'"'s best: \(.machine.gcm_best))" else "" end)." else empty end),
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
(if .runs > 1 then "",
	"### Speed ratio ours / ipsec-mb over the \(.runs) runs: median (lowest-highest)",
	"",
	"| ours | " + ($sizes | map("\(.) B") | join(" | ")) + " |",
	"|---|" + ($sizes | map("---:") | join("|")) + "|",
	(($ok[] | select(.kind == "ours")) as $r
	| "| \($r | rowname) | " +
	([$sizes[] as $s | at($r; $s) | cell("\(.ratio_vs_ipsec_mb | num2) (\(.ratio_vs_ipsec_mb_min | num2)-\(.ratio_vs_ipsec_mb_max | num2))")] | join(" | ")) + " |")
	else empty end),
(if ($na | length) > 0 then "",
	($na[] | "Not measured: \(rowname): \(.reason).") else empty end)
' <<<"$json"
