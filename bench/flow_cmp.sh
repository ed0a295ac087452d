#!/usr/bin/env bash
# bench/flow_cmp.sh - builds of the flow meter against each other on the same captures, in
# one run: each build's bench/flow_ceiling, alternating build by build, so that a drifting
# machine affects every build alike.
#
#   bench/flow_cmp.sh [--alternations A] [--rounds R] NAME=FLOW_CEILING [NAME=...] -- PCAP...
#   bench/flow_cmp.sh --secho [--alternations A] [--warm] NAME=SECHO [NAME=...] -- PCAP...
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
# machine), and of its ratio to the baseline's rate in the same alternation.
#
# --secho: NAME=SECHO is a build's secho binary, and each run is `secho flow --pcap F` (one
# worker, no export) per capture, pinned to CPU 0: the packets per CPU second (user +
# system, /usr/bin/time), which other work on the CPU inflates far less than the wall
# time, and the table's own p50 and p99 per packet (the summary's table_update: the bursts
# it times, prepare excluded). Reported as above, "of reader" replaced by that p50, and the
# median p99 in a column of its own.
#
# --warm (with --secho): each measured run comes right after an unmeasured run of the same
# build on the same capture, so that it gets the memory that run has just given back. On
# a virtual machine whose host takes back the memory its guest frees (free page
# reporting, as on the machines of docs/PERFORMANCE.md), a run that needs more memory than
# the run before it freed pays the host for every fresh page: up to 1.5x the wall time of
# the same run after itself, which makes a build with a larger table look slower when it
# follows one with a smaller. Twice the time.
#
# Needs jq (--secho: /usr/bin/time). Run it under `flock /tmp/secho-bench.lock`.
set -u
ALTS=3 ROUNDS=3 SECHO=0 WARM=0
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
	--secho)
		SECHO=1
		shift
		;;
	--warm)
		WARM=1
		shift
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
			echo "flow_cmp: '$1': not NAME=an executable (flow_ceiling, or secho with --secho)" >&2
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
[ $WARM = 0 ] || [ $SECHO = 1 ] || { echo "flow_cmp: --warm needs --secho" >&2; exit 2; }
[ $SECHO = 0 ] || [ -x /usr/bin/time ] ||
	{ echo "flow_cmp: /usr/bin/time not installed (apt-get install time)" >&2; exit 1; }
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
		if [ $SECHO = 1 ]; then
			: >"$W/out"
			for f in "$@"; do
				[ $WARM = 0 ] || taskset -c 0 "${BINS[$i]}" flow --pcap "$f" >/dev/null 2>&1 ||
					{ echo "flow_cmp: ${NAMES[$i]} failed on $f" >&2; exit 1; }
				/usr/bin/time -o "$W/time" -f '%e %U %S' taskset -c 0 "${BINS[$i]}" flow \
					--pcap "$f" >"$W/sum" 2>&1 ||
					{ echo "flow_cmp: ${NAMES[$i]} failed on $f" >&2; cat "$W/sum" >&2; exit 1; }
				read -r wall user sys <"$W/time"
				frames=$(sed -n 's/.* \([0-9]*\) frames read.*/\1/p' "$W/sum" | tail -1)
				p50=$(awk '$1 == "table_update" {print $2}' "$W/sum")
				p99=$(sed -n 's/^ *table_update .*(p99 \([0-9.]*\),.*/\1/p' "$W/sum")
				jq -nc --arg c "$f" --argjson n "${frames:-0}" --argjson w "$wall" \
					--argjson u "$user" --argjson s "$sys" --argjson p "${p50:-0}" \
					--argjson q "${p99:-0}" \
					'{capture: $c, frames: $n, wall_s: $w, cpu_s: ($u + $s),
					  secho_pps: (if $u + $s > 0 then $n / ($u + $s) else 0 end),
					  wall_pps: (if $w > 0 then $n / $w else 0 end),
					  secho_of_reader: $p, table_p99: $q}' >>"$W/out"
			done
		else
			taskset -c 0 "${BINS[$i]}" --rounds "$ROUNDS" --json "${PCAPS[@]}" >"$W/out" ||
				{ echo "flow_cmp: ${NAMES[$i]} failed" >&2; exit 1; }
		fi
		cat "$W/out"
		jq -r --arg n "${NAMES[$i]}" --arg a "$a" \
			'[$a, $n, .capture, .secho_pps, .secho_of_reader, (.table_p99 // 0)] | @tsv' \
			"$W/out" >>"$W/all"
	done
done

# per alternation and capture: each build's rate over the baseline's
awk -F'\t' -v base="${NAMES[0]}" '$2 == base {b[$1 FS $3] = $4}
	{print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $4 / b[$1 FS $3] "\t" $6}' "$W/all" >"$W/rel"
echo
if [ $SECHO = 1 ]; then
	printf '| capture | build | packets per CPU s | table p50 ns | / %s | table p99 ns |\n|---|---|---:|---:|---:|---:|\n' "${NAMES[0]}"
	FMT='| %s | %s | %.2f M/s | %.1f | %.3f | %.0f |\n' SCALE=1
else
	printf '| capture | build | secho pps | of reader | / %s |\n|---|---|---:|---:|---:|\n' "${NAMES[0]}"
	FMT='| %s | %s | %.2f M/s | %.0f%% | %.3f |\n' SCALE=100
fi
for f in "$@"; do
	for n in "${NAMES[@]}"; do
		sel() { awk -F'\t' -v n="$n" -v f="$f" -v c="$1" '$2 == n && $3 == f {print $c}' "$W/rel"; }
		cols=("$(basename "$f")" "$n" "$(sel 4 | median | awk '{print $1 / 1e6}')"
			"$(sel 5 | median | awk -v k=$SCALE '{print $1 * k}')" "$(sel 6 | median)")
		[ $SECHO = 1 ] && cols+=("$(sel 7 | median)")
		# shellcheck disable=SC2059
		printf "$FMT" "${cols[@]}"
	done
done
