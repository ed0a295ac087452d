# tests/sh/feat_lib.bash - what the feature sets' shell tests share: a loopback capture
# (dumpcap, from tshark's package) started and stopped with every wait bounded, and the
# capture's flows run through a feature set's test program (SECHO_FEAT_PCAP mode: one JSON
# line per flow, tests/unit/featcap.h).
#   cap_start FILE FILTER   capture lo into FILE (pcapng); returns once dumpcap captures:
#                           a datagram to a port of its own (a sentinel, added to the
#                           filter) is sent until the capture holds it ("Capturing on" is
#                           printed before the socket sees packets: a test's first
#                           connection was sometimes missing)
#   cap_stop                stop it, wait for the file to be complete, and write FILE
#                           without the sentinel's datagrams
#   feat_flows PROG FILE    PROG's JSON lines for FILE's flows (on stdout)
#   feat_need NAME PROG TOOL...  need_tools (check_lib.bash, sourced first), and PROG built:
#                           1 with a FAIL line when not
#   feat_stop PID...        kill and reap the test's own background processes (empty skipped)
#   feat_meter_same SETS CAP DRIVER_OUT PREFIX   the meter (`secho flow`) over CAP agrees
#                           with the test program's lines (below)
# The caller's EXIT trap calls cap_stop (harmless when nothing runs).
# Not run by tests/run.sh itself (no .sh suffix).
CAP_PID=
CAP_FILE=
CAP_SPORT=

cap_start() { # file filter
	local log=$1.log up=1
	CAP_FILE=$1
	CAP_SPORT=$((61000 + RANDOM % 4000))
	dumpcap -q -i lo -f "($2) or (udp dst port $CAP_SPORT)" -w "$1.raw" >"$log" 2>&1 &
	CAP_PID=$!
	for _ in $(seq 1 100); do
		grep -q "Capturing on" "$log" 2>/dev/null && { up=0; break; }
		kill -0 "$CAP_PID" 2>/dev/null || break
		sleep 0.1
	done
	if [ "$up" -eq 0 ]; then
		for _ in $(seq 1 50); do
			echo sentinel >/dev/udp/127.0.0.1/"$CAP_SPORT" 2>/dev/null
			sleep 0.1
			[ -n "$(tshark -r "$1.raw" -Y "udp.dstport == $CAP_SPORT" -c 1 2>/dev/null)" ] &&
				return 0
			kill -0 "$CAP_PID" 2>/dev/null || break
		done
	fi
	cat "$log" >&2
	return 1
}

cap_stop() {
	[ -n "$CAP_PID" ] || return 0
	sleep 0.3 # the last packets through the kernel's ring
	kill -INT "$CAP_PID" 2>/dev/null
	for _ in $(seq 1 50); do
		kill -0 "$CAP_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$CAP_PID" 2>/dev/null
	wait "$CAP_PID" 2>/dev/null
	CAP_PID=
	[ -f "$CAP_FILE.raw" ] &&
		tshark -r "$CAP_FILE.raw" -Y "not (udp.dstport == $CAP_SPORT)" -F pcapng \
			-w "$CAP_FILE" 2>>"$CAP_FILE.log"
	rm -f "$CAP_FILE.raw"
	CAP_FILE=
}

feat_flows() { # prog file
	SECHO_FEAT_PCAP=$2 "$1"
}

feat_need() { # name prog tool...
	local name=$1 prog=$2
	shift 2
	need_tools "$name" "$@" || return 1
	[ -x "$prog" ] || { echo "FAIL $name: $prog not built"; return 1; }
}

feat_stop() { # pid...
	local p
	for p in "$@"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	return 0
}

# feat_meter_same SETS CAP DRIVER_OUT PREFIX: the capture through the meter itself,
# `secho flow --pcap CAP --features SETS --json` (biflows), against the test program's view
# of it (or a reference's, in the same form): every flow of DRIVER_OUT (JSON lines with sport
# and dport, or "FLOW CPORT SPORT {JSON}" lines) with a member whose name PREFIX (a Python
# regular expression) matches at its start has a record of the same ports (the flow's first
# packet's) whose matching members are the same, and no other record has any. One check
# line (check_lib.bash). The records come out of the table's pools and done states, the
# program's from a state fed directly: this is where the two meet.
feat_meter_same() { # sets cap driver-out prefix
	local out rc
	out=$(mktemp /tmp/secho-featmeter.XXXXXX)
	"${SECHO_BIN:-$BUILD/secho}" flow --pcap "$2" --features "$1" --json "$out" --quiet \
		>/dev/null 2>"$out.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		check 1 "secho flow --features $1 over $2: exit $rc: $(head -2 "$out.err")"
		rm -f "$out" "$out.err"
		return
	fi
	python3 - "$3" "$out" "$4" >"$out.cmp" 2>&1 <<'PYEOF'
import json, re, sys
drv, met, pre = sys.argv[1:4]
pick = lambda j: {k: v for k, v in j.items() if re.match(pre, k)}
want = {}
for l in open(drv):
    l = l.strip()
    m = re.match(r"FLOW (\d+) (\d+) \{(.*)\}$", l)
    if m:
        k, j = (int(m.group(1)), int(m.group(2))), json.loads("{" + m.group(3) + "}")
    elif l.startswith("{"):
        j = json.loads(l)
        k = (j.get("sport"), j.get("dport"))
    else:
        continue
    if pick(j):
        want[k] = pick(j)
got, bad = {}, []
for l in open(met):
    r = json.loads(l)
    if pick(r):
        k = (r.get("sport"), r.get("dport"))
        if k in got:  # flows are named by their ports here: they must be unique
            bad.append("ports %s: two records" % (k,))
        got[k] = pick(r)
for k, w in want.items():
    g = got.get(k)
    if g is None:
        bad.append("ports %s: no record with %s members" % (k, pre))
        continue
    for m in sorted(set(w) | set(g)):
        if w.get(m) != g.get(m):
            bad.append("ports %s %s: module %s, secho flow %s" % (k, m, w.get(m), g.get(m)))
bad += ["ports %s: a record with %s members the module has not" % (k, pre)
        for k in got if k not in want]
print("%d flows, %d members compared" % (len(want), sum(map(len, want.values()))))
for b in bad[:4]:
    print(b)
sys.exit(1 if bad or not want else 0)
PYEOF
	check $? "secho flow --features $1 against the module, members $4: $(tr '\n' ' ' <"$out.cmp" | cut -c1-500)"
	rm -f "$out" "$out.err" "$out.cmp"
}
