#!/usr/bin/env bash
# tests/sh/test_e2e.sh - the endpoint and the host tool on a virtual wire.
#
#   ns host (192.0.2.1)  ==== veth ====  ns endpoint (no IP stack address)
#   secho host paired/load/counters       secho serve --ip 192.0.2.2
#   (raw AF_PACKET, every field checked   (AF_PACKET or AF_XDP, openssl or ipsec-mb
#    against nettle's AES-256-GCM)          offload)
#
# Checks: 500 packets per path all verified; counters consistent (every frame received
# answered or dropped under a reason); the malformed corpus sent live gets no answer and
# is counted; restarts mid-load (SIGTERM and kill -9) never reuse a sequence number over
# the whole test; every I/O backend x offload backend; AF_ALG refused clearly where the
# kernel lacks it. A backend is reported UNAVAILABLE only when build/tools/feature_probe,
# asking the kernel directly, says the machine lacks it; otherwise a failure to start is a
# FAIL. Namespaces and processes are removed on any exit (trap).
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
S=${SECHO_BIN:-$ROOT/build/secho}
BUILD=${BUILD:-build}
PROBE=$ROOT/$BUILD/tools/feature_probe
# shellcheck source=tests/sh/netns.sh
. "$ROOT/tests/sh/netns.sh"

if why=$(netns_unavailable); then
	echo "UNAVAILABLE e2e: $why"
	exit 0
fi
D=$(mktemp -d /tmp/secho-e2e.XXXXXX)
EP=
cleanup() { stop_ep TERM; netns_cleanup; rm -rf "$D"; }
trap cleanup EXIT
trap 'exit 1' INT TERM
netns_setup || { echo "FAIL e2e: cannot build the namespaces"; exit 1; }

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; }
check() { # description, shell condition (one string, evaluated)
	if eval "$2"; then pass "$1"; else fail "$1"; fi
}

"$S" keygen --key-id 42 --out "$D/key" >/dev/null || { fail "keygen"; exit 1; }

# start_ep IO OFFLOAD [serve args]: start the endpoint, wait (bounded) for its banner
# (netns.sh: serve_start). When it exits instead, its status is in EP_RC.
start_ep() {
	local io=$1 off=$2
	shift 2
	serve_start endpoint "$D/serve.log" --iface "$IF_E" --ip "$IP_E/24" --key "$D/key" \
		--state "$D/seq.state" --io "$io" --offload "$off" "$@"
	local rc=$?
	EP=$SERVE_PID EP_RC=$SERVE_RC
	return $rc
}
# Why the kernel cannot give us FEATURE (afalg, xdp) here, or nothing when it can: asked
# of the kernel itself (XDP in the endpoint namespace, on its lo, which no test uses).
machine_lacks() {
	local out
	if [ "$1" = xdp ]; then
		out=$(in_e "$PROBE" xdp lo 2>&1)
	else
		out=$("$PROBE" "$1" 2>&1)
	fi
	case $? in
	0) return 1 ;;
	3) echo "$out"; return 0 ;;
	*) echo "feature_probe failed: $out" >&2; return 1 ;;
	esac
}
[ -x "$PROBE" ] || { echo "FAIL e2e: $PROBE not built"; exit 1; }
host() { # subcommand args...
	local sub=$1
	shift
	# --timeout 1000: a loaded 2-core machine stalls for hundreds of milliseconds at
	# times; a late answer would count as lost (a later --timeout overrides this one)
	in_h "$S" host "$sub" --key "$D/key" --iface "$IF_H" --dst-mac "$MAC_E" --src-ip "$IP_H" \
		--dst-ip "$IP_E" --quiet --seq-log "$D/seqs" --timeout 1000 "$@"
}
counters() { host counters --json >"$1" 2>"$D/counters.err"; }
jqn() { jq -r "$1" "$2"; }

# ---- 1. paired run, 500 per path, AF_PACKET + OpenSSL ----
if start_ep packet openssl; then
	host paired --count 500 --json >"$D/paired.json" 2>"$D/paired.err"
	rc=$?
	v_s=$(jqn '.paths.streaming.verified' "$D/paired.json" 2>/dev/null)
	v_o=$(jqn '.paths.offload.verified' "$D/paired.json" 2>/dev/null)
	echo "  paired: streaming $v_s/500, offload $v_o/500 verified (exit $rc)"
	check "paired 500 per path (packet, openssl): 1000 of 1000 verified" \
		'[ "$rc" -eq 0 ] && [ "$v_s" = 500 ] && [ "$v_o" = 500 ]'
	[ "$rc" -eq 0 ] || sed 's/^/  /' "$D/paired.err" | head -20

	# ---- 2. counters consistent ----
	if counters "$D/c1.json"; then
		rx=$(jqn '.report.rx_frames' "$D/c1.json")
		tx=$(jqn '.report.tx_frames' "$D/c1.json")
		drops=$(jqn '[.report.drops[]] | add' "$D/c1.json")
		arp=$(jqn '.report.arp_answered' "$D/c1.json")
		echo "  counters: rx $rx tx $tx drops $drops arp answered $arp"
		# The report is built before its own transmission: rx counts its request,
		# tx does not count it yet.
		# (an answered ARP is in rx and tx alike; arp_answered only says how many)
		check "counters consistent: rx ($rx) = tx ($tx) + drops ($drops) + 1" \
			'[ "$rx" -eq $((tx + drops + 1)) ]'
		ps=$(jqn '.report.engines.streaming.packets' "$D/c1.json")
		po=$(jqn '.report.engines.offload.packets' "$D/c1.json")
		check "counters: 500 answered per engine ($ps streaming, $po offload)" \
			'[ "$ps" -eq 500 ] && [ "$po" -eq 500 ]'
	else
		fail "counters report fetched and verified"
		sed 's/^/  /' "$D/counters.err" | head
	fi

	# ---- 3. malformed corpus sent live: no answer, every frame counted ----
	if "$ROOT/$BUILD/tests/test_wire" --write-pcap "$D/corpus.pcap" >/dev/null; then
		counters "$D/c2.json"
		# Frames shorter than an Ethernet header cannot go on the wire: skipped.
		n=$(in_h "$ROOT/$BUILD/tools/pcap_send" "$IF_H" "$D/corpus.pcap" | awk '{print $2}')
		sleep 0.5
		counters "$D/c3.json"
		drx=$(($(jqn '.report.rx_frames' "$D/c3.json") - $(jqn '.report.rx_frames' "$D/c2.json")))
		dtx=$(($(jqn '.report.tx_frames' "$D/c3.json") - $(jqn '.report.tx_frames' "$D/c2.json")))
		ddrop=$(($(jqn '[.report.drops[]] | add' "$D/c3.json") - $(jqn '[.report.drops[]] | add' "$D/c2.json")))
		echo "  corpus: $n frames sent; endpoint rx +$drx, tx +$dtx, drops +$ddrop"
		# tx +1 is the first report itself; rx +n+1 is the corpus and the second request.
		check "malformed corpus ($n frames) sent live: none answered" '[ "$dtx" -eq 1 ]'
		check "malformed corpus: every frame received and counted under a drop reason" \
			'[ "$drx" -eq $((n + 1)) ] && [ "$ddrop" -eq "$n" ]'
	else
		fail "malformed corpus written"
	fi
	stop_ep TERM
	grep -q 'summary' "$D/serve.log" && pass "SIGTERM: drained and printed a summary" ||
		fail "SIGTERM: drained and printed a summary"
else
	fail "endpoint started (packet, openssl)"
	sed 's/^/  /' "$D/serve.log"
fi

# ---- 4. restarts mid-load, SIGTERM and kill -9: no sequence number ever reused ----
restarts=0
if start_ep packet openssl; then
	host load --seconds 8 --max-loss 1000000000 --json >"$D/load.json" 2>"$D/load.err" &
	LP=$!
	for sig in 9 TERM 9 9 TERM; do
		sleep 1
		stop_ep "$sig"
		start_ep packet openssl && restarts=$((restarts + 1))
	done
	wait "$LP"
	lrc=$?
	host paired --count 100 --json >"$D/paired2.json" 2>"$D/paired2.err"
	prc=$?
	stop_ep TERM
	total=$(wc -l <"$D/seqs")
	dups=$(sort -n "$D/seqs" | uniq -d | wc -l)
	verified=$(jqn '[.totals[].verified] | add' "$D/load.json" 2>/dev/null)
	failed=$(jqn '[.totals[].failed] | add' "$D/load.json" 2>/dev/null)
	echo "  restarts: $restarts (kill -9 x3, SIGTERM x2) during an 8 s load; load verified" \
		"${verified:-?}, failed ${failed:-?}; $total sequence numbers seen, $dups repeated"
	[ "${failed:-1}" = 0 ] || echo "  load failures: $(jq -c "[.totals[].failures]" "$D/load.json")"
	check "restarts: endpoint came back $restarts of 5 times" '[ "$restarts" -eq 5 ]'
	check "load across restarts: every answer verified (losses allowed while down)" \
		'[ "$lrc" -eq 0 ] && [ "${failed:-1}" = 0 ] && [ "${verified:-0}" -gt 0 ]'
	check "paired after restarts: 200 of 200 verified" '[ "$prc" -eq 0 ]'
	check "no sequence number reused over the whole test ($total seen, $restarts restarts)" \
		'[ "$dups" -eq 0 ] && [ "$total" -gt 1000 ]'
else
	fail "endpoint started for the restart test"
fi

# ---- 5. every I/O backend x offload backend ----
for io in packet xdp; do
	for off in openssl ipsec-mb; do
		if ! start_ep "$io" "$off"; then
			if [ "$io" = xdp ] && why=$(machine_lacks xdp); then
				echo "UNAVAILABLE paired ($io, $off): the machine lacks it: $why"
			else
				fail "endpoint started ($io, $off)"
				sed 's/^/  /' "$D/serve.log" | head -5
			fi
			continue
		fi
		host paired --count 200 --json >"$D/p.json" 2>"$D/p.err"
		rc=$?
		sed -n 's/^secho serve: io: /  io: /p' "$D/serve.log"
		nv=$(jqn '[.paths[].verified] | add' "$D/p.json")
		check "paired 200 per path ($io, $off): $nv of 400 verified" \
			'[ "$rc" -eq 0 ] && [ "$nv" = 400 ]'
		[ "$rc" -eq 0 ] || echo "  $(jq -c '[.paths[] | {sent, lost, late, failed, failures}]' "$D/p.json")"
		stop_ep TERM
	done
done

# ---- 5b. busy-poll: the idle warm-up (a canned request through the data path under a
# throwaway key) sends nothing, takes no sequence number and changes no counter ----
if start_ep packet openssl --busy-poll; then
	before=$(wc -l <"$D/seqs")
	host paired --count 200 --json >"$D/bp.json" 2>"$D/bp.err"
	rc=$?
	nv=$(jqn '[.paths[].verified] | add' "$D/bp.json")
	read -r n lo hi < <(tail -n +$((before + 1)) "$D/seqs" | sort -n |
		awk 'NR == 1 {lo = $1} {hi = $1} END {print NR, lo, hi}')
	check "busy-poll: paired 200 per path: $nv of 400 verified" '[ "$rc" -eq 0 ] && [ "$nv" = 400 ]'
	# (the paired run's own exchanges: 400 requests and its counters report)
	check "busy-poll: sequence numbers contiguous, none taken by warm-ups ($n seen, $lo..$hi)" \
		'[ "$n" -ge 400 ] && [ $((hi - lo + 1)) -eq "$n" ]'
	if counters "$D/bp_c.json"; then
		rx=$(jqn '.report.rx_frames' "$D/bp_c.json")
		tx=$(jqn '.report.tx_frames' "$D/bp_c.json")
		drops=$(jqn '[.report.drops[]] | add' "$D/bp_c.json")
		# every frame sent is one the host saw (one sequence number each); the report
		# being built counts its request in rx and is not sent yet
		check "busy-poll: counters unchanged by warm-ups: tx ($tx) = answers seen ($n), rx ($rx) = tx + 1, drops ($drops) = 0" \
			'[ "$tx" -eq "$n" ] && [ "$rx" -eq $((tx + 1)) ] && [ "$drops" -eq 0 ]'
	else
		fail "busy-poll: counters report fetched and verified"
	fi
	stop_ep TERM
else
	fail "endpoint started (packet, openssl, --busy-poll)"
	sed 's/^/  /' "$D/serve.log" | head -5
fi

# ---- 6. ARP and socket mode: with --arp the host kernel resolves the endpoint itself ----
in_h ip neigh del "$IP_E" dev "$IF_H" 2>/dev/null
if start_ep packet openssl; then
	# without --arp: no answer to ARP, so the socket-mode run loses everything
	in_h "$S" host paired --count 20 --key "$D/key" --dst-ip "$IP_E" --timeout 100 \
		--quiet --json >"$D/noarp.json" 2>/dev/null
	rc_noarp=$?
	lost_noarp=$(jqn '[.paths[].lost] | add' "$D/noarp.json" 2>/dev/null)
	stop_ep TERM
	in_h ip neigh flush dev "$IF_H" 2>/dev/null
	start_ep packet openssl --arp
	# --timeout 3000: the first request waits for ARP, whose retransmission timer is 1 s
	# should the first exchange be missed on a busy machine
	in_h "$S" host paired --count 100 --key "$D/key" --dst-ip "$IP_E" --timeout 3000 --quiet --json \
		>"$D/sock.json" 2>"$D/sock.err"
	rc=$?
	nv=$(jqn '[.paths[].verified] | add' "$D/sock.json" 2>/dev/null)
	lladdr=$(in_h ip neigh show "$IP_E" dev "$IF_H" | awk '{print $3}')
	check "no --arp: ARP ignored, socket-mode host gets no answer (${lost_noarp:-?} of 40 lost)" \
		'[ "$rc_noarp" -eq 1 ] && [ "$lost_noarp" = 40 ]'
	check "--arp: the host kernel resolved $IP_E to $lladdr" '[ "$lladdr" = "$MAC_E" ]'
	check "--arp, socket mode: ${nv:-0} of 200 verified" '[ "$rc" -eq 0 ] && [ "$nv" = 200 ]'
	[ "$rc" -eq 0 ] || echo "  $(jq -c '[.paths[] | {sent, lost, late, failed, failures}], .unmatched' "$D/sock.json" 2>/dev/null)"
	stop_ep TERM
	in_h ip neigh replace "$IP_E" lladdr "$MAC_E" dev "$IF_H" nud permanent
else
	fail "endpoint started for the ARP test"
fi

# ---- 7. AF_ALG: runs where the kernel offers gcm(aes), else refused with the reason ----
if why=$(machine_lacks afalg); then
	# The kernel has no AF_ALG gcm(aes): serve must refuse at start, exit 2, saying so.
	if start_ep packet afalg; then
		fail "afalg offload started although the kernel lacks it ($why)"
		stop_ep TERM
	else
		reason=$(head -1 "$D/serve.log")
		echo "  $reason"
		check "afalg offload refused at start with the reason (exit ${EP_RC:-?}, want 2)" \
			'[ "${EP_RC:-0}" -eq 2 ] && echo "$reason" | grep -q "offload backend afalg unavailable: .*AF_ALG"'
		echo "UNAVAILABLE paired (packet, afalg): the machine lacks it: $why"
	fi
elif start_ep packet afalg; then
	host paired --count 100 >/dev/null 2>&1
	rc=$?
	check "paired 100 per path (packet, afalg)" '[ "$rc" -eq 0 ]'
	stop_ep TERM
else
	fail "endpoint started (packet, afalg): the kernel offers AF_ALG gcm(aes)"
	sed 's/^/  /' "$D/serve.log" | head -5
fi
exit 0
