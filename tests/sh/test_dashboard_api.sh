#!/usr/bin/env bash
# tests/sh/test_dashboard_api.sh - `secho dashboard`'s JSON API end to end with curl.
#
# Starts the dashboard on a random loopback port (virtual wire: two namespaces and a veth
# pair it creates itself, the real `secho serve` and `secho host`), then:
#   1. every refusal: bad Host 403, foreign Origin 403 (and no run started), body over
#      4 KiB 413 (Content-Length and chunked), wrong Content-Type 415, bad JSON 400,
#      out-of-range and mistyped fields 400 with a JSON message, unknown route 404,
#      wrong method 405 with Allow
#   2. POST /api/endpoint/start, GET /api/endpoint: up, namespaces present
#   3. POST /api/runs -> 202; a second POST while it runs -> 409; wait (bounded 120 s):
#      1000 of 1000 verified (500 per path), load samples, counters verified
#   4. GET /api/counters, GET /metrics (Prometheus names)
#   5. POST /api/endpoint/stop: down, namespaces gone; SIGTERM: private directory gone
#   6. --iface mode on a veth pair inside a namespace of the test's own: 100 of 100
#   7. an endpoint with two workers (secho serve --workers 2, AF_PACKET fanout): /metrics
#      has a series per worker, and the workers' series add up to the totals
# Bounded: about 10-20 s. Cleans up (dashboard, namespaces, temp files) on any exit.
set -u
# shellcheck source=tests/sh/dashboard_lib.bash
. "$(dirname "$0")/dashboard_lib.bash"
NS_I="secho-di-$$"
cleanup() {
	dash_cleanup
	if ip netns list 2>/dev/null | grep -qw "$NS_I"; then
		# shellcheck disable=SC2046
		kill -KILL $(ip netns pids "$NS_I" 2>/dev/null) 2>/dev/null
		ip netns del "$NS_I" 2>/dev/null
	fi
}
trap cleanup EXIT

CASES="security endpoint-start run counters metrics stop iface-mode workers"
if why=$(dash_unavailable); then
	for c in $CASES; do echo "UNAVAILABLE dashboard api $c: $why"; done
	exit 0
fi
dash_start || { echo "FAIL dashboard api: the dashboard did not start"; exit 1; }
ORIGIN="http://127.0.0.1:$DASH_PORT"

# ---- 1. refusals ----
t_begin "dashboard api security"
req GET /api/endpoint -H "Host: evil.example:$DASH_PORT"
is "$CODE" 403 "bad Host"
is "$(jget '.error|type')" string "bad Host has a JSON error"
req GET / -H "Host: 127.0.0.1.evil.example"
is "$CODE" 403 "bad Host on the page"
req GET /api/endpoint -H "Host: localhost:$DASH_PORT"
is "$CODE" 200 "Host localhost:PORT"
post /api/runs '{"count": 5}' -H 'Origin: http://evil.example'
is "$CODE" 403 "foreign Origin POST"
post /api/endpoint/start '' -H 'Origin: null'
is "$CODE" 403 "Origin null"
post /api/runs '{"count": 5}' -H 'Sec-Fetch-Site: cross-site'
is "$CODE" 403 "Sec-Fetch-Site cross-site"
req GET /api/runs
is "$(jget '.runs|length')" 0 "no run was started by refused requests"
head -c 5000 /dev/zero | tr '\0' ' ' >"$DASH_TMP/big"
req POST /api/runs -H 'Content-Type: application/json' --data-binary @"$DASH_TMP/big"
is "$CODE" 413 "5000-byte body (Content-Length)"
req POST /api/runs -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' \
	--data-binary @"$DASH_TMP/big"
is "$CODE" 413 "5000-byte body (chunked)"
req POST /api/runs -H 'Content-Type: text/plain' --data-binary '{"count": 5}'
is "$CODE" 415 "text/plain body"
post /api/runs '{"count": 5'
is "$CODE" 400 "truncated JSON"
is "$(jget '.error|startswith("body is not valid JSON")')" true "bad JSON message"
post /api/runs '[1, 2]'
is "$CODE" 400 "JSON array body"
for b in '{"count": 0}' '{"count": 10001}' '{"count": 1.5}' '{"count": "5"}' \
	'{"size": 1441}' '{"size": -1}' '{"size": "big"}' '{"load_seconds": 31}' \
	'{"load_seconds": -1}' '{"load_seconds": true}' '{"path": "/etc/passwd"}' \
	'{"count": 5, "count": 6}'; do
	post /api/runs "$b"
	is "$CODE" 400 "body $b"
	is "$(jget '.error|type')" string "body $b has a message"
done
post /api/runs '{"command": "rm -rf /"}'
is "$(jget '.error')" 'unknown field "command" (accepted: count, size, load_seconds)' \
	"unknown field message"
post /api/endpoint/start '{"iface": "eth0"}'
is "$CODE" 400 "parameters on endpoint/start"
req GET /api/nothing
is "$CODE" 404 "unknown API route"
req GET /nothing.html
is "$CODE" 404 "unknown page"
req GET /api/runs/abc
is "$CODE" 404 "non-numeric run id"
req GET /api/runs/999
is "$CODE" 404 "unknown run id"
req DELETE /api/runs
is "$CODE" 405 "DELETE /api/runs"
grep -qi '^Allow: GET, HEAD, POST' "$DASH_TMP/hdr"
t_check $? "405 carries Allow"
req GET /api/endpoint/start
is "$CODE" 405 "GET /api/endpoint/start"
req POST /metrics -H 'Content-Type: application/json' --data-binary '{}'
is "$CODE" 405 "POST /metrics"
req PUT /
is "$CODE" 405 "PUT /"
req GET /
is "$CODE" 200 "the page"
grep -qi '^Content-Security-Policy:' "$DASH_TMP/hdr"
t_check $? "the page has a CSP"
grep -q '<h1>secho</h1>' "$DASH_TMP/body"
t_check $? "the page is the embedded index.html"
t_end

# ---- 2. endpoint start ----
t_begin "dashboard api endpoint-start"
post /api/endpoint/start '' -H "Origin: $ORIGIN"
is "$CODE" 200 "POST /api/endpoint/start"
[ "$CODE" = 200 ] || sed 's/^/  /' "$DASH_TMP/body"
is "$(jget '.running')" true "running after start"
req GET /api/endpoint
is "$(jget '.running')" true "GET /api/endpoint running"
is "$(jget '.wire')" virtual "virtual wire"
is "$(jget '.endpoint_ip')" 192.0.2.2 "endpoint IP"
ip netns list | grep -qw "secho-de-$DASH_PID"
t_check $? "endpoint namespace exists"
ip netns list | grep -qw "secho-dh-$DASH_PID"
t_check $? "host namespace exists"
t_end

# ---- 3. a run ----
t_begin "dashboard api run"
post /api/runs '{"count": 500, "size": "random", "load_seconds": 2}' -H "Origin: $ORIGIN"
is "$CODE" 202 "POST /api/runs"
ID=$(jget '.id')
post /api/runs '{"count": 5}'
is "$CODE" 409 "second run while one runs"
post /api/endpoint/stop ''
is "$CODE" 409 "stop while a run runs"
state=running
for _ in $(seq 1 600); do
	req GET "/api/runs/$ID"
	state=$(jget '.state')
	[ "$state" = running ] || break
	sleep 0.2
done
is "$state" done "run state"
[ "$state" = done ] || jget '.error'
is "$(jget '.summary.text')" "1000 of 1000 verified" "summary"
is "$(jget '"\(.summary.paths.streaming.verified)/\(.summary.paths.streaming.sent)"')" \
	500/500 "streaming path"
is "$(jget '"\(.summary.paths.offload.verified)/\(.summary.paths.offload.sent)"')" \
	500/500 "offload path"
is "$(jget '.summary.pass')" true "pass"
is "$(jget '.progress')" 1 "progress at the end"
is "$(jget '.results.paired.paths.offload.tag_match')" 500 "offload tags matched"
is "$(jget '.results.load.per_second|length > 0')" true "load per-second samples"
is "$(jget '.results.counters.verified')" true "counters report verified"
req GET /api/runs
is "$(jget '.runs|length')" 1 "one run listed"
is "$(jget '.runs[0].id')" "$ID" "listed id"
t_end

# ---- 4. counters ----
t_begin "dashboard api counters"
req GET /api/counters
is "$CODE" 200 "GET /api/counters"
is "$(jget '.verified')" true "verified"
is "$(jget '.report.engines.streaming.packets >= 500')" true "streaming packets counted"
is "$(jget '.report.engines.offload.packets >= 500')" true "offload packets counted"
is "$(jget '.report.engines.offload.cost.staging_bytes|type')" number "cost fields"
t_end

# ---- 5. metrics ----
t_begin "dashboard api metrics"
req GET /metrics
is "$CODE" 200 "GET /metrics"
grep -qi '^Content-Type: text/plain; version=0.0.4' "$DASH_TMP/hdr"
t_check $? "Prometheus content type"
for m in 'secho_endpoint_up 1' '# TYPE secho_packets_total counter' \
	'secho_packets_total{engine="streaming"} ' 'secho_packets_total{engine="offload"} ' \
	'secho_endpoint_latency_ns{engine="offload",quantile="0.99"} ' \
	'secho_endpoint_latency_ns_count{engine="streaming"} ' '# TYPE secho_drops_total counter' \
	'secho_last_run_verified{path="streaming"} 500' 'secho_dashboard_runs_total{state="done"} 1'; do
	grep -qF "$m" "$DASH_TMP/body"
	t_check $? "metrics line '$m'"
done
# Every sample line is NAME{labels} VALUE.
bad=$(grep -v '^#' "$DASH_TMP/body" | grep -cvE '^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? ([-+0-9.eE]+|NaN)$')
is "$bad" 0 "malformed metrics lines"
t_end

# ---- 6. stop and cleanup ----
t_begin "dashboard api stop"
post /api/endpoint/stop '{}'
is "$CODE" 200 "POST /api/endpoint/stop"
is "$(jget '.running')" false "stopped"
is "$(jget '.last_exit')" 0 "the endpoint exited 0 on SIGTERM (drained)"
ip netns list | grep -qw "secho-de-$DASH_PID"
t_check $((!$?)) "endpoint namespace removed"
req GET /api/counters
is "$(jget '.live')" false "counters no longer live"
# Up again, then SIGTERM to the dashboard: it must take the wire down itself.
post /api/endpoint/start ''
is "$(jget '.running')" true "running after a second start"
is "$(jget '.key_id')" 2 "a fresh key id on the second start"
pid=$DASH_PID
dir=$(ls -d "/tmp/secho-dash-$pid".* 2>/dev/null | wc -l)
kill -TERM "$pid"
for _ in $(seq 1 150); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$pid" 2>/dev/null
t_check $((!$?)) "dashboard exited on SIGTERM within 15 s"
ip netns list | grep -qE "secho-d[eh]-$pid( |\$)"
t_check $((!$?)) "namespaces removed by the dashboard on SIGTERM"
now=$(ls -d "/tmp/secho-dash-$pid".* 2>/dev/null | wc -l)
[ "$now" -lt "$dir" ]
t_check $? "private directory removed ($dir before, $now after)"
dash_stop
t_end

# ---- 7. --iface mode: a veth pair inside one namespace of ours ----
#   ns secho-di-PID:  vaPID (endpoint: secho serve, no address)  <== veth ==>
#                     vbPID 192.0.2.1/24 (host tool, raw, --host-iface) ; lo for the API
# MTU 9000: the counters report does not always fit a 1500-byte frame (docs/API.md).
t_begin "dashboard api iface-mode"
VA="va$$" VB="vb$$" MAC_A=02:00:00:00:01:02
in_i() { ip netns exec "$NS_I" "$@"; }
if ip netns add "$NS_I" &&
	ip -n "$NS_I" link add "$VA" numtxqueues 1 numrxqueues 1 type veth peer name "$VB" \
		numtxqueues 1 numrxqueues 1 &&
	ip -n "$NS_I" link set dev "$VA" address "$MAC_A" &&
	ip -n "$NS_I" link set dev "$VA" mtu 9000 && ip -n "$NS_I" link set dev "$VB" mtu 9000 &&
	in_i sysctl -qw net.ipv6.conf.all.disable_ipv6=1 &&
	in_i ethtool -K "$VA" tx off >/dev/null 2>&1 && in_i ethtool -K "$VB" tx off >/dev/null 2>&1 &&
	ip -n "$NS_I" addr add 192.0.2.1/24 dev "$VB" &&
	ip -n "$NS_I" link set dev lo up && ip -n "$NS_I" link set dev "$VA" up &&
	ip -n "$NS_I" link set dev "$VB" up &&
	ip -n "$NS_I" neigh replace 192.0.2.2 lladdr "$MAC_A" dev "$VB" nud permanent; then
	ip netns list | grep -qw "$NS_I"
	t_check $? "namespace $NS_I exists"
	for _ in $(seq 1 50); do
		ip -n "$NS_I" link show "$VA" | grep -q LOWER_UP &&
			ip -n "$NS_I" link show "$VB" | grep -q LOWER_UP && break
		sleep 0.1
	done
	PORT_I=$((20000 + (RANDOM % 20000)))
	args=(--quiet)
	[ "${SECHO_DASH_FAKE:-0}" = 1 ] && args+=(--secho-bin "$ROOT/tests/browser/fake-secho")
	ip netns exec "$NS_I" "$SECHO" dashboard --listen "127.0.0.1:$PORT_I" --iface "$VA" --host-iface "$VB" \
		--dst-mac "$MAC_A" "${args[@]}" >"$DASH_TMP/dash-i.log" 2>&1 &
	IPID=$!
	B="http://127.0.0.1:$PORT_I"
	for _ in $(seq 1 50); do
		in_i curl -s -o /dev/null --max-time 2 "$B/api" && break
		sleep 0.1
	done
	in_i curl -s --max-time 30 -X POST "$B/api/endpoint/start" >"$DASH_TMP/body"
	is "$(jget '.running')" true "endpoint up on $VA"
	[ "$(jget '.running')" = true ] || { cat "$DASH_TMP/body"; sed 's/^/  /' "$DASH_TMP/dash-i.log"; }
	is "$(jget '.wire')" interface "wire kind"
	in_i curl -s --max-time 10 -X POST -H 'Content-Type: application/json' \
		--data-binary '{"count": 50, "size": 100, "load_seconds": 0}' "$B/api/runs" >"$DASH_TMP/body"
	ID=$(jget '.id')
	for _ in $(seq 1 300); do
		in_i curl -s --max-time 10 "$B/api/runs/$ID" >"$DASH_TMP/body"
		[ "$(jget '.state')" = running ] || break
		sleep 0.2
	done
	is "$(jget '.state')" done "run state"
	is "$(jget '.summary.text')" "100 of 100 verified" "summary"
	is "$(jget '.results.paired.mode')" raw "host tool in raw mode on $VB"
	is "$(jget '.results.load')" null "no load run for load_seconds 0"
	kill -TERM "$IPID"
	for _ in $(seq 1 150); do
		kill -0 "$IPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$IPID" 2>/dev/null
	t_check $((!$?)) "dashboard exited on SIGTERM"
	{
		kill -KILL "$IPID"
		wait "$IPID"
	} 2>/dev/null # killed on purpose: no "Killed" notice
	rm -rf "/tmp/secho-dash-$IPID".*
	left=$(ip netns pids "$NS_I" 2>/dev/null | tr '\n' ' ')
	is "$left" "" "processes left in the namespace"
	[ -n "$left" ] && for p in $left; do ps -o pid=,stat=,args= -p "$p"; done | sed "s/^/  /"
else
	t_check 1 "could not build the test namespace"
fi
t_end

# ---- 8. an endpoint with two workers: /metrics per worker ----
# The dashboard runs `secho serve` as it always does, through a --secho-bin that adds
# --workers 2 --io packet (a fanout group: the virtual wire has one queue).
t_begin "dashboard api workers"
if [ "${SECHO_DASH_FAKE:-0}" = 1 ]; then
	t_check 0 "(fake secho: nothing to check)"
else
	W=$DASH_TMP/secho-2w
	printf '#!/bin/sh\n[ "$1" = serve ] && exec %q "$@" --workers 2 --io packet\nexec %q "$@"\n' \
		"$SECHO" "$SECHO" >"$W"
	chmod 700 "$W"
	DASH_ARGS=(--secho-bin "$W")
	if dash_start; then
		post /api/endpoint/start ''
		is "$(jget '.running')" true "endpoint with two workers up"
		post /api/runs '{"count": 50, "size": 100, "load_seconds": 0}'
		ID=$(jget '.id')
		for _ in $(seq 1 300); do
			req GET "/api/runs/$ID"
			[ "$(jget '.state')" = running ] || break
			sleep 0.2
		done
		is "$(jget '.summary.text')" "100 of 100 verified" "run through two workers"
		req GET /metrics
		M=$DASH_TMP/metrics
		cp "$DASH_TMP/body" "$M"
		grep -qx 'secho_workers 2' "$M"
		t_check $? "secho_workers 2"
		# labels NAME: the worker labels of NAME's series, in order ("0 1")
		labels() { sed -n "s/^$1{worker=\"\([0-9]*\)\"[,}].*/\1/p" "$M" | tr '\n' ' '; }
		for f in rx_frames tx_frames drops; do
			is "$(labels "secho_worker_${f}_total")" "0 1 " "secho_worker_${f}_total: one series per worker"
		done
		is "$(labels secho_worker_packets_total)" "0 1 0 1 " "secho_worker_packets_total: one series per worker and engine"
		# sum NAME [LABEL-FILTER]: the per-worker series of NAME added up
		sum() { awk -v n="$1" -v f="${2:-}" 'index($1, n "{") == 1 && index($1, f) {s += $2} END {print s + 0}' "$M"; }
		tot() { awk -v n="$1" '$1 == n {print $2}' "$M"; }
		is "$(sum secho_worker_rx_frames_total)" "$(tot secho_rx_frames_total)" "workers' rx = rx"
		is "$(sum secho_worker_tx_frames_total)" "$(tot secho_tx_frames_total)" "workers' tx = tx"
		for e in streaming offload; do
			is "$(sum secho_worker_packets_total "engine=\"$e\"")" \
				"$(tot "secho_packets_total{engine=\"$e\"}")" "workers' $e packets = $e packets"
		done
		[ "$(tot "secho_packets_total{engine=\"streaming\"}")" -ge 50 ] 2>/dev/null
		t_check $? "the streaming packets counted ($(tot "secho_packets_total{engine=\"streaming\"}"))"
		bad=$(grep -v '^#' "$M" | grep -cvE '^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? ([-+0-9.eE]+|NaN)$')
		is "$bad" 0 "malformed metrics lines"
		[ "$T_FAILS" -eq 0 ] || grep '^secho_\(worker\|rx\|tx\|packets\)' "$M" | sed 's/^/  /'
		dash_stop
	else
		t_check 1 "the dashboard did not start"
	fi
fi
t_end

[ "$T_FAILED_CASES" -eq 0 ]
