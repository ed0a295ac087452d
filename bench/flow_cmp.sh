#!/usr/bin/env bash
# bench/flow_cmp.sh - builds of the flow meter against each other on the same captures, in
# one run: each build's bench/flow_ceiling, alternating build by build, so that a drifting
# machine affects every build alike.
#
#   bench/flow_cmp.sh [--alternations A] [--rounds R] NAME=FLOW_CEILING [NAME=...] -- PCAP...
#
#   NAME=FLOW_CEILING  a build's bench/flow_ceiling binary and the name it is reported as
#                      (e.g. base=/tmp/base/build/bench/flow_ceiling); the first is the
#                      baseline the others are compared with
#   --alternations A   how many times every build runs, in turn (default 3)
#   --rounds R         rounds per run, flow_ceiling's --rounds (default 3): each run prints
#                      the median of its rounds
#   PCAP...            the captures (written by the same build shortly before: a capture
#                      written earlier and partly evicted walks slower)
#
# Each run is pinned to CPU 0 (taskset) and printed raw with the load average before it
# (flow_ceiling's JSON: reader, bare and secho packets per second, secho's share of the
# reader). Then per capture and build: the median over the alternations of secho's rate,
# of its share of the reader in the same process (steadier than the rate on a shared
# machine), and of its ratio to the baseline's rate in the same alternation. Needs jq. Run
# it under `flock /tmp/secho-bench.lock`.
set -u
ALTS=3 ROUNDS=3
NAMES=() BINS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--alternations | --rounds)
		[ $# -ge 2 ] || { echo "flow_cmp: '$1' needs a value" >&2; exit 2; }
		case "$2" in '' | *[!0-9]*) echo "flow_cmp: $1: '$2' is not a number" >&2; exit 2 ;; esac
		if [ "$2" -lt 1 ] || [ "$2" -gt 99 ]; then
			echo "flow_cmp: $1: '$2' is not 1-99" >&2
			exit 2
		fi
		if [ "$1" = --rounds ]; then ROUNDS=$2; else ALTS=$2; fi
		shift 2
		;;
	-h | --help)
		sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	--)
		shift
		break
		;;
	*=*)
		n=${1%%=*} b=${1#*=}
		if [ -z "$n" ] || [ ! -x "$b" ]; then
			echo "flow_cmp: '$1': not NAME=an executable flow_ceiling" >&2
			exit 2
		fi
		NAMES+=("$n") BINS+=("$b")
		shift
		;;
	*)
		echo "flow_cmp: unknown argument '$1' (see --help)" >&2
		exit 2
		;;
	esac
done
[ ${#BINS[@]} -ge 1 ] || { echo "flow_cmp: no NAME=FLOW_CEILING given (see --help)" >&2; exit 2; }
[ $# -ge 1 ] || { echo "flow_cmp: no capture after -- (see --help)" >&2; exit 2; }
for f in "$@"; do
	[ -r "$f" ] || { echo "flow_cmp: capture '$f' not readable" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "flow_cmp: jq not installed (apt-get install jq)" >&2; exit 1; }
PCAPS=()
for f in "$@"; do PCAPS+=(--pcap "$f"); done
W=$(mktemp -d /tmp/secho-flow-cmp.XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT
trap 'exit 1' INT TERM

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "# $(date -u '+%F %H:%M UTC'), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')," \
	"family $(grep -m1 'cpu family' /proc/cpuinfo | sed 's/.*: //')" \
	"model $(grep -m1 '^model[[:space:]]' /proc/cpuinfo | sed 's/.*: //')"
for a in $(seq "$ALTS"); do
	for i in "${!BINS[@]}"; do
		echo "## ${NAMES[$i]} alternation $a load $(cut -d' ' -f1-3 /proc/loadavg)"
		taskset -c 0 "${BINS[$i]}" --rounds "$ROUNDS" --json "${PCAPS[@]}" >"$W/out" ||
			{ echo "flow_cmp: ${NAMES[$i]} failed" >&2; exit 1; }
		cat "$W/out"
		jq -r --arg n "${NAMES[$i]}" --arg a "$a" \
			'[$a, $n, .capture, .secho_pps, .secho_of_reader] | @tsv' "$W/out" >>"$W/all"
	done
done

# per alternation and capture: each build's rate over the baseline's
awk -F'\t' -v base="${NAMES[0]}" '$2 == base {b[$1 FS $3] = $4}
	{print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $4 / b[$1 FS $3]}' "$W/all" >"$W/rel"
echo
printf '| capture | build | secho pps | of reader | / %s |\n|---|---|---:|---:|---:|\n' "${NAMES[0]}"
for f in "$@"; do
	for n in "${NAMES[@]}"; do
		sel() { awk -F'\t' -v n="$n" -v f="$f" -v c="$1" '$2 == n && $3 == f {print $c}' "$W/rel"; }
		printf '| %s | %s | %.2f M/s | %.0f%% | %.3f |\n' "$(basename "$f")" "$n" \
			"$(sel 4 | median | awk '{print $1 / 1e6}')" \
			"$(sel 5 | median | awk '{print $1 * 100}')" "$(sel 6 | median)"
	done
done
