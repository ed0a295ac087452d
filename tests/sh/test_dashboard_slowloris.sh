#!/usr/bin/env bash
# tests/sh/test_dashboard_slowloris.sh - the dashboard stays reachable under a slow-client
# flood (slowloris) and closes the slow connections itself.
#
# Starts `secho dashboard` on a random loopback port (its virtual wire is not started:
# nothing here needs the endpoint), then build/tools/slow_clients opens 200 connections
# from 127.0.0.1 that send the start of a request and one more byte every 5 s, for 13 s.
# Meanwhile GET /api must answer 200 within 3 s, four times. At the end every slow
# connection must have been closed by the dashboard (for room, or by the request deadline
# of docs/API.md), none later than the deadline plus 2 s. Bounded: about 15 s.
set -u
# shellcheck source=tests/sh/dashboard_lib.bash
. "$(dirname "$0")/dashboard_lib.bash"
TOOL=$ROOT/${BUILD:-build}/tools/slow_clients
FLOOD=
cleanup() {
	[ -n "$FLOOD" ] && kill "$FLOOD" 2>/dev/null && wait "$FLOOD" 2>/dev/null
	dash_cleanup
}
trap cleanup EXIT
NAME="dashboard slowloris: 200 slow clients, the API still answers"
if why=$(dash_unavailable); then
	echo "UNAVAILABLE $NAME: $why"
	exit 0
fi
[ -x "$TOOL" ] || { echo "FAIL $NAME: $TOOL not built"; exit 1; }
dash_start || { echo "FAIL $NAME: the dashboard did not start"; exit 1; }

t_begin "$NAME"
"$TOOL" "$DASH_PORT" 200 5 13 >"$DASH_TMP/flood" 2>&1 &
FLOOD=$!
for _ in $(seq 1 50); do
	grep -q '^connected' "$DASH_TMP/flood" && break
	sleep 0.1
done
echo "  flood: $(head -1 "$DASH_TMP/flood")"
t0=$SECONDS
for at in 1 4 7 11; do
	while [ $((SECONDS - t0)) -lt "$at" ]; do sleep 0.2; done
	code=$(curl -s -o /dev/null --max-time 3 -w '%{http_code}' "http://127.0.0.1:$DASH_PORT/api")
	is "$code" 200 "GET /api during the flood (about ${at} s in)"
done
wait "$FLOOD"
FLOOD=
res=$(tail -1 "$DASH_TMP/flood")
echo "  $res"
read -r _ n _ conn _ closed _ first _ last _ left <<<"$res"
[ "${conn:-0}" -gt 0 ] && [ "$closed" = "$conn" ] && [ "${left:-1}" -eq 0 ]
t_check $? "every slow connection closed by the dashboard ($closed of $conn, $left left open)"
awk -v l="$last" 'BEGIN { exit !(l >= 0 && l <= 12) }'
t_check $? "the last one closed within the 10 s request deadline plus 2 s (at $last s)"
t_end
[ "$T_FAILED_CASES" -eq 0 ]
