#!/usr/bin/env bash
# tests/sh/test_flow_hostile.sh - `secho flow` against inputs that change or lie, and
# runs that do not end as planned (docs/FLOW.md, "Hostile inputs, lag and limits").
#
#   - a capture that shrinks while it is read (a rotating capture truncated under the
#     reader): the meter is held mid-file on a full --json FIFO (deterministic), the file
#     is truncated, then the FIFO drained: exit 1 with the reason, the summary printed and
#     the records so far exported; no SIGBUS; 1 and 2 workers.
# No network, no root needed. Every meter runs under timeout.
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
[ "$g_failed" -eq 0 ]
