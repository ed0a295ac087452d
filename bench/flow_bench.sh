#!/usr/bin/env bash
# bench/flow_bench.sh - the flow meter offline beside softflowd, pmacctd (nfprobe) and
# ipfixprobe, in one run, each exporting IPFIX to its own nfcapd from the same capture in the
# page cache.
#
#   bench/flow_bench.sh [--packets N] [--rounds R] [--profiles "light heavy"] [--dir D]
#                       [--encap KIND[:ID]] [--pcap FILE]... [--features LIST]
#                       [--tools "secho-w1 ipfixprobe ..."] [--warm]
#
# Profiles: the generator's (`secho flow gen --help`: light, nix, heavy, geant, short, ...),
# e.g. light (about 200,000 connections, mean IP length about 290 B: NIX-like) and heavy
# (about 1,000 connections, Pareto-sized, mean IP length about 1,000 B: GEANT-like), N
# packets each (default 3,000,000), seed 1, written once into D (default
# /tmp/secho-flow-bench) and kept there for the next run; with --encap, every frame in that
# encapsulation (`secho flow gen --encap`: vxlan, mpls, ...; its own files, -KIND in their
# names): one tunnel, so the 5-tuple comparison below still names every flow once (the
# tunnel columns are checked by tests/sh/test_flow_gen.sh; peers that do not look into the
# tunnel are not exact). --pcap FILE (repeatable) measures that capture instead of the
# profiles (--profiles, --packets and --encap then do not apply; its packets are counted by
# capinfos): any pcap or pcapng, e.g. one with real application payloads; its truth is
# FILE.truth.csv when there is one (as `secho flow gen` writes it), else the exactness check
# is skipped with the reason printed. Each round runs, in turn (the order reversed in every
# other round):
#   secho-w1         secho flow --pcap F --collector udp://... --active 300 --inactive 30
#                    (pinned to CPU 0)
#   secho-w2         the same with --workers 2 (CPUs 0 and 1)
#   secho-base       secho-w1's command with another build of secho, $SECHO_BASE (e.g. main's),
#                    so that two builds are measured against the peers in the same rounds;
#                    skipped with the reason when SECHO_BASE is not set
#   softflowd        softflowd -d -r F -n ... -v 10 -m 1000000 -c none (CPU 0; its largest
#                    table, so that it does not split flows; without -c none it hangs in file
#                    mode)
#   pmacctd          pmacctd -f CONF: pcap_savefile F, plugin nfprobe, IPFIX (CPU 0; its core
#                    process and the plugin are two processes on one CPU)
#   ipfixprobe       $IPFIXPROBE -L PLUGINS -i "pcap;file=F" -s "cache;size=20;active=300;
#                    inactive=30" -o "ipfix;udp;host=127.0.0.1;port=P" (CPU 0, all its
#                    threads: one input, a cache of 2^20 flows, secho's default table size,
#                    and secho's timeouts; no process plugin)
# With --features LIST (secho's sets, comma-separated, or all: `secho flow --help`) the
# round is instead, on the same captures:
#   secho-w1         features off, as above
#   secho-feat       the same with --features LIST: the sets' fields in the IPFIX records,
#                    under ipfixprobe's elements (docs/FLOW.md, "IPFIX export of the
#                    features"), as ipfixprobe-feat exports them
#   secho-fjson      secho-feat plus --json /dev/null: the sets' fields encoded twice (JSON
#                    too, every record; the bound on the other side)
#   secho-base-feat  secho-feat's command with $SECHO_BASE (another build, as secho-base)
#   ipfixprobe       as above, no process plugin
#   ipfixprobe-feat  ipfixprobe with -p basicplus (the record's L2-L4 fields, which secho
#                    always has) and each set of LIST by its name (tls, quic, dns, http,
#                    pstats, phists, wg, bstats: ipfixprobe's plugins of the same names);
#                    skipped with the reason when one of them is not in its plugin directory
# --tools "A B ..." runs only those of the mode's tools (names as above).
# --warm: each measured run comes right after an unmeasured run of the same tool on the same
# capture (its export sent to port 9, where nothing listens), so that it gets the memory that
# run gave back. On a virtual machine whose host takes back the memory its guest frees (free
# page reporting, as on the machines of docs/PERFORMANCE.md), a run that needs more memory
# than the run before it freed pays the host for every fresh page, so that without it a
# tool run after a smaller one looks slower than one run after a tool of its own size (two
# builds whose features do the same work, run in a row: the second measured 1.2x faster;
# docs/results/2026-12-04-warm-cold.md). Twice the time.
#
# Reports per tool the median over the rounds of: packets per second (the capture's
# packets over the wall time of the run, start, export and exit included), CPU seconds
# (user + system, children included) and packets per CPU second, peak RSS, what nfcapd
# received (flows, packets, bytes, sequence errors) and whether the records are exact:
# `nfdump -R` split into unidirectional flows (addresses, ports or ICMP type.code, protocol,
# packets, bytes) equal to the truth. ipfixprobe keys ICMP flows on addresses and protocol
# only (no type or code: its records have ports 0): for it, both sides' ICMP and ICMPv6
# lines are summed per source, destination and protocol before they are compared, and its
# other flows are compared as they are. Then the ratio of each tool's median rate to the
# reference's (softflowd; with --features, secho-w1: features on/off) and to ipfixprobe's
# (with --features, ipfixprobe-feat's for secho-feat and secho-fjson), and the ratio lines:
# the medians' ratio, then the range of the rounds' own ratios, by wall time and by CPU.
#
# Environment: SECHO_BIN (default build/secho; BUILD=dir for another build directory);
# SECHO_BASE=/path/to/another/secho for the secho-base and secho-base-feat tools; SECHO_ARGS="..." more options
# for every secho tool's command (split on spaces: e.g. SECHO_ARGS="--mtu 65507");
# IPFIXPROBE=/path/to/ipfixprobe, a benchmark-only peer that is neither vendored nor
# built here (docs/PERFORMANCE.md has how it was built): without it the ipfixprobe tools
# are skipped with the reason; IPFIXPROBE_PLUGINS=dir, its plugin directory (-L), by
# default found beside the binary (../lib/ipfixprobe, ../lib64/ipfixprobe or its own
# directory: the one holding libipfixprobe-storage-cache.so).
#
# Prerequisites (Debian: nfdump, softflowd, pmacct, wireshark-common for capinfos; not
# needed by `make test`, so not in scripts/deps.sh): a peer that is not installed is skipped
# with the reason, nfdump is required. Root: nfcapd -B asks for its receive buffer with
# SO_RCVBUF, which the kernel caps at twice net.core.rmem_max (4 MiB by default here: 8 MiB,
# not the 128 MB asked for), so the run raises net.core.rmem_max to 128 MiB while it runs
# and puts the old value back at its end. Run it under `flock /tmp/secho-bench.lock`.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S=${SECHO_BIN:-$ROOT/${BUILD:-build}/secho}
PACKETS=3000000 ROUNDS=3 PROFILES="light heavy" DIR=/tmp/secho-flow-bench ENCAP=
FEATURES='' ONLY='' PCAPS=() WARM=0
ACTIVE=300 INACTIVE=30 # secho's defaults, given to secho and ipfixprobe alike
while [ $# -gt 0 ]; do
	if [ "$1" = --warm ]; then
		WARM=1
		shift
		continue
	fi
	case "$1" in
	--packets) PACKETS=$2 ;;
	--rounds) ROUNDS=$2 ;;
	--profiles) PROFILES=$2 ;;
	--dir) DIR=$2 ;;
	--encap) ENCAP=$2 ;;
	--pcap) PCAPS+=("${2-}") ;;
	--features) FEATURES=$2 ;;
	--tools) ONLY=$2 ;;
	-h | --help)
		sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "flow_bench: unknown argument '$1' (see --help)" >&2
		exit 2
		;;
	esac
	[ $# -ge 2 ] || { echo "flow_bench: '$1' needs a value" >&2; exit 2; }
	shift 2
done
case $ROUNDS in '' | *[!0-9]* | 0)
	echo "flow_bench: --rounds wants a positive number, not '$ROUNDS'" >&2; exit 2 ;;
esac
case $PACKETS in '' | *[!0-9]* | 0)
	echo "flow_bench: --packets wants a positive number, not '$PACKETS'" >&2; exit 2 ;;
esac
for f in "${PCAPS[@]}"; do
	if [ ! -f "$f" ] || [ ! -r "$f" ]; then
		echo "flow_bench: --pcap '$f': not a readable file" >&2
		exit 2
	fi
done
# the sets and ipfixprobe's plugins of the same names
SETS="tls quic dns http wg pstats phists bstats"
if [ -n "$FEATURES" ]; then
	[ "$FEATURES" = all ] && FEATURES=$(echo "$SETS" | tr ' ' ,)
	for x in ${FEATURES//,/ }; do
		case " $SETS " in *" $x "*) ;; *)
			echo "flow_bench: --features: unknown set '$x' (sets: $SETS, or all)" >&2; exit 2 ;;
		esac
	done
fi
[ -x "$S" ] || { echo "flow_bench: $S not built (make)"; exit 1; }
for t in nfcapd nfdump; do
	command -v $t >/dev/null || { echo "flow_bench: $t not installed (apt-get install nfdump)"; exit 1; }
done
if [ ${#PCAPS[@]} -gt 0 ]; then
	command -v capinfos >/dev/null ||
		{ echo "flow_bench: --pcap needs capinfos to count packets (apt-get install wireshark-common)"; exit 1; }
fi

# ipfixprobe: the binary from the environment, its plugins beside it
IPXP=${IPFIXPROBE:-} IPXP_L=${IPFIXPROBE_PLUGINS:-} IPXP_WHY=
if [ -z "$IPXP" ]; then
	IPXP_WHY="IPFIXPROBE is not set (the path of an ipfixprobe binary, a benchmark-only peer)"
elif [ ! -x "$IPXP" ]; then
	IPXP_WHY="IPFIXPROBE=$IPXP is not an executable"
else
	if [ -z "$IPXP_L" ]; then
		d=$(dirname "$IPXP")
		for c in "$d/../lib/ipfixprobe" "$d/../lib64/ipfixprobe" "$d"; do
			[ -n "$(find "$c" -name libipfixprobe-storage-cache.so 2>/dev/null | head -1)" ] &&
				{ IPXP_L=$(cd "$c" && pwd); break; }
		done
	fi
	if [ -z "$IPXP_L" ] || [ -z "$(find "$IPXP_L" -name libipfixprobe-storage-cache.so 2>/dev/null | head -1)" ]; then
		IPXP_WHY="no plugin directory with libipfixprobe-storage-cache.so${IPXP_L:+ in $IPXP_L} (set IPFIXPROBE_PLUGINS)"
	fi
fi
IPXP_P=() IPXP_FWHY=
if [ -n "$FEATURES" ] && [ -z "$IPXP_WHY" ]; then
	for x in basicplus ${FEATURES//,/ }; do
		IPXP_P+=(-p "$x")
		[ -n "$(find "$IPXP_L" -name "libipfixprobe-process-$x.so" 2>/dev/null | head -1)" ] ||
			IPXP_FWHY="${IPXP_FWHY:+$IPXP_FWHY, }no process plugin '$x' in $IPXP_L"
	done
fi

if [ -n "$FEATURES" ]; then
	MODE_TOOLS="secho-w1 secho-feat secho-fjson secho-base-feat ipfixprobe ipfixprobe-feat"
	REF=secho-w1
else
	MODE_TOOLS="secho-w1 secho-w2 secho-base softflowd pmacctd ipfixprobe" REF=softflowd
fi
for t in $ONLY; do
	case " $MODE_TOOLS " in *" $t "*) ;; *)
		echo "flow_bench: --tools: '$t' is not one of: $MODE_TOOLS" >&2; exit 2 ;;
	esac
done
TOOLS=
for t in $MODE_TOOLS; do
	if [ -n "$ONLY" ]; then case " $ONLY " in *" $t "*) ;; *) continue ;; esac; fi
	why=
	case $t in
	softflowd) command -v softflowd >/dev/null || why="not installed (apt-get install softflowd)" ;;
	secho-base | secho-base-feat)
		if [ -z "${SECHO_BASE:-}" ]; then why="SECHO_BASE is not set (another build's secho)"
		elif [ ! -x "$SECHO_BASE" ]; then why="SECHO_BASE=$SECHO_BASE is not an executable"; fi ;;
	pmacctd) command -v pmacctd >/dev/null || why="not installed (apt-get install pmacct)" ;;
	ipfixprobe) why=$IPXP_WHY ;;
	ipfixprobe-feat) why=${IPXP_WHY:-$IPXP_FWHY} ;;
	esac
	if [ -n "$why" ]; then echo "# $t skipped: $why"; else TOOLS="$TOOLS $t"; fi
done
[ -n "$TOOLS" ] || { echo "flow_bench: no tool to run"; exit 1; }
mkdir -p "$DIR" || exit 1
W=$(mktemp -d /tmp/secho-flow-bench-run.XXXXXX)
NF_PID=
# nfcapd on CPU 1 when there is one (the tools run on CPU 0)
NF_CPU=()
[ "$(nproc)" -ge 2 ] && NF_CPU=(taskset -c 1)
RMEM_OLD=$(sysctl -n net.core.rmem_max 2>/dev/null)
cleanup() {
	[ -n "$NF_PID" ] && kill -TERM "$NF_PID" 2>/dev/null && wait "$NF_PID" 2>/dev/null
	[ -n "$RMEM_OLD" ] && sysctl -qw net.core.rmem_max="$RMEM_OLD"
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
if [ -n "$RMEM_OLD" ] && [ "$RMEM_OLD" -lt 134217728 ]; then
	sysctl -qw net.core.rmem_max=134217728 ||
		echo "# net.core.rmem_max stays $RMEM_OLD: nfcapd gets $((2 * RMEM_OLD)) bytes of buffer"
fi

# nfcapd_start, nfcapd_stop
# shellcheck source=tests/sh/flow_lib.bash
. "$ROOT/tests/sh/flow_lib.bash"

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# nfdump's records as unidirectional truth lines: src,dst,sport,dport|type.code,proto,pkts,bytes
nf_lines() {
	nfdump -R "$1" -q -N -6 -o 'fmt:%sa,%da,%sp,%dp,%pr,%ipkt,%ibyt,%opkt,%obyt' 2>/dev/null |
		tr -d ' ' | awk -F, '
		# the reverse direction of an ICMP query biflow carries its answer type (FLOW.md,
		# "The flow key": echo 8/0, timestamp 13/14, information 15/16, mask 17/18;
		# ICMPv6 echo 128/129, node information 139/140)
		function answer(pr, tc,   t, c) {
			t = tc; c = tc; sub(/\..*/, "", t); sub(/^[^.]*\./, "", c)
			if (pr == 1 && (t == 8 || t == 0)) t = 8 - t
			else if (pr == 1 && t >= 13 && t <= 18) t = (t % 2) ? t + 1 : t - 1
			else if (pr == 58 && (t == 128 || t == 139)) t = t + 1
			else if (pr == 58 && (t == 129 || t == 140)) t = t - 1
			return t "." c
		}
		{ print $1 "," $2 "," $3 "," $4 "," $5 "," $6 "," $7
			if ($8 > 0) { rs = $4; rd = $3
				if ($5 == 1 || $5 == 58) { rs = $3; rd = answer($5, $4) }
				print $2 "," $1 "," rs "," rd "," $5 "," $8 "," $9 } }' | LC_ALL=C sort
}

# truth lines with ICMP and ICMPv6 summed per source, destination and protocol (how
# ipfixprobe keys them); other lines as they are
icmp_summed() {
	awk -F, '$5 == 1 || $5 == 58 { k = $1 "," $2 ",*,*," $5; p[k] += $6; b[k] += $7; next }
		{ print } END { for (k in p) print k "," p[k] "," b[k] }' | LC_ALL=C sort
}

tool_cmd() { # tool pcap port -> CMD (the command line, pinned with taskset)
	local tool=$1 f=$2 port=$3
	local common=(flow --pcap "$f" --quiet --active "$ACTIVE" --inactive "$INACTIVE"
		--collector "udp://127.0.0.1:$port")
	local extra
	read -r -a extra <<<"${SECHO_ARGS:-}"
	common+=("${extra[@]}")
	local ipxp=("$IPXP" -L "$IPXP_L" -i "pcap;file=$f"
		-s "cache;size=20;active=$ACTIVE;inactive=$INACTIVE" -o "ipfix;udp;host=127.0.0.1;port=$port")
	case $tool in
	secho-w1) CMD=(taskset -c 0 "$S" "${common[@]}") ;;
	secho-w2) CMD=(taskset -c "0,1" "$S" "${common[@]}" --workers 2) ;;
	secho-base) CMD=(taskset -c 0 "$SECHO_BASE" "${common[@]}") ;;
	secho-feat) CMD=(taskset -c 0 "$S" "${common[@]}" --features "$FEATURES") ;;
	secho-fjson) CMD=(taskset -c 0 "$S" "${common[@]}" --features "$FEATURES" --json /dev/null) ;;
	secho-base-feat) CMD=(taskset -c 0 "$SECHO_BASE" "${common[@]}" --features "$FEATURES") ;;
	softflowd)
		CMD=(taskset -c 0 softflowd -d -r "$f" -n "127.0.0.1:$port" -v 10 -m 1000000 -c none
			-p "$W/sf.pid") ;;
	pmacctd)
		printf '%s\n' "daemonize: false" "pcap_savefile: $f" "pcap_savefile_wait: false" \
			"plugins: nfprobe" "nfprobe_receiver: 127.0.0.1:$port" "nfprobe_version: 10" \
			"nfprobe_maxflows: 1000000" \
			"aggregate: src_host, dst_host, src_port, dst_port, proto, tos" \
			"plugin_buffer_size: 65536" "plugin_pipe_size: 33554432" \
			"pidfile: $W/pm.pid" "logfile: $W/pm.log" >"$W/pm.conf"
		CMD=(taskset -c 0 pmacctd -f "$W/pm.conf") ;;
	ipfixprobe) CMD=(taskset -c 0 "${ipxp[@]}") ;;
	ipfixprobe-feat) CMD=(taskset -c 0 "${ipxp[@]}" "${IPXP_P[@]}") ;;
	esac
}

# ratio_line A B: A's median rate over B's (wall and CPU), and the range of the rounds' own
# ratios
ratio_line() {
	local a=$W/$1.rows b=$W/$2.rows
	[ -s "$a" ] && [ -s "$b" ] || return 0
	paste -d' ' "$a" "$b" | awk -v A="$1" -v B="$2" -v n="$NROWS" '
		function med(x, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
			if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
			return (k % 2) ? x[(k + 1) / 2] : (x[k / 2] + x[k / 2 + 1]) / 2 }
		$1 == 0 || $2 == 0 || $(n + 1) == 0 || $(n + 2) == 0 { zero = 1; next }
		{ k++; wa[k] = $1; wb[k] = $(n + 1); ca[k] = $2; cb[k] = $(n + 2)
			r = $1 / $(n + 1); if (k == 1 || r < rlo) rlo = r; if (k == 1 || r > rhi) rhi = r
			c = $(n + 2) / $2; if (k == 1 || c < clo) clo = c; if (k == 1 || c > chi) chi = c }
		END { if (zero || !k) { printf "ratio %s / %s: - (a rate or a CPU time rounds to 0)\n", A, B; exit }
			printf "ratio %s / %s: %.2fx by wall time (rounds %.2f-%.2f), %.2fx by CPU time (rounds %.2f-%.2f)\n",
			A, B, med(wa, k) / med(wb, k), rlo, rhi, med(cb, k) / med(ca, k), clo, chi }'
}
NROWS=12 # fields per row below

echo "# flow_bench: ${FEATURES:+--features $FEATURES, }${SECHO_ARGS:+secho with $SECHO_ARGS, }$ROUNDS rounds, tools:$TOOLS, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
	"family $(grep -m1 'cpu family' /proc/cpuinfo | awk '{print $NF}')" \
	"model $(grep -m1 '^model\s' /proc/cpuinfo | awk '{print $NF}'), $(nproc) CPUs;" \
	"shared machine, load at start $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $("$S" --version 2>/dev/null | head -1)" \
	"| softflowd $(command -v softflowd >/dev/null && softflowd -h 2>&1 | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -1)" \
	"| pmacctd $(command -v pmacctd >/dev/null && pmacctd -V 2>&1 | head -1) | nfcapd $(nfdump -V | awk '{print $NF}')" \
	"| ipfixprobe ${IPXP:+$("$IPXP" -V 2>&1 | head -1)}${IPXP_WHY:+-}"
[ -n "$FEATURES" ] && [ -z "$IPXP_WHY" ] && echo "# ipfixprobe-feat plugins: ${IPXP_P[*]}"

# the captures: label|file
CAPS=()
if [ ${#PCAPS[@]} -gt 0 ]; then
	for f in "${PCAPS[@]}"; do CAPS+=("$(basename "$f")|$f"); done
else
	for p in $PROFILES; do
		f=$DIR/$p-$PACKETS.pcap
		[ -n "$ENCAP" ] && f=$DIR/$p-$PACKETS-${ENCAP//:/-}.pcap
		if [ ! -s "$f.truth.csv" ]; then
			"$S" flow gen --profile "$p" --packets "$PACKETS" --seed 1 -o "$f" -q \
				${ENCAP:+--encap "$ENCAP"} || exit 1
		fi
		CAPS+=("$p|$f")
	done
fi
for c in "${CAPS[@]}"; do
	p=${c%%|*} f=${c#*|}
	cat "$f" >/dev/null # into the page cache
	if [ ${#PCAPS[@]} -gt 0 ]; then
		npk=$(capinfos -c -M "$f" 2>/dev/null | sed -n 's/^Number of packets: *\([0-9]*\).*/\1/p')
		if [ -z "$npk" ] || [ "$npk" = 0 ]; then
			echo "flow_bench: capinfos counts no packets in $f"
			exit 1
		fi
	else
		npk=$PACKETS
	fi
	TRUTH=yes
	if [ -s "$f.truth.csv" ]; then
		grep -v '^#' "$f.truth.csv" | tail -n +2 | awk -F, '{ dp = $8; if ($4 == 1 || $4 == 58) dp = $9 "." $10;
			print $5 "," $6 "," $7 "," dp "," $4 "," $11 "," $12 }' | LC_ALL=C sort >"$W/want"
		icmp_summed <"$W/want" >"$W/want.icmp"
		tpk=$(sed -n 's/^# flow_packets=//p' "$f.truth.csv")
		tby=$(sed -n 's/^# flow_octets=//p' "$f.truth.csv")
	else
		TRUTH=no tpk=- tby=-
		echo "# $p: exactness not checked: no truth ($f.truth.csv)"
	fi
	for t in $TOOLS; do : >"$W/$t.rows"; done
	for r in $(seq 1 "$ROUNDS"); do
		order=$TOOLS
		[ $((r % 2)) = 0 ] && order=$(echo "$TOOLS" | tr ' ' '\n' | tac | tr '\n' ' ')
		for t in $order; do
			# niced up and on a CPU of its own (the tools run on CPU 0): a collector
			# that waits for a CPU loses datagrams, and woken by the meter's sends
			# the scheduler put it on the meter's CPU; 128 MB of receive buffer
			# (net.core.rmem_max raised above, else the kernel gives 8 MiB): at
			# the end of a capture a meter exports every flow it holds at once,
			# faster than nfcapd writes them (16 MB lost datagrams at 4 M packets/s
			# on light and short)
			nfcapd_start "$W/nf" "$W/nf.log" 128000000 "${NF_CPU[@]}" nice -n -10 ||
				{ echo "flow_bench: nfcapd did not start"; exit 1; }
			if [ $WARM = 1 ]; then # after the collector's start: nothing between the runs
				tool_cmd "$t" "$f" 9
				"${CMD[@]}" >/dev/null 2>&1
			fi
			tool_cmd "$t" "$f" "$NF_PORT"
			/usr/bin/time -o "$W/time" -f '%e %U %S %M' "${CMD[@]}" >"$W/$t.out" 2>&1
			rc=$?
			nfcapd_stop 600
			read -r wall usr sys rss <"$W/time"
			id=$(grep 'Ident:' "$W/nf.log" | tail -1)
			fl=$(echo "$id" | sed -n 's/.*Flows: \([0-9]*\).*/\1/p')
			pk=$(echo "$id" | sed -n 's/.*Flows: [0-9]*, Packets: \([0-9]*\).*/\1/p')
			by=$(echo "$id" | sed -n 's/.*Bytes: \([0-9]*\).*/\1/p')
			se=$(echo "$id" | sed -n 's/.*Sequence Errors: \([0-9]*\).*/\1/p')
			exact=- miss=- extra=-
			if [ "$TRUTH" = yes ]; then
				nf_lines "$W/nf" >"$W/got"
				want=$W/want
				case $t in ipfixprobe*)
					icmp_summed <"$W/got" >"$W/got.icmp"
					mv "$W/got.icmp" "$W/got"
					want=$W/want.icmp ;;
				esac
				miss=$(LC_ALL=C comm -23 "$want" "$W/got" | wc -l)
				extra=$(LC_ALL=C comm -13 "$want" "$W/got" | wc -l)
				exact=no
				[ "$miss" = 0 ] && [ "$extra" = 0 ] && exact=yes
			fi
			pps=$(awk -v n="$npk" -v w="$wall" 'BEGIN { printf "%.0f", n / (w > 0 ? w : 0.01) }')
			cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
			echo "$pps $cpu $wall $rss ${fl:-0} ${pk:-0} ${by:-0} ${se:-?} $exact $miss $extra $rc" >>"$W/$t.rows"
			printf '# %-6s round %d %-15s %9s pps  cpu %5s s  wall %6s s  rss %7s KB  nfcapd: flows %s packets %s bytes %s seq_errors %s  exact %s (missing %s, extra %s) exit %s  load %s\n' \
				"$p" "$r" "$t" "$pps" "$cpu" "$wall" "$rss" "${fl:-0}" "${pk:-0}" "${by:-0}" "${se:-?}" "$exact" "$miss" "$extra" "$rc" "$(cut -d' ' -f1 /proc/loadavg)"
		done
	done
	ref=$(awk '{print $1}' "$W/$REF.rows" 2>/dev/null | median)
	echo
	if [ "$TRUTH" = yes ]; then
		echo "profile $p: $npk packets, $(wc -l <"$W/want") truth flows, $tpk packets in flows, $tby bytes"
	else
		echo "capture $p: $npk packets, no truth"
	fi
	printf '%-15s %10s %12s %8s %8s %10s %8s %9s %8s %9s %7s\n' tool "pps" "vs $REF" "vs ipxp" \
		"CPU s" "pkt/CPU-s" "RSS MB" flows seq_err "pk/by ok" exact
	for t in $TOOLS; do
		rows=$W/$t.rows
		pps=$(awk '{print $1}' "$rows" | median)
		cpu=$(awk '{print $2}' "$rows" | median)
		rss=$(awk '{print $4 / 1024}' "$rows" | median)
		fl=$(awk '{print $5}' "$rows" | median)
		se=$(awk '{print $8}' "$rows" | sort -u | tr '\n' '/' | sed 's#/$##')
		tot=-
		if [ "$TRUTH" = yes ]; then
			tot=no
			awk -v p="$tpk" -v b="$tby" '$6 != p || $7 != b { bad = 1 } END { exit bad }' "$rows" && tot=yes
		fi
		ex=$(awk '{print $9}' "$rows" | sort -u | tr '\n' '/' | sed 's#/$##')
		ratio=- rip=-
		[ -n "$ref" ] && [ "$ref" != 0 ] && ratio=$(awk -v a="$pps" -v b="$ref" 'BEGIN { printf "%.2fx", a / b }')
		ip=ipfixprobe
		case $t in secho-feat | secho-fjson | secho-base-feat) ip=ipfixprobe-feat ;; esac
		ipr=$(awk '{print $1}' "$W/$ip.rows" 2>/dev/null | median)
		[ -n "$ipr" ] && [ "$ipr" != 0 ] && rip=$(awk -v a="$pps" -v b="$ipr" 'BEGIN { printf "%.2fx", a / b }')
		ppc=$(awk -v n="$npk" -v c="$cpu" 'BEGIN { printf "%.0f", n / (c > 0 ? c : 0.01) }')
		printf '%-15s %10.0f %12s %8s %8.2f %10s %8.1f %9.0f %8s %9s %7s\n' "$t" "$pps" "$ratio" "$rip" "$cpu" "$ppc" "$rss" "$fl" "$se" "$tot" "$ex"
	done
	if [ -n "$FEATURES" ]; then
		ratio_line secho-feat secho-w1
		ratio_line secho-fjson secho-w1
		ratio_line secho-feat secho-base-feat
		ratio_line secho-feat ipfixprobe-feat
		ratio_line secho-fjson ipfixprobe-feat
		ratio_line secho-w1 ipfixprobe
		ratio_line ipfixprobe-feat ipfixprobe
	else
		ratio_line secho-w1 ipfixprobe
		ratio_line secho-w1 softflowd
		ratio_line secho-base softflowd
		ratio_line secho-w1 secho-base
		ratio_line ipfixprobe softflowd
	fi
	echo
done
