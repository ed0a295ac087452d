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
