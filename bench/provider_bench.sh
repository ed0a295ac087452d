#!/usr/bin/env bash
# bench/provider_bench.sh - `openssl speed` through the secho provider beside OpenSSL's
# default provider, in ONE run, in seed 002's table form, and `secho speed`'s own figure
# for the same implementation.
#
# For each algorithm (AES-256-GCM, then AES-128/256-ECB and AES-256 CBC, PCBC, CTR, CFB,
# OFB) `openssl speed -evp ALG` runs at its six sizes (16, 64, 256, 1024, 8192 and 16384
# bytes) with "provider=secho" forced, then with "provider=default", alternating, REPEAT
# times; each cell is the median. `openssl speed` sets the key again for every message
# (EVP_CipherInit_ex with key and IV), so at 64 bytes per-message set-up counts.
# The provider options must come BEFORE -evp: after it `openssl speed` silently uses the
# default provider (see docs/PROVIDER.md). Then `secho speed --impl IMPL` (the
# implementation the provider used, from its counters line) measures the library directly,
# and bench/evp_speed runs AES-256-GCM through EVP and each provider again with secho
# speed's timing. Prints markdown (docs/PERFORMANCE.md): the tables, the GCM goals against
# this run by both timing methods.
#
# The numbers are openssl speed's: 1000s of bytes per second of process CPU time (add
# --elapsed for wall-clock time, as seed 002 did). secho speed reports the median of its
# fastest ~25 us bursts, so the ratio of the two also carries that difference of method.
#
# usage: bench/provider_bench.sh [--seconds S] [--repeat N] [--algs LIST] [--elapsed] [--quick]
#   --seconds S  openssl speed -seconds per size (default 1)
#   --repeat N   runs per provider and algorithm; the median is kept (default 3)
#   --algs LIST  comma list of openssl cipher names (default: the list above)
#   --elapsed    wall-clock time instead of CPU time
#   --quick      --seconds 1 --repeat 1, AES-256-GCM only
# Runs under flock /tmp/secho-bench.lock (no two benchmarks overlap). Needs jq.
set -u
usage() { sed -n '2,/^# Runs under/{s/^# \{0,1\}//;p}' "$0"; }
if [ -z "${SECHO_BENCH_LOCKED:-}" ] && [ "${1:-}" != -h ] && [ "${1:-}" != --help ]; then
	export SECHO_BENCH_LOCKED=1 # one benchmark at a time on the shared machine
	exec flock /tmp/secho-bench.lock "$0" "$@"
fi
SECS=1 REP=3 ELAPSED='' ALGS="aes-256-gcm,aes-128-ecb,aes-256-ecb,aes-256-cbc,aes-256-pcbc,aes-256-ctr,aes-256-cfb,aes-256-ofb"
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--seconds) SECS=${2:-}; shift 2 || { echo "provider_bench: --seconds needs a value" >&2; exit 2; } ;;
	--repeat) REP=${2:-}; shift 2 || { echo "provider_bench: --repeat needs a value" >&2; exit 2; } ;;
	--algs) ALGS=${2:-}; shift 2 || { echo "provider_bench: --algs needs a value" >&2; exit 2; } ;;
	--elapsed) ELAPSED=-elapsed; shift ;;
	--quick) SECS=1 REP=1 ALGS=aes-256-gcm; shift ;;
	*) echo "provider_bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
case "$SECS$REP" in '' | *[!0-9]*) echo "provider_bench: --seconds and --repeat take whole numbers" >&2; exit 2 ;; esac
[ "$SECS" -gt 0 ] && [ "$REP" -gt 0 ] || { echo "provider_bench: --seconds and --repeat must be above 0" >&2; exit 2; }
[ -n "$ALGS" ] || { echo "provider_bench: --algs is empty" >&2; exit 2; }
# cipher names are case-insensitive to openssl; the tables and secho speed's JSON use lower case
ALGS=${ALGS,,}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) B=$BUILD ;; *) B=$ROOT/$BUILD ;; esac
S=$B/secho
for f in "$B/secho.so" "$S" "$B/bench/evp_speed"; do
	[ -e "$f" ] || { echo "provider_bench: $f not built (make)" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "provider_bench: jq is needed (scripts/deps.sh)" >&2; exit 1; }
T=$(mktemp -d /tmp/secho-provider-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

# one PROVIDER ALG RUN: openssl speed -mr; "+F:n:NAME:v16:v64:..." in bytes per second.
one() {
	local prov=$1 alg=$2 r=$3
	# The order matters: -provider-path, -provider and -propquery before -evp.
	SECHO_PROVIDER_STATS=$T/stats openssl speed -mr $ELAPSED -seconds "$SECS" \
		-provider-path "$B" -provider secho -provider default -propquery "provider=$prov" \
		-evp "$alg" 2>"$T/err" | sed -n 's/^+F:[0-9]*:[^:]*:\(.*\)$/\1/p' >"$T/$prov.$alg.$r"
	if [ ! -s "$T/$prov.$alg.$r" ]; then
		echo "provider_bench: openssl speed -evp $alg ($prov) failed: $(head -1 "$T/err")" >&2
		return 1
	fi
}

IFS=, read -r -a algs <<<"$ALGS"
start=$(date -u '+%Y-%m-%d %H:%M')
for r in $(seq 1 "$REP"); do
	for alg in "${algs[@]}"; do
		for prov in secho default; do
			[ "$prov" = default ] && [[ "$alg" == *pcbc* ]] && continue # OpenSSL has no PCBC
			one "$prov" "$alg" "$r" || exit 1
		done
	done
done
impl=$(sed -n 's/.* impl=\([a-z0-9-]*\).*/\1/p' "$T/stats" | sort | uniq -c | sort -rn | awk 'NR == 1 {print $2}')
[ -n "$impl" ] || { echo "provider_bench: the provider left no counters line" >&2; exit 1; }
records=$(awk '{for (i = 1; i <= NF; i++) if ($i ~ /^bytes_/) { split($i, kv, "="); s += kv[2] }} END {printf "%.0f", s}' "$T/stats")
"$S" speed --impl "$impl" --mode gcm,ecb,cbc,pcbc,ctr,cfb,ofb --sizes 16,64,256,1024,8192,16384 \
	--repeat 5 --json >"$T/secho.json" 2>"$T/err" || { echo "provider_bench: secho speed failed: $(head -1 "$T/err")" >&2; exit 1; }
# AES-256-GCM through EVP again, timed the way secho speed times (bench/evp_speed): what
# separates the two tools' figures is then EVP and the provider, not the method.
if [[ ",$ALGS," == *,aes-256-gcm,* ]]; then
	for prov in secho default; do
		SECHO_IMPL=$impl "$B/bench/evp_speed" -q "provider=$prov" -z 64,16384 -r 5 \
			>"$T/evp.$prov" 2>"$T/err" || { echo "provider_bench: evp_speed failed: $(head -1 "$T/err")" >&2; exit 1; }
	done
fi
end=$(date -u '+%H:%M')

# median ALG PROVIDER: the median of each column over the runs, bytes per second
median() {
	local alg=$1 prov=$2
	cat "$T/$prov.$alg".* 2>/dev/null | awk -F: '
		{ for (i = 1; i <= NF; i++) v[i, NR] = $i; n = NR; m = NF }
		END {
			for (i = 1; i <= m; i++) {
				k = 0
				for (j = 1; j <= n; j++) a[++k] = v[i, j]
				for (x = 2; x <= k; x++) for (y = x; y > 1 && a[y - 1] > a[y]; y--) { t = a[y]; a[y] = a[y - 1]; a[y - 1] = t }
				printf "%s%s", (i > 1 ? ":" : ""), (k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2)
			}
			print ""
		}'
}

sizes=(16 64 256 1024 8192 16384)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
fam=$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1)
model=$(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -1)
tsc=$(jq -r '.machine.tsc_hz / 1e9 * 1000 | floor / 1000' "$T/secho.json")

echo "## The OpenSSL provider: openssl speed through secho beside the default provider"
echo
echo "Command: \`bench/provider_bench.sh --seconds $SECS --repeat $REP${ELAPSED:+ --elapsed}\`, $start-$end UTC."
echo "Machine: $cpu (family $fam, model $model), TSC $tsc GHz, 2 vCPUs, shared with other jobs;"
echo "$(openssl version | cut -d' ' -f1-2); the provider used the \`$impl\` implementation ($records bytes counted by it)."
echo "Each cell: the median of $REP runs of \`openssl speed $ELAPSED -seconds $SECS -provider-path build -provider secho"
echo "-provider default -propquery provider=P -evp ALG\`, P = secho or default, in 1000s of bytes per"
echo "second of ${ELAPSED:+wall-clock}${ELAPSED:-CPU} time (openssl speed's own unit). \`openssl speed -evp\` sets the key"
echo "again for every message; secho keeps an unchanged key (docs/PROVIDER.md)."
echo
echo '```'
printf '%-24s' type
for s in "${sizes[@]}"; do printf '%13s' "$s bytes"; done
echo
for alg in "${algs[@]}"; do
	for prov in secho default; do
		[ -s "$T/$prov.$alg.1" ] || continue
		printf '%-24s' "$alg $prov"
		median "$alg" "$prov" | awk -F: '{ for (i = 1; i <= NF; i++) printf "%12.2fk", $i / 1000; print "" }'
	done
done
echo '```'
echo
echo "Speed ratio secho / default provider (above 1.00: secho is faster):"
echo
printf '| algorithm |'
for s in "${sizes[@]}"; do printf ' %s B |' "$s"; done
echo
printf '|---|'
for _ in "${sizes[@]}"; do printf -- '---:|'; done
echo
for alg in "${algs[@]}"; do
	[ -s "$T/default.$alg.1" ] || continue
	paste -d: <(median "$alg" secho) <(median "$alg" default) | awk -F: -v a="$alg" '{
		n = NF / 2; printf "| %s |", a
		for (i = 1; i <= n; i++) printf " %.2f |", $i / $(i + n)
		print "" }'
done
echo

# secho speed's figure for the same implementation, MB/s, and the provider beside it
echo "\`secho speed --impl $impl\` (the library called directly, same run) and the provider through"
echo "\`openssl speed\`, MB/s (10^6 bytes/s); provider / secho speed:"
echo
printf '| algorithm | size | secho speed | provider | provider / secho speed |\n|---|---:|---:|---:|---:|\n'
for alg in "${algs[@]}"; do
	for s in 64 16384; do
		lib=$(jq -r --arg a "$alg" --arg i "$impl" --argjson s "$s" '
			[(.gcm.rows // []), (.modes.rows // [])] | add | map(select(.alg == $a and .impl == $i and .batch == 1))
			| .[0].results // [] | map(select(.size == $s)) | .[0].mbps // empty' "$T/secho.json")
		[ -n "$lib" ] || continue
		idx=$(( s == 64 ? 2 : 6 ))
		prov=$(median "$alg" secho | cut -d: -f"$idx")
		awk -v a="$alg" -v s="$s" -v l="$lib" -v p="$prov" 'BEGIN { printf "| %s | %d B | %.0f | %.0f | %.2f |\n", a, s, l, p / 1e6, p / 1e6 / l }'
	done
done
echo

# the goals (AES-256-GCM), by both timing methods
if [ -s "$T/default.aes-256-gcm.1" ] && [ -s "$T/evp.secho" ]; then
	g_s=$(median aes-256-gcm secho) g_d=$(median aes-256-gcm default)
	lib=$(jq -r --arg i "$impl" '.gcm.rows | map(select(.alg == "aes-256-gcm" and .impl == $i and .batch == 1)) | .[0].results | map(select(.size == 64 or .size == 16384)) | map(.mbps | tostring) | join(":")' "$T/secho.json")
	e_s=$(awk '!/^#/ {printf "%s%s", (n++ ? ":" : ""), $3}' "$T/evp.secho")
	e_d=$(awk '!/^#/ {printf "%s%s", (n++ ? ":" : ""), $3}' "$T/evp.default")
	awk -v s="$g_s" -v d="$g_d" -v l="$lib" -v es="$e_s" -v ed="$e_d" -v impl="$impl" 'BEGIN {
		split(s, a, ":"); split(d, b, ":"); split(l, L, ":"); split(es, E, ":"); split(ed, F, ":")
		print "AES-256-GCM by both timing methods, MB/s: `openssl speed` (bytes over CPU time, whole run)"
		print "and `bench/evp_speed` (the same EVP loop, timed like `secho speed`: fastest ~25 us burst"
		print "per sample, median of 5), beside `secho speed --impl " impl "` (the library, one-shot seal):"
		print ""
		print "| | 64 B | 16384 B |"
		print "|---|---:|---:|"
		printf "| secho speed (library) | %.0f | %.0f |\n", L[1], L[2]
		printf "| evp_speed, secho provider | %.0f | %.0f |\n", E[1], E[2]
		printf "| evp_speed, default provider | %.0f | %.0f |\n", F[1], F[2]
		printf "| openssl speed, secho provider | %.0f | %.0f |\n", a[2] / 1e6, a[6] / 1e6
		printf "| openssl speed, default provider | %.0f | %.0f |\n", b[2] / 1e6, b[6] / 1e6
		print ""
		r64 = a[2] / b[2]; r16 = a[6] / b[6]; rl = a[6] / 1e6 / L[2]
		e64 = E[1] / F[1]; e16 = E[2] / F[2]; el = E[2] / L[2]
		print "Goals (AES-256-GCM), this run:"
		print ""
		print "| goal | openssl speed | evp_speed (secho speed timing) |"
		print "|---|---|---|"
		printf "| 16 KiB: within 10%% of secho speed (%s) | %.2f (%s) | %.2f (%s) |\n", impl, rl, (rl >= 0.9 ? "met" : "missed"), el, (el >= 0.9 ? "met" : "missed")
		printf "| 16 KiB: >= 2x the default provider | %.2fx (%s) | %.2fx (%s) |\n", r16, (r16 >= 2 ? "met" : "missed"), e16, (e16 >= 2 ? "met" : "missed")
		printf "| 64 B: >= 1.8x the default provider | %.2fx (%s) | %.2fx (%s) |\n", r64, (r64 >= 1.8 ? "met" : "missed"), e64, (e64 >= 1.8 ? "met" : "missed")
	}'
fi
