#!/usr/bin/env bash
# tests/sh/test_feat_http.sh - the http feature set on a real client and server: curl
# against a Python http.server (Debian's /usr/bin/python3) on 127.0.0.1, whose handler this
# test writes: GET with a custom User-Agent and Referer, POST, a 404, and a request whose
# URL is longer than the bound. Captured on lo by dumpcap and fed flow by flow to the
# feature set (build/tests/test_feat_http in its SECHO_FEAT_PCAP mode). Expected: what the
# test asked for and configured (methods, URLs, headers, codes, the server's name). Every
# wait bounded; the server, the capture and the files go on any exit.
#
#   curl --(TCP 127.0.0.1:PORT)--> python3 http.server      (dumpcap on lo, "port PORT")
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
PROG=$BUILD/tests/test_feat_http
PY=/usr/bin/python3
T=$(mktemp -d /tmp/secho-feat-http.XXXXXX)
SRV_PID=
. "$ROOT/tests/sh/check_lib.bash"
. "$ROOT/tests/sh/feat_lib.bash"
cleanup() {
	cap_stop
	feat_stop "$SRV_PID"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

NAME="http feature set: curl and python http.server on loopback"
feat_need "$NAME" "$PROG" curl dumpcap jq "$PY" || exit 1

PORT=$((20000 + RANDOM % 20000))
cat >"$T/server.py" <<'PYEOF'
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

class H(BaseHTTPRequestHandler):
    def version_string(self):
        return "secho-test/1.0"
    def reply(self, code, ctype, body):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        if self.path.startswith("/index.html") or self.path.startswith("/long/"):
            self.reply(200, "text/html; charset=utf-8", b"<p>secho</p>\n")
        else:
            self.reply(404, "text/plain", b"not here\n")
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        self.reply(201, "application/json", b'{"ok":true}\n')
    def log_message(self, *a):
        pass

HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PYEOF
"$PY" "$T/server.py" "$PORT" >"$T/server.log" 2>&1 &
SRV_PID=$!
URL=http://127.0.0.1:$PORT
ready=1
for _ in $(seq 1 50); do
	curl -s -m 2 -o /dev/null "$URL/index.html" && { ready=0; break; }
	kill -0 "$SRV_PID" 2>/dev/null || break
	sleep 0.1
done
if [ "$ready" -ne 0 ]; then
	cat "$T/server.log"
	echo "FAIL $NAME: the server did not answer on 127.0.0.1:$PORT"
	exit 1
fi
cap_start "$T/http.pcapng" "tcp port $PORT" || { echo "FAIL $NAME: dumpcap did not start"; exit 1; }
LONG=/long/$(printf 'x%.0s' $(seq 1 200))
C=(curl -s -m 5 -o /dev/null)
"${C[@]}" -A "secho-agent/2.5 (test)" -e "http://referer.secho.test/from" "$URL/index.html?q=1"
"${C[@]}" -A "secho-poster/1" -H "Content-Type: application/json" -d '{"a":1}' "$URL/submit"
"${C[@]}" -A "secho-agent/2.5 (test)" "$URL/missing"
"${C[@]}" -A "secho-agent/2.5 (test)" "$URL$LONG"
cap_stop
feat_flows "$PROG" "$T/http.pcapng" >"$T/flows.json" 2>"$T/flows.err"
rc=$?

# expect METHOD URL-PREFIX JQ-FILTER DESCRIPTION: the flow whose request this was
expect() {
	local f
	f=$(jq -c --arg m "$1" --arg u "$2" \
		'select(.http_method == $m and (.http_url | startswith($u)))' "$T/flows.json")
	if [ -z "$f" ]; then
		check 1 "$1 $2: no flow"
		return
	fi
	echo "$f" | jq -e "$3" >/dev/null
	check $? "$1 $2: $4: $f"
}

group "$NAME"
check "$rc" "the test program failed on the capture: $(cat "$T/flows.err")"
check "$([ "$(wc -l <"$T/flows.json")" -eq 4 ] && echo 0 || echo 1)" \
	"4 flows expected, got $(wc -l <"$T/flows.json")"
common=".proto == 6 and .done == 1 and .refused == 0 and .http_host == \"127.0.0.1:$PORT\"
	and .http_server == \"secho-test/1.0\""
expect GET /index.html "$common and .http_url == \"/index.html?q=1\" and
	.http_agent == \"secho-agent/2.5 (test)\" and .http_referer == \"http://referer.secho.test/from\"
	and .http_status_code == 200 and .http_content_type == \"text/html; charset=utf-8\"" \
	"GET with agent and referer"
expect POST /submit "$common and .http_url == \"/submit\" and .http_agent == \"secho-poster/1\"
	and (has(\"http_referer\") | not) and .http_status_code == 201
	and .http_content_type == \"application/json\"" "POST"
expect GET /missing "$common and .http_status_code == 404 and
	.http_content_type == \"text/plain\"" "404"
expect GET /long/ "$common and .http_url_cut == true and (.http_url | length) == 128 and
	.http_url == (\"$LONG\" | .[0:128]) and .http_status_code == 200" "URL cut at 128 bytes"
# the meter itself over the same capture: the same http_ members in its records
feat_meter_same http "$T/http.pcapng" "$T/flows.json" http_
end_group
[ "${g_failed:-0}" -eq 0 ]
