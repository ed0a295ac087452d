# tests/sh/flow_lib.bash - what the flow meter's shell tests share (sourced).
#
#   have_gen                                  true when `secho flow gen` is in the build
#                                             ($SECHO_FLOW_GEN overrides the binary)
#   flow_gen PROFILE PACKETS SEED OUT.pcap    write a generated capture and OUT.pcap.truth.csv
#   truth_lines TRUTH.csv > LINES             the truth's flows, one line each, sorted
#   record_lines RECORDS.json > LINES         the meter's records as unidirectional flows
#                                             (a biflow's reverse half swapped round),
#                                             sorted, in the truth's columns
#   truth_total TRUTH.csv NAME                a '# NAME=value' total of the truth
#   nfcapd_start DIR LOG BUFBYTES [CMD...]    nfcapd (nfdump) on 127.0.0.1, a random port
#                                             (20000..59999; up to 5 ports, up to 3 s each
#                                             for its "Startup nfcapd"), writing into DIR
#                                             (emptied first), its output in LOG, receive
#                                             buffer BUFBYTES, run through CMD (e.g. nice
#                                             -n -10) when given; sets NF_PORT and NF_PID
#                                             (a job of this shell); 1 when it did not
#                                             start (NF_PID empty)
#   udp_drained PORT [TRIES]                  wait (bounded: TRIES x 0.05 s, default 200)
#                                             until no datagram waits on the UDP socket
#                                             bound to PORT (in this namespace); 1 if one
#                                             still does
#   nfcapd_stop [TRIES]                       udp_drained $NF_PORT TRIES, then SIGTERM (it
#                                             writes its file) and wait for it (10 s, then
#                                             SIGKILL); NF_PID emptied
#   meter_stop [SECONDS]                      stop the meter $MP (a job of this shell) as a
#                                             user would, and wait until it is done: SIGTERM
#                                             (it exports what it holds), wait (bounded:
#                                             SECONDS, default 10), SIGKILL then; mrc = its
#                                             exit status, MP emptied
#
# Lines: vlan,vlan_inner,ip_version,proto,src,dst,sport,dport,icmp_type,icmp_code,packets,
# octets,first_ns,last_ns,tcp_flags (the truth file's header, docs/FLOW.md), then for a
# tunnelled flow tunnel_type,tunnel_id,bytes_outer (a truth written with --encap or the
# encap profile has these columns on every line: "none,0,0" is dropped, so that a flow
# outside a tunnel is 15 columns in either file, as the meter's records without a
# tunnel_type are).

FLOW_JQ='
def fwd: [.vlan,.vlan_inner,.ip_version,.proto,.src,.dst,.sport,.dport,.icmp_type,.icmp_code,
          .packets,.octets,.first_ns,.last_ns,.tcp_flags];
def rev: [.vlan,.vlan_inner,.ip_version,.proto,.dst,.src,.dport,.sport,.rev_icmp_type,.rev_icmp_code,
          .rev_packets,.rev_octets,.rev_first_ns,.rev_last_ns,.rev_tcp_flags];
def tun(b): if .tunnel_type then [.tunnel_type, .tunnel_id, b] else [] end;
(if .packets > 0 then fwd + tun(.bytes_outer) else empty end),
(if (.rev_packets // 0) > 0 then rev + tun(.rev_bytes_outer) else empty end) | map(tostring) | join(",")'

have_gen() {
	"${SECHO_FLOW_GEN:-$S}" flow gen --help >/dev/null 2>&1
}

flow_gen() {
	"${SECHO_FLOW_GEN:-$S}" flow gen --profile "$1" --packets "$2" --seed "$3" -o "$4" --quiet
}

truth_lines() {
	grep -v '^#' "$1" | tail -n +2 | sed 's/,none,0,0$//' | LC_ALL=C sort
}

record_lines() {
	jq -r "$FLOW_JQ" "$1" | LC_ALL=C sort
}

truth_total() {
	sed -n "s/^# $2=//p" "$1"
}

nfcapd_start() {
	local dir=$1 log=$2 buf=$3
	shift 3
	for _ in 1 2 3 4 5; do
		NF_PORT=$((20000 + RANDOM % 40000))
		rm -rf "$dir"
		mkdir -p "$dir" || break
		: >"$log"
		"$@" nfcapd -b 127.0.0.1 -p "$NF_PORT" -w "$dir" -B "$buf" >"$log" 2>&1 &
		NF_PID=$!
		for _ in $(seq 60); do
			grep -q 'Startup nfcapd' "$log" && return 0
			kill -0 "$NF_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill -TERM "$NF_PID" 2>/dev/null
		wait "$NF_PID" 2>/dev/null
	done
	NF_PID=
	return 1
}

udp_drained() {
	local q
	for _ in $(seq "${2:-200}"); do
		q=$(ss -Hlun "sport = :$1" 2>/dev/null | awk '{print $2}' | head -1)
		[ "${q:-0}" = 0 ] && return 0
		sleep 0.05
	done
	return 1
}

nfcapd_stop() {
	[ -n "${NF_PID:-}" ] || return 0
	udp_drained "$NF_PORT" "${1:-200}"
	sleep 0.2 # a moment for nfcapd to finish with the datagrams it has read
	kill -TERM "$NF_PID" 2>/dev/null
	for _ in $(seq 200); do
		kill -0 "$NF_PID" 2>/dev/null || break
		sleep 0.05
	done
	{
		kill -0 "$NF_PID" && kill -9 "$NF_PID"
		wait "$NF_PID"
	} 2>/dev/null
	NF_PID=
}

meter_stop() {
	local i
	kill -TERM "$MP" 2>/dev/null
	for i in $(seq 1 $((${1:-10} * 10))); do
		kill -0 "$MP" 2>/dev/null || break
		sleep 0.1
	done
	# (its exit status says whether it had to be killed: no "Killed" notice)
	{
		kill -9 "$MP"
		wait "$MP"
	} 2>/dev/null
	mrc=$?
	MP=
}
