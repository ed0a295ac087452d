#!/usr/bin/env bash
# tests/sh/test_flow_codegen.sh - the flow table's bursts request their memory ahead.
#
# secho_flow_table_burst() and secho_flow_table_burst_prepared() ask for every packet's
# cache slot, then its entry or bucket, some packets before its update (src/flow/core/table.c).
# Those requests are prefetch instructions that change no result, so no functional test
# sees them go; and GCC 12 did make them go, deleting the calls of the small helpers that
# issued them (found free of side effects, ipa-modref). This test reads the compiled
# object: each burst, with the burst_* stage it calls, must hold the prefetches of a cache
# slot, of a bucket, and of an entry's two lines twice (named by the slot, or found in the
# bucket): 6.
#
# OBJ=path/to/table.o checks another build's object (to see the test fail on one without).
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
OBJ=${OBJ:-$ROOT/$BUILD/obj/src/flow/core/table.o}

# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"

need_tools "flow table codegen" objdump || exit 1
if [ ! -f "$OBJ" ]; then
	echo "FAIL flow table codegen: $OBJ not built"
	exit 1
fi

# prefetch instructions in function $1 of the object (0 when it is not there)
prefetches() {
	awk -v f="<$1>:" '$2 == f { on = 1; next } on && /^$/ { on = 0 } on && /prefetch/ { n++ }
		END { print n + 0 }' <<<"$dis"
}
# the local burst_* functions function $1 calls or jumps to (its stages, when not inlined)
stages() {
	awk -v f="<$1>:" '$2 == f { on = 1; next } on && /^$/ { on = 0 }
		on && /(call|jmp)/ && match($0, /<burst_[a-z_]+>/) { print substr($0, RSTART + 1, RLENGTH - 2) }' <<<"$dis" |
		sort -u
}

group "flow table codegen: the bursts' prefetches are compiled in"
dis=$(objdump -d --no-show-raw-insn "$OBJ")
for f in secho_flow_table_burst secho_flow_table_burst_prepared; do
	if ! grep -q "<$f>:" <<<"$dis"; then
		check 1 "$f: not in $OBJ"
		continue
	fi
	n=$(prefetches "$f") from="$f $n"
	for s in $(stages "$f"); do
		k=$(prefetches "$s")
		n=$((n + k)) from="$from, $s $k"
	done
	# a cache slot, a bucket, an entry's two lines twice, in the burst or its stages
	[ "$n" -ge 6 ]
	check $? "$f: $n prefetch instructions ($from), want 6 or more"
done
end_group

[ "$g_failed" -eq 0 ]
