#!/usr/bin/env bash
# tests/sh/test_dashboard_kill.sh - a dashboard killed with SIGKILL takes its programs with
# it, and the next dashboard removes what it left (docs/API.md, "Leftovers").
#
#   1. dashboard A (random loopback port, its virtual wire) runs a run with a 20 s load;
#      during the load it is killed with SIGKILL: `secho serve` and `secho host load` (the
#      processes in its two namespaces) must be gone within 5 s; its namespaces and its
#      private directory (with the endpoint's key) are still there.
#   2. dashboard B starts: A's namespaces and directory are gone, and three decoy
#      directories it cannot prove stale are left alone (a live owner, no owner mark, a
#      mark naming another pid).
#   3. with B's endpoint running, dashboard C starts: nothing of B is touched.
# Bounded: about 15 s. Everything is removed on any exit (trap).
set -u
# shellcheck source=tests/sh/dashboard_lib.bash
. "$(dirname "$0")/dashboard_lib.bash"
A= C= C_PORT= DECOYS=() PIDS_A=
kill_ns_of() { # pid: remove the namespaces of dashboard pid
	local ns
	for ns in "secho-de-$1" "secho-dh-$1"; do
		if ip netns list 2>/dev/null | grep -qw "$ns"; then
			# shellcheck disable=SC2046
			kill -KILL $(ip netns pids "$ns" 2>/dev/null) 2>/dev/null
			ip netns del "$ns" 2>/dev/null
		fi
	done
}
cleanup() {
	local p
	for p in $A $C; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		kill_ns_of "$p"
		rm -rf "/tmp/secho-dash-$p".*
	done
	# shellcheck disable=SC2086
	[ -n "$PIDS_A" ] && kill -KILL $PIDS_A 2>/dev/null
	for p in "${DECOYS[@]}"; do rm -rf "$p"; done
	dash_cleanup
}
trap cleanup EXIT
CASES="kill-9 sweep live-untouched"
if why=$(dash_unavailable); then
	for c in $CASES; do echo "UNAVAILABLE dashboard leftovers $c: $why"; done
	exit 0
fi

# Decoys: directories named like a dashboard's that must survive every sweep.
start_ticks() { awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$1/stat"; }
sh -c 'exit 0' &
dead=$!
wait "$dead"
mk_decoy() { # name owner-text ("" = no owner file)
	mkdir -m 0700 "/tmp/$1" || return 1
	DECOYS+=("/tmp/$1")
	[ -n "$2" ] && printf '%b' "$2" >"/tmp/$1/owner"
	: >"/tmp/$1/endpoint.key"
}
mk_decoy "secho-dash-$$.decoyA" "secho-dashboard 1\npid $$\nstart $(start_ticks $$)\n"
mk_decoy "secho-dash-$dead.decoyB" ""
mk_decoy "secho-dash-$dead.decoyC" "secho-dashboard 1\npid $$\nstart 1\n"

# ---- 1. kill -9 during a run's load ----
t_begin "dashboard leftovers kill-9"
dash_start || { echo "FAIL dashboard leftovers: dashboard A did not start"; exit 1; }
A=$DASH_PID
post /api/runs '{"count": 100, "size": 100, "load_seconds": 20}'
is "$CODE" 202 "POST /api/runs"
ID=$(jget '.id')
phase=
for _ in $(seq 1 150); do
	req GET "/api/runs/$ID"
	phase=$(jget '.phase')
	[ "$phase" = load ] || [ "$(jget '.state')" != running ] && break
	sleep 0.2
done
is "$phase" load "run in its load phase"
sleep 0.5
ep=$(ip netns pids "secho-de-$A" 2>/dev/null | tr '\n' ' ')
hp=$(ip netns pids "secho-dh-$A" 2>/dev/null | tr '\n' ' ')
PIDS_A="$ep $hp"
echo "  dashboard $A; endpoint namespace: $ep; host namespace: $hp"
[ -n "$ep" ] && [ -n "$hp" ]
t_check $? "the endpoint and the host tool run in A's namespaces"
kill -KILL "$A"
{ wait "$A"; } 2>/dev/null
DASH_PID=
left=
for _ in $(seq 1 50); do
	left=
	for p in $PIDS_A; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
	[ -z "$left" ] && break
	sleep 0.1
done
[ -z "$left" ]
t_check $? "A's programs died with it within 5 s (still running:${left:- none})"
[ -n "$left" ] && for p in $left; do ps -o pid=,args= -p "$p"; done | sed 's/^/  /'
ip netns list | grep -qw "secho-de-$A" && ls -d "/tmp/secho-dash-$A".* >/dev/null 2>&1
t_check $? "A's namespaces and private directory are left behind (SIGKILL: no clean-up)"
t_end

# ---- 2. the next dashboard removes them, and nothing else ----
t_begin "dashboard leftovers sweep"
dash_start || { echo "FAIL dashboard leftovers: dashboard B did not start"; exit 1; }
B=$DASH_PID
ip netns list | grep -qE "secho-d[eh]-$A( |\$)"
t_check $((!$?)) "A's namespaces removed by B"
ls -d "/tmp/secho-dash-$A".* >/dev/null 2>&1
t_check $((!$?)) "A's private directory (and key) removed by B"
grep -q "removed what dashboard $A " "$DASH_TMP/dash.log"
t_check $? "B says what it removed"
for d in "${DECOYS[@]}"; do
	[ -f "$d/endpoint.key" ]
	t_check $? "decoy $d left alone"
done
t_end

# ---- 3. a live dashboard's wire is not touched by another's sweep ----
t_begin "dashboard leftovers live-untouched"
post /api/endpoint/start ''
is "$(jget '.running')" true "B's endpoint up"
C_PORT=$((20000 + (RANDOM % 20000)))
"$SECHO" dashboard --listen "127.0.0.1:$C_PORT" --quiet >"$DASH_TMP/dash-c.log" 2>&1 &
C=$!
for _ in $(seq 1 50); do
	curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$C_PORT/api" && break
	sleep 0.1
done
kill -0 "$C" 2>/dev/null
t_check $? "dashboard C started"
req GET /api/endpoint
is "$(jget '.running')" true "B's endpoint still running after C started"
ip netns list | grep -qw "secho-de-$B" && ip netns list | grep -qw "secho-dh-$B"
t_check $? "B's namespaces still there"
ls "/tmp/secho-dash-$B".*/endpoint.key >/dev/null 2>&1
t_check $? "B's key still there"
kill -TERM "$C"
wait "$C" 2>/dev/null
C=
t_end
dash_stop
[ "$T_FAILED_CASES" -eq 0 ]
