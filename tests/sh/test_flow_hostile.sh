#!/usr/bin/env bash
# tests/sh/test_flow_hostile.sh - `secho flow` against inputs that change or lie, and
# runs that do not end as planned (docs/FLOW.md, "Hostile inputs, lag and limits").
#
#   - a capture that shrinks while it is read (a rotating capture truncated under the
#     reader): the meter is held mid-file on a full --json FIFO (deterministic), the file
#     is truncated, then the FIFO drained: exit 1 with the reason, the summary printed and
#     the records so far exported; no SIGBUS; 1 and 2 workers;
#   - an offline run stopped by SIGINT or SIGTERM mid-file (held on the FIFO the same way):
#     exit 1, saying the file was not read to its end; the records so far exported;
#   - time going backwards: the issue's capture (X at T, 100 flows at T+100.., X at T+10, 40
#     flows at T+111..) gives the same records with 1 and 2 workers, X judged at the packet
#     clock (two records, each with its own time); packets at T+100, T+50, T+10 give one
#     record from T+10 to T+100;
#   - link types: Linux cooked captures (113; pcap and pcapng) give the records the same
#     frames give over Ethernet; records of interfaces of another link type (Linux cooked
#     v2, 276) are counted (summary, --json-stats), and a file with nothing else is an
#     input error (exit 1, saying so);
#   - pcapng times: an if_tsoffset of +-2^40 s or one that puts a packet before 1970 ends
#     the reading with the reason (exit 1), the records before it whole; a legal negative
#     offset moves the times and the flow stays one record;
#   - a UDP collector that is down (a loopback port nobody listens on): the summary says
#     sent and refused by the network, never delivered; --json-stats delivery_known false;
#   - memory: --flows 2^30 (more than MemAvailable) and --flows 2^24 in a 512 MiB memory
#     cgroup made here are refused at start with the numbers (exit 1), not OOM-killed.
# No network; root for the memory cgroup. Every meter runs under timeout.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
S=${SECHO_BIN:-$ROOT/${BUILD:-build}/secho}
T=$(mktemp -d /tmp/secho-flow-hostile.XXXXXX)
trap 'exec 3>&- 2>/dev/null; rm -rf "$T"' EXIT

# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"
[ -x "$S" ] || { echo "FAIL flow hostile inputs: $S not built"; exit 1; }
# watchdog PID S: kill PID after S seconds if it is still there (its own pid, not a
# wrapper's: the checks below read the meter's /proc entries)
watchdog() {
	(
		exec 3>&- # not a writer of the test's FIFO
		sleep "$2"
		kill -KILL "$1" 2>/dev/null
	) >/dev/null 2>&1 &
}

# ---- captures built byte by byte (little-endian) ----
hx() { printf '%b' "$(printf '%s' "$1" | tr -d ' ' | sed 's/../\\x&/g')"; }
le() { # bytes value: the value's low bytes, little-endian
	local i out=""
	for ((i = 0; i < $1; i++)); do out+=$(printf '%02x' $((($2 >> (8 * i)) & 255))); done
	hx "$out"
}
# UDP 198.18.0.1:1111 -> 198.19.0.1:2222 (IPv4 checksum right), 4 bytes of payload; the
# Ethernet, Linux cooked (v1, 16 bytes) and v2 (20 bytes) headers in front of it
IP_X="45000020000040004011aea5c6120001c6130001045708ae000c000061626364"
ETH="020000000002020000000001""0800"
SLL="0000000100060200000000010000""0800"
SLL2="0800""0000""00000002""0001""00""06""020000000001""0000"
pcap_hdr() { le 4 0xa1b2c3d4; le 2 2; le 2 4; le 4 0; le 4 0; le 4 65535; le 4 "$1"; }
pcap_rec() { # sec usec hex
	local n=$((${#3} / 2))
	le 4 "$1"; le 4 "$2"; le 4 $n; le 4 $n; hx "$3"
}
ng_shb() { le 4 0x0a0d0d0a; le 4 28; le 4 0x1a2b3c4d; le 2 1; le 2 0; le 8 -1; le 4 28; }
ng_idb() { # linktype [if_tsoffset]
	if [ $# -eq 1 ]; then
		le 4 1; le 4 20; le 2 "$1"; le 2 0; le 4 65535; le 4 20
	else
		le 4 1; le 4 36; le 2 "$1"; le 2 0; le 4 65535
		le 2 14; le 2 8; le 8 "$2"; le 4 0; le 4 36
	fi
}
ng_epb() { # ifid ts(units) hex
	local n=$((${#3} / 2)) pad
	pad=$(((4 - n % 4) % 4))
	le 4 6; le 4 $((32 + n + pad)); le 4 "$1"; le 4 $(($2 >> 32)); le 4 $(($2 & 0xffffffff))
	le 4 $n; le 4 $n; hx "$3"; le "$pad" 0; le 4 $((32 + n + pad))
}
T0=1767225600 # 2026-01-01, seconds

"$S" flow gen -q --profile light --packets 300000 --seed 3 -o "$T/light.pcap" ||
	{ echo "FAIL flow hostile inputs: flow gen"; exit 1; }

# ---- a capture that shrinks under the reader ----
group "flow: a capture that shrinks while it is read: what was read is exported, exit 1"
for wk in 1 2; do
	cp "$T/light.pcap" "$T/s.pcap"
	rm -f "$T/fifo"
	mkfifo "$T/fifo"
	exec 3<>"$T/fifo" # a reader that reads nothing: the meter fills the pipe and waits
	"$S" flow --pcap "$T/s.pcap" --workers $wk --inactive 0.001 --json "$T/fifo" \
		>"$T/out" 2>"$T/err" &
	pid=$!
	watchdog $pid 60
	held=1
	for _ in $(seq 200); do
		grep -q pipe_write "/proc/$pid/wchan" 2>/dev/null && { held=0; break; }
		sleep 0.05
	done
	check $held "workers $wk: the meter never waited on the full FIFO"
	truncate -s 1000000 "$T/s.pcap"
	cat "$T/fifo" 3>&- >"$T/json" &
	cat_pid=$!
	exec 3>&-
	wait $pid
	r=$?
	wait $cat_pid
	n=$(wc -l <"$T/json")
	[ $r -eq 1 ] && grep -q 'the file shrank while it was read' "$T/err" &&
		grep -q 'what came before it was metered and exported' "$T/err"
	check $? "workers $wk: exit $r (want 1), stderr: $(tail -2 "$T/err" | tr '\n' ' ')"
	grep -q "json:$T/fifo: $n records" "$T/out" && [ "$n" -gt 0 ]
	check $? "workers $wk: $n records exported, summary: $(grep 'json:' "$T/out")"
done
end_group

# ---- an offline run stopped by a signal ----
group "flow: an offline run stopped by a signal says the file was not finished, exit 1"
for wk in 1 2; do
	for sig in INT TERM; do
		rm -f "$T/fifo"
		mkfifo "$T/fifo"
		exec 3<>"$T/fifo" # held mid-file on the full FIFO, as above
		"$S" flow --pcap "$T/light.pcap" --workers $wk --inactive 0.001 --json "$T/fifo" \
			>"$T/out" 2>"$T/err" &
		pid=$!
		watchdog $pid 60
		held=1
		for _ in $(seq 200); do
			grep -q pipe_write "/proc/$pid/wchan" 2>/dev/null && { held=0; break; }
			sleep 0.05
		done
		check $held "workers $wk SIG$sig: the meter never waited on the full FIFO"
		kill -"$sig" $pid
		cat "$T/fifo" 3>&- >"$T/json" &
		cat_pid=$!
		exec 3>&-
		wait $pid
		r=$?
		wait $cat_pid
		n=$(wc -l <"$T/json")
		[ $r -eq 1 ] &&
			grep -q 'stopped by a signal after [0-9]* frames: the file was not read to its end' "$T/err"
		check $? "workers $wk SIG$sig: exit $r (want 1), stderr: $(cat "$T/err")"
		grep -q "json:$T/fifo: $n records" "$T/out" && [ "$n" -gt 0 ]
		check $? "workers $wk SIG$sig: $n records exported, summary: $(grep 'json:' "$T/out")"
	done
done
end_group

# ---- time going backwards ----
group "flow: time going backwards: the same records with 1 and 2 workers; first is the earliest"
udp() { printf '45000020000040004011aea5c6120001c6130001%04x08ae000c000061626364' "$1"; }
xf=$ETH$(udp 1111)
# X at T, 100 flows at T+100..T+109.9, X at T+10, 40 flows at T+111.. (the issue's capture)
{
	pcap_hdr 1
	pcap_rec $T0 0 "$xf"
	for i in $(seq 0 99); do pcap_rec $((T0 + 100 + i / 10)) $((i % 10 * 100000)) "$ETH$(udp $((3000 + i)))"; done
	pcap_rec $((T0 + 10)) 0 "$xf"
	for i in $(seq 0 39); do pcap_rec $((T0 + 111 + i / 10)) $((i % 10 * 100000)) "$ETH$(udp $((4000 + i)))"; done
} >"$T/back.pcap"
for wk in 1 2; do
	timeout 20 "$S" flow --pcap "$T/back.pcap" --workers $wk --json - --quiet 2>/dev/null |
		sed 's/,"end_reason".*//' | sort >"$T/back.$wk"
done
[ -s "$T/back.1" ] && cmp -s "$T/back.1" "$T/back.2"
check $? "1 and 2 workers differ: $(diff "$T/back.1" "$T/back.2" | head -4 | tr '\n' ' ')"
# X: judged at the clock (T+109.9), 109.9 s after its first packet: a second record, with
# its own time
xs=$(grep -c '"sport":1111,' "$T/back.1")
grep -q "\"sport\":1111,.*\"packets\":1,\"octets\":32,\"first_ns\":$((T0 * 1000000000)),\"last_ns\":$((T0 * 1000000000))," "$T/back.1" &&
	grep -q "\"sport\":1111,.*\"packets\":1,\"octets\":32,\"first_ns\":$(((T0 + 10) * 1000000000)),\"last_ns\":$(((T0 + 10) * 1000000000))," "$T/back.1" &&
	[ "$xs" -eq 2 ]
check $? "X: $xs records: $(grep '"sport":1111,' "$T/back.1" | tr '\n' ' ')"
[ "$(wc -l <"$T/back.1")" -eq 142 ]
check $? "$(wc -l <"$T/back.1") records (want 142)"
# one flow, its packets at T+100, T+50, T+10: one record, first T+10, last T+100
{ pcap_hdr 1; for d in 100 50 10; do pcap_rec $((T0 + d)) 0 "$xf"; done; } >"$T/desc.pcap"
for wk in 1 2; do
	timeout 20 "$S" flow --pcap "$T/desc.pcap" --workers $wk --json - --quiet 2>/dev/null >"$T/desc.json"
	[ "$(wc -l <"$T/desc.json")" -eq 1 ] &&
		grep -q "\"packets\":3,\"octets\":96,\"first_ns\":$(((T0 + 10) * 1000000000)),\"last_ns\":$(((T0 + 100) * 1000000000))," "$T/desc.json"
	check $? "T+100, T+50, T+10 ($wk workers): $(cat "$T/desc.json")"
done
end_group

# ---- link types: Linux cooked read, others counted and reported ----
group "flow: Linux cooked captures are read; records of other link types are counted"
{ pcap_hdr 113; for i in 0 1 2; do pcap_rec $T0 $i "$SLL$IP_X"; done; } >"$T/sll.pcap"
{ ng_shb; ng_idb 113; for i in 0 1 2; do ng_epb 0 $((T0 * 1000000 + i)) "$SLL$IP_X"; done; } \
	>"$T/sll.pcapng"
{ pcap_hdr 1; for i in 0 1 2; do pcap_rec $T0 $i "$ETH$IP_X"; done; } >"$T/eth.pcap"
for f in eth.pcap sll.pcap sll.pcapng; do
	timeout 20 "$S" flow --pcap "$T/$f" --json "$T/$f.json" --quiet >"$T/out" 2>"$T/err"
	r=$?
	[ $r -eq 0 ] && [ "$(wc -l <"$T/$f.json")" -eq 1 ] &&
		grep -q '"src":"198.18.0.1","dst":"198.19.0.1","sport":1111,"dport":2222' "$T/$f.json" &&
		grep -q '"packets":3,"octets":96,' "$T/$f.json"
	check $? "$f: exit $r, $(head -c 300 "$T/$f.json") $(cat "$T/err")"
done
# interfaces of a link type not read: Linux cooked v2 beside Ethernet, then alone
{ ng_shb; ng_idb 276; ng_idb 1; for i in 0 1 2; do
	ng_epb 0 $((T0 * 1000000 + i)) "$SLL2$IP_X"; ng_epb 1 $((T0 * 1000000 + i)) "$ETH$IP_X"
done; } >"$T/mixed.pcapng"
timeout 20 "$S" flow --pcap "$T/mixed.pcapng" --json-stats --quiet >"$T/out" 2>"$T/err"
r=$?
[ $r -eq 0 ] && grep -q '"frames_read":3,' "$T/out" && grep -q '"records_skipped":3,' "$T/out"
check $? "mixed: exit $r, $(grep -o '"frames_read":[0-9]*' "$T/out") $(grep -o '"records_skipped":[0-9]*' "$T/out") $(cat "$T/err")"
timeout 20 "$S" flow --pcap "$T/mixed.pcapng" --quiet >"$T/out" 2>"$T/err"
grep -Eq '^  records_skipped +3 ' "$T/out"
check $? "mixed: the summary counts the skipped records: $(grep skipped "$T/out")"
{ ng_shb; ng_idb 276; for i in 0 1 2; do ng_epb 0 $((T0 * 1000000 + i)) "$SLL2$IP_X"; done; } \
	>"$T/sll2.pcapng"
timeout 20 "$S" flow --pcap "$T/sll2.pcapng" --quiet >"$T/out" 2>"$T/err"
r=$?
[ $r -eq 1 ] && grep -q 'no frame read: all its 3 records came from interfaces' "$T/err"
check $? "only cooked v2: exit $r (want 1), $(cat "$T/err")"
end_group

# ---- pcapng times that cannot be represented ----
group "flow: pcapng times out of range (if_tsoffset) end the reading; records stay whole"
# interface 0 plain, interface 1 with the offset: 3 packets of X on 0, then one on 1
for off in 1099511627776 -1099511627776 -$((T0 + 100)); do
	{ ng_shb; ng_idb 1; ng_idb 1 "$off"; for i in 0 1 2; do
		ng_epb 0 $((T0 * 1000000 + i)) "$ETH$IP_X"
	done; ng_epb 1 $((T0 * 1000000 + 3)) "$ETH$IP_X"; } >"$T/off.pcapng"
	timeout 20 "$S" flow --pcap "$T/off.pcapng" --json "$T/off.json" --quiet >"$T/out" 2>"$T/err"
	r=$?
	[ $r -eq 1 ] && grep -q 'is before 1970 or after 2554' "$T/err" &&
		[ "$(wc -l <"$T/off.json")" -eq 1 ] && grep -q '"packets":3,' "$T/off.json"
	check $? "if_tsoffset $off: exit $r (want 1), $(cat "$T/err") $(head -c 200 "$T/off.json")"
done
# a legal negative offset: the times move back a day, the flow stays one record
{ ng_shb; ng_idb 1 -86400; for i in 0 1 2; do ng_epb 0 $((T0 * 1000000 + i)) "$ETH$IP_X"; done; } \
	>"$T/day.pcapng"
timeout 20 "$S" flow --pcap "$T/day.pcapng" --json "$T/day.json" --quiet >"$T/out" 2>"$T/err"
r=$?
[ $r -eq 0 ] && [ "$(wc -l <"$T/day.json")" -eq 1 ] &&
	grep -q "\"packets\":3,\"octets\":96,\"first_ns\":$(((T0 - 86400) * 1000000000)),\"last_ns\":$(((T0 - 86400) * 1000000000 + 2000))," "$T/day.json"
check $? "if_tsoffset -86400: exit $r, $(head -c 300 "$T/day.json") $(cat "$T/err")"
end_group

# ---- a UDP collector that is down ----
group "flow: a UDP collector that is down: sent and refused, never called delivered"
port=$((20000 + RANDOM % 20000))
ss -Hlun "sport = :$port" | grep -q . && port=$((port + 1))
timeout 60 "$S" flow --pcap "$T/light.pcap" --collector "udp://127.0.0.1:$port" --quiet \
	>"$T/out" 2>"$T/err"
r=$?
line=$(grep "ipfix:udp://127.0.0.1:$port:" "$T/out")
[ $r -eq 1 ] && [[ "$line" == *" records sent, "*" refused by the network, "* ]] &&
	[[ "$line" == *"(UDP: whether the rest arrived cannot be known)"* ]] &&
	[[ "$line" != *"not delivered"* ]]
check $? "summary: exit $r, $line"
timeout 60 "$S" flow --pcap "$T/light.pcap" --collector "udp://127.0.0.1:$port" --quiet \
	--json-stats >"$T/out" 2>"$T/err"
grep -q '"name":"ipfix:udp://127.0.0.1:'"$port"'",.*"delivery_known":false}' "$T/out"
check $? "--json-stats: $(grep -o '"sinks":.*' "$T/out")"
end_group

# ---- memory it cannot have ----
group "flow: a table larger than the memory available is refused at start, with the numbers"
"$S" flow gen -q --profile conformance -o "$T/conf.pcap"
# more than MemAvailable on any machine this runs on (about 137 GiB of tables)
timeout 120 "$S" flow --pcap "$T/conf.pcap" --flows 1073741824 --quiet >"$T/out" 2>"$T/err"
r=$?
[ $r -eq 1 ] && grep -q -- '--flows 1073741824 needs [0-9]* MiB of flow tables' "$T/err" &&
	grep -q 'MemAvailable' "$T/err"
check $? "--flows 2^30: exit $r (want 1), $(cat "$T/err")"
# in a memory cgroup of 512 MiB made here (v1 or v2, whichever the machine has)
cg=""
if [ -w /sys/fs/cgroup/memory ] && [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
	cg=/sys/fs/cgroup/memory/secho-test-$$
	mkdir "$cg" && echo $((512 << 20)) >"$cg/memory.limit_in_bytes" || cg=""
elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
	cg=/sys/fs/cgroup/secho-test-$$
	mkdir "$cg" && echo $((512 << 20)) >"$cg/memory.max" || cg=""
fi
if [ -n "$cg" ]; then
	timeout 120 sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
		"$S" flow --pcap "$T/conf.pcap" --flows 16777216 --quiet >"$T/out" 2>"$T/err"
	r=$?
	rmdir "$cg" 2>/dev/null
	[ $r -eq 1 ] && grep -q -- '--flows 16777216 needs [0-9]* MiB of flow tables' "$T/err" &&
		grep -q "cgroup /secho-test-$$: memory.[a-z_]* 512 MiB" "$T/err"
	check $? "--flows 2^24 in a 512 MiB cgroup: exit $r (want 1), $(cat "$T/err")"
	timeout 120 "$S" flow --pcap "$T/conf.pcap" --flows 65536 --quiet >"$T/out" 2>"$T/err"
	check $? "--flows 65536 still runs: $(cat "$T/err")"
else
	check 1 "no memory cgroup could be made (the tests run as root)"
fi
end_group
[ "$g_failed" -eq 0 ]
