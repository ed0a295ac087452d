# tests/sh/dashboard_lib.bash - shared by test_dashboard_api.sh and test_dashboard_browser.sh:
# start `secho dashboard` on a free loopback port, HTTP helpers, PASS/FAIL cases in the
# tests/unit/harness.h format, and a cleanup that stops the dashboard (which removes its
# namespaces, key and private directory) and then removes anything it left behind.
#
# The dashboard runs the real `secho keygen|serve|host` by default. SECHO_DASH_FAKE=1 runs
# tests/browser/fake-secho instead (canned JSON of the same shape; for working on the page
# without the endpoint). Not sourced by tests/run.sh directly (no .sh suffix).

ROOT=${SECHO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
SECHO=${SECHO_BIN:-$ROOT/${BUILD:-build}/secho}
DASH_PID=
DASH_PORT=
DASH_ARGS=()
# An unbuilt binary is a broken tree, not a machine that lacks something: FAIL, never
# UNAVAILABLE (dash_unavailable is for what the machine lacks).
if [ ! -x "$SECHO" ]; then
	echo "FAIL $(basename "$0" .sh): $SECHO is not built (make)"
	exit 1
fi
# So is a command scripts/deps.sh installs (check_lib.bash: need_tools).
# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"
need_tools "$(basename "$0" .sh)" ip curl jq || exit 1
DASH_TMP=$(mktemp -d /tmp/secho-dash-test.XXXXXX)

# ---- cases: t_begin NAME; t_check COND-STATUS MESSAGE; t_end ----
T_NAME= T_CHECKS=0 T_FAILS=0 T_FAILED_CASES=0
t_begin() { T_NAME=$1 T_CHECKS=0 T_FAILS=0; }
t_check() { # t_check STATUS MESSAGE: STATUS 0 = held
	T_CHECKS=$((T_CHECKS + 1))
	if [ "$1" -ne 0 ]; then
		T_FAILS=$((T_FAILS + 1))
		[ "$T_FAILS" -le 10 ] && echo "  check failed: $2"
	fi
	return 0
}
t_end() {
	if [ "$T_FAILS" -gt 0 ]; then
		echo "FAIL $T_NAME ($T_FAILS of $T_CHECKS checks failed)"
		T_FAILED_CASES=$((T_FAILED_CASES + 1))
	else
		echo "PASS $T_NAME ($T_CHECKS checks)"
	fi
}
# is A B MESSAGE: check A = B.
is() { [ "$1" = "$2" ]; t_check $? "$3: got '$1', want '$2'"; }

# Why the machine cannot run the dashboard's virtual wire, or nothing.
dash_unavailable() {
	if [ "$(id -u)" -ne 0 ]; then echo "needs root (network namespaces)"; return 0; fi
	return 1
}

# Start the dashboard on a free port (bounded: 5 tries, 5 s each), with the options in the
# array DASH_ARGS when set. Returns non-zero on failure with the log shown.
dash_start() {
	local try i args=(--quiet "${DASH_ARGS[@]}")
	[ "${SECHO_DASH_FAKE:-0}" = 1 ] && args+=(--secho-bin "$ROOT/tests/browser/fake-secho")
	for try in 1 2 3 4 5; do
		DASH_PORT=$((20000 + (RANDOM % 20000)))
		"$SECHO" dashboard --listen "127.0.0.1:$DASH_PORT" "${args[@]}" \
			>"$DASH_TMP/dash.log" 2>&1 &
		DASH_PID=$!
		for i in $(seq 1 50); do
			if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$DASH_PORT/api"; then
				return 0
			fi
			kill -0 "$DASH_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill "$DASH_PID" 2>/dev/null
		wait "$DASH_PID" 2>/dev/null
		DASH_PID=
		grep -q 'cannot listen' "$DASH_TMP/dash.log" || break
	done
	echo "dashboard did not start:" >&2
	sed 's/^/  /' "$DASH_TMP/dash.log" >&2
	return 1
}

# Stop the dashboard (SIGTERM: it stops the endpoint and removes its namespaces; SIGKILL
# after 15 s), then remove whatever is left (namespaces named after its PID).
dash_stop() {
	local pid=$DASH_PID i ns
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	for i in $(seq 1 150); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	{
		kill -0 "$pid" && kill -KILL "$pid"
		wait "$pid"
	} 2>/dev/null # killed on purpose: no "Killed" notice
	for ns in "secho-de-$pid" "secho-dh-$pid"; do
		if ip netns list 2>/dev/null | grep -qw "$ns"; then
			# shellcheck disable=SC2046
			kill -KILL $(ip netns pids "$ns" 2>/dev/null) 2>/dev/null
			ip netns del "$ns" 2>/dev/null
		fi
	done
	rm -rf "/tmp/secho-dash-$pid".* # only there when it had to be killed
	DASH_PID=
}

dash_cleanup() {
	dash_stop
	rm -rf "$DASH_TMP"
}

# req METHOD PATH [curl args...]: status in $CODE, body in $DASH_TMP/body, headers in
# $DASH_TMP/hdr. Default Host is the dashboard's own.
req() {
	local m=$1 p=$2
	shift 2
	CODE=$(curl -s --max-time 30 -X "$m" -o "$DASH_TMP/body" -D "$DASH_TMP/hdr" \
		-w '%{http_code}' "$@" "http://127.0.0.1:$DASH_PORT$p")
}
# post PATH JSON [curl args...]
post() {
	local p=$1 b=$2
	shift 2
	req POST "$p" -H 'Content-Type: application/json' --data-binary "$b" "$@"
}
# jget FILTER: a jq filter over the last body; prints the result ("<not JSON>" if it is not).
jget() {
	jq -r "$1" "$DASH_TMP/body" 2>/dev/null || echo "<not JSON>"
}

# The real flow needs `secho keygen`, `secho serve` and `secho host` in the binary.
dash_missing_commands() {
	local c miss=
	[ "${SECHO_DASH_FAKE:-0}" = 1 ] && return 1
	for c in keygen serve host; do
		"$SECHO" --help 2>/dev/null | grep -qE "^  $c " || miss="$miss $c"
	done
	[ -n "$miss" ] && { echo "secho lacks:$miss (not merged yet)"; return 0; }
	return 1
}
