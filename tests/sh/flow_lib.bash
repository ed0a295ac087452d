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
#
# Lines: vlan,vlan_inner,ip_version,proto,src,dst,sport,dport,icmp_type,icmp_code,packets,
# octets,first_ns,last_ns,tcp_flags (the truth file's header, docs/FLOW.md).

FLOW_JQ='
def fwd: [.vlan,.vlan_inner,.ip_version,.proto,.src,.dst,.sport,.dport,.icmp_type,.icmp_code,
          .packets,.octets,.first_ns,.last_ns,.tcp_flags];
def rev: [.vlan,.vlan_inner,.ip_version,.proto,.dst,.src,.dport,.sport,.icmp_type,.icmp_code,
          .rev_packets,.rev_octets,.rev_first_ns,.rev_last_ns,.rev_tcp_flags];
(if .packets > 0 then fwd else empty end),
(if (.rev_packets // 0) > 0 then rev else empty end) | map(tostring) | join(",")'

have_gen() {
	"${SECHO_FLOW_GEN:-$S}" flow gen --help >/dev/null 2>&1
}

flow_gen() {
	"${SECHO_FLOW_GEN:-$S}" flow gen --profile "$1" --packets "$2" --seed "$3" -o "$4" --quiet
}

truth_lines() {
	grep -v '^#' "$1" | tail -n +2 | LC_ALL=C sort
}

record_lines() {
	jq -r "$FLOW_JQ" "$1" | LC_ALL=C sort
}

truth_total() {
	sed -n "s/^# $2=//p" "$1"
}
