#!/usr/bin/env bash
# bench/flow_live_bench.sh - the meter's CPU per packet live against offline, on the same
# capture, in one run (issue 24: "CPU per packet metering live within 1.3x of offline").
#
#   bench/flow_live_bench.sh [--packets N] [--rate PPS] [--profiles "light nix"]
#                            [--io "packet xdp"] [--rounds R] [--perf] [--captures DIR]
#
#   --packets N     packets per profile (default 1000000)
#   --rate PPS      the replay's rate (default 300000): below what the meter takes, so
#                   that it reads every frame (its ring's drops are reported)
#   --profiles P    the generator's profiles (default "light nix")
#   --io KINDS      the live receive paths, `secho flow --io` (default "packet xdp"); one
#                   the kernel refuses is reported as unavailable with its reason
#   --rounds R      rounds, offline and live taking turns (default 3); medians
#   --perf          also a `perf record -e cpu-clock` of the meter in the last live round
#                   of each path: its top symbols (the receive walk's share)
#   --captures DIR  keep the generated captures there and reuse them (default: temporary)
#
# Offline: `secho flow --pcap F --quiet`, pinned to CPU 1, its user + system time
# (/usr/bin/time) over the frames it read. Live: `secho flow --iface IF --io KIND` in one
# namespace of a `secho lab` wire (tag "l"), pinned to CPU 1, `secho flow replay --pps
# RATE` sending from the other on CPU 0; the meter's CPU time (all threads, /proc/PID/stat)
# from just before the replay until its ring is drained, over the frames it read. Neither
# exports records (offline and live alike), so the two differ only in how frames arrive.
# On a veth pair the kernel's receive work (the copy into the ring, the XDP redirect) runs
# in softirqs on the sender's CPU and is not charged to the meter: the live figure is the
# meter's own cost of walking its ring or rings, waking and timing, not the kernel's.
#
# Prints per profile and path the CPU ns per packet (median of the rounds, with the range),
# the ratio live / offline in the same rounds, the frames read and dropped.
# Run it under `flock /tmp/secho-bench.lock`. Needs root (namespaces), jq, /usr/bin/time.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S=${SECHO_BIN:-$ROOT/${BUILD:-build}/secho}
PACKETS=1000000 RATE=300000 PROFILES="light nix" IOS="packet xdp" ROUNDS=3 PERF=0 CAPS=
usage() {
	sed -n '5,20p' "$0" | sed 's/^# \{0,1\}//'
}
while [ $# -gt 0 ]; do
	case "$1" in
	--packets | --rate | --profiles | --io | --rounds | --captures)
		[ $# -ge 2 ] || { echo "flow_live_bench: '$1' needs a value" >&2; exit 2; }
		case "$1" in
		--packets) PACKETS=$2 ;;
		--rate) RATE=$2 ;;
		--profiles) PROFILES=$2 ;;
		--io) IOS=$2 ;;
		--rounds) ROUNDS=$2 ;;
		--captures) CAPS=$2 ;;
		esac
		shift
		;;
	--perf) PERF=1 ;;
	-h | --help) usage && exit 0 ;;
	*) echo "flow_live_bench: unknown argument '$1' (--help)" >&2 && exit 2 ;;
	esac
	shift
done
for v in PACKETS RATE ROUNDS; do
	if ! [[ "${!v}" =~ ^[0-9]+$ ]] || [ "${!v}" -eq 0 ]; then
		echo "flow_live_bench: --${v,,} '${!v}' is not a positive number" >&2
		exit 2
	fi
done
[ "$ROUNDS" -le 99 ] || { echo "flow_live_bench: --rounds '$ROUNDS' is above 99" >&2; exit 2; }
for io in $IOS; do
	case "$io" in packet | xdp) ;; *) echo "flow_live_bench: --io '$io' is not packet or xdp" >&2 && exit 2 ;; esac
done
[ "$(id -u)" -eq 0 ] || { echo "flow_live_bench: needs root" >&2; exit 1; }
[ -x "$S" ] || { echo "flow_live_bench: $S not built" >&2; exit 1; }
command -v jq >/dev/null || { echo "flow_live_bench: jq not installed" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "flow_live_bench: /usr/bin/time not installed" >&2; exit 1; }
[ "$PERF" = 0 ] || command -v perf >/dev/null || { echo "flow_live_bench: --perf: perf not installed" >&2; exit 1; }

PIN_SENDER='' PIN_METER='' PINNED="not pinned (one CPU)"
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	PIN_SENDER="taskset -c 0" PIN_METER="taskset -c 1"
	PINNED="sender on CPU 0, meter on CPU 1"
fi

LAB=(--id $$ --tag l)
eval "$("$S" lab env "${LAB[@]}")" || exit 1
NA=$NS_H NB=$NS_E IA=$IF_H IB=$IF_E
T=$(mktemp -d /tmp/secho-live-bench.XXXXXX)
MP=
cleanup() {
	[ -n "$MP" ] && kill -9 "$MP" 2>/dev/null
	"$S" lab down "${LAB[@]}" >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
[ -n "$CAPS" ] && { mkdir -p "$CAPS" || exit 1; }
CAPDIR=${CAPS:-$T}
"$S" lab up "${LAB[@]}" --mtu 9000 >/dev/null || exit 1
ip netns exec "$NA" ip link set "$IA" mtu 9100 && ip netns exec "$NB" ip link set "$IB" mtu 9100 ||
	exit 1

cpu_ticks() { # user + system of a process, all its threads, in clock ticks
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
HZ=$(getconf CLK_TCK)
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
range() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo "-" hi}'; }

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
fam=$(grep -m1 'cpu family' /proc/cpuinfo | awk '{print $NF}')
mod=$(grep -m1 '^model\s' /proc/cpuinfo | awk '{print $NF}')
echo "# flow_live_bench: $(date -u +%FT%TZ), $cpu, family $fam model $mod, $(nproc) CPUs," \
	"load $(cut -d' ' -f1-3 /proc/loadavg); $PACKETS packets per profile, replay at" \
	"$RATE packets/s, $ROUNDS rounds; $PINNED"

# offline P R: one run; prints "ns_per_packet frames"
offline() {
	local out=$T/off-$1-$2
	$PIN_METER /usr/bin/time -f '%U %S' -o "$out.time" "$S" flow --pcap "$CAPDIR/$1.pcap" \
		--quiet --json-stats >"$out.out" 2>"$out.err" || { echo "offline run failed: $(head -2 "$out.err")" >&2; return 1; }
	local frames
	frames=$(grep '^{' "$out.out" | jq -r 'select(.final) | .frames_read')
	awk -v f="$frames" '{ printf "%.1f %d\n", ($1 + $2) * 1e9 / f, f }' "$out.time"
}

# live P IO R: one run; prints "ns_per_packet frames drops sent", or "unavailable REASON"
live() {
	local p=$1 io=$2 r=$T/live-$1-$2-$3
	$PIN_METER ip netns exec "$NB" "$S" flow --iface "$IB" --io "$io" --json-stats --stats 0.5 \
		>"$r.out" 2>"$r.err" &
	MP=$!
	for _ in $(seq 1 300); do
		grep -q '^secho flow: metering' "$r.out" 2>/dev/null && break
		kill -0 "$MP" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q '^secho flow: metering' "$r.out"; then
		kill -9 "$MP" 2>/dev/null
		wait "$MP" 2>/dev/null
		MP=
		echo "unavailable $(grep -m1 . "$r.err" | tr -d '\n')"
		return 0
	fi
	sleep 1
	local c0 c1 pp=
	c0=$(cpu_ticks "$MP")
	if [ "$PERF" = 1 ] && [ "$3" = "$ROUNDS" ]; then
		perf record -q -e cpu-clock -F 2000 -p "$MP" -o "$r.perf" >/dev/null 2>&1 &
		pp=$!
	fi
	local limit=$((PACKETS * 3 / RATE + 30))
	$PIN_SENDER ip netns exec "$NA" "$S" flow replay --iface "$IA" --pcap "$CAPDIR/$p.pcap" \
		--pps "$RATE" --seconds "$limit" --json >"$r.replay" 2>"$r.replay.err" ||
		{ echo "replay failed: $(cat "$r.replay.err")" >&2; return 1; }
	# drained: nothing new read for 1.5 s (at most 30 s)
	local last=-1 same=0 now
	for _ in $(seq 1 60); do
		now=$(grep '^{' "$r.out" | tail -1 | jq -r .frames_read)
		if [ "$now" = "$last" ]; then
			same=$((same + 1))
			[ $same -ge 3 ] && break
		else
			same=0 last=$now
		fi
		sleep 0.5
	done
	c1=$(cpu_ticks "$MP")
	if [ -n "$pp" ]; then
		kill -INT "$pp" 2>/dev/null
		wait "$pp" 2>/dev/null
		perf report -i "$r.perf" --no-children --sort sym --stdio 2>/dev/null |
			grep -v '^#' | grep . | head -12 >"$T/perf-$p-$io.txt"
	fi
	kill -TERM "$MP"
	for _ in $(seq 1 300); do
		kill -0 "$MP" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$MP" 2>/dev/null
	wait "$MP" 2>/dev/null
	MP=
	local fin sent
	fin=$(grep '^{' "$r.out" | jq -c 'select(.final)')
	sent=$(jq -r .frames "$r.replay")
	echo "$fin" | jq -r --arg c "$((c1 - c0))" --arg hz "$HZ" --arg sent "$sent" \
		'"\(($c | tonumber) / ($hz | tonumber) * 1e9 / .frames_read | . * 10 | round / 10) \(.frames_read) \(.kernel_drops) \($sent)"'
}

for p in $PROFILES; do
	if [ ! -s "$CAPDIR/$p.pcap" ] || ! grep -q "^# packets=$PACKETS\$" "$CAPDIR/$p.pcap.truth.csv" 2>/dev/null; then
		"$S" flow gen --profile "$p" --packets "$PACKETS" -o "$CAPDIR/$p.pcap" -q || exit 1
	fi
	for r in $(seq 1 "$ROUNDS"); do
		res=$(offline "$p" "$r") || exit 1
		read -r ns frames <<<"$res"
		echo "$ns" >>"$T/$p-offline.ns"
		echo "  $p round $r: offline $ns ns/packet ($frames frames, load $(cut -d' ' -f1 /proc/loadavg))"
		for io in $IOS; do
			[ -e "$T/$p-$io.unavailable" ] && continue
			res=$(live "$p" "$io" "$r") || exit 1
			if [ "${res%% *}" = unavailable ]; then
				echo "${res#unavailable }" >"$T/$p-$io.unavailable"
				echo "  $p: --io $io unavailable: ${res#unavailable }"
				continue
			fi
			read -r ns frames drops sent <<<"$res"
			echo "$ns" >>"$T/$p-$io.ns"
			awk -v l="$ns" -v o="$(tail -1 "$T/$p-offline.ns")" 'BEGIN { printf "%.3f\n", l / o }' \
				>>"$T/$p-$io.ratio"
			echo "  $p round $r: live --io $io $ns ns/packet ($frames frames read of $sent sent; kernel_drops $drops: a full ring, or with --io xdp frames above its 2 KiB buffers)"
		done
	done
done

echo
printf '%-8s %-8s %22s %22s %22s\n' profile path "CPU ns/packet, median" "(range)" "live / offline (range)"
for p in $PROFILES; do
	printf '%-8s %-8s %22s %22s %22s\n' "$p" offline "$(median <"$T/$p-offline.ns")" \
		"($(range <"$T/$p-offline.ns"))" ""
	for io in $IOS; do
		if [ -e "$T/$p-$io.unavailable" ]; then
			printf '%-8s %-8s unavailable: %s\n' "$p" "$io" "$(cat "$T/$p-$io.unavailable")"
			continue
		fi
		printf '%-8s %-8s %22s %22s %22s\n' "$p" "$io" "$(median <"$T/$p-$io.ns")" \
			"($(range <"$T/$p-$io.ns"))" "$(median <"$T/$p-$io.ratio")x ($(range <"$T/$p-$io.ratio"))"
	done
done
if [ "$PERF" = 1 ]; then
	for f in "$T"/perf-*.txt; do
		[ -s "$f" ] || continue
		b=${f##*/perf-}
		echo
		echo "perf, live ${b%.txt} (last round; top symbols, % of the meter's samples):"
		cat "$f"
	done
fi
