#!/usr/bin/env bash
# tests/sh/test_flow.sh - `secho flow` offline: its command line, and generated captures
# metered into JSON records that must equal the generator's ground truth exactly.
#
#   - usage: --help; every bad argument exits 2 with one line on stderr, nothing on stdout
#   - the same frames as pcap (microseconds), pcap (nanoseconds) and pcapng (editcap)
#     give the same records; a cut capture: the records before the cut, exit 1
#   - generated captures (`secho flow gen`: every header case, and a light and a heavy
#     profile): the records, as unidirectional flows, equal the truth line for line (every
#     key, packets, octets, first and last time, flags; nothing missing, nothing invented),
#     biflow and uniflow, one worker and two; the summary's totals equal the truth's
#     (packets, octets, malformed, non-IP, orphan fragments)
#   - splits only where asked: a tiny table (lack of resources), short timeouts; per key
#     the records add up to the truth, and each split carries its reason
# The generated groups say UNAVAILABLE when this build has no `secho flow gen`.
# Needs: jq, editcap (scripts/deps.sh).
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
S=${SECHO_BIN:-$ROOT/build/secho}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
T=$(mktemp -d /tmp/secho-flow-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
# shellcheck source=tests/sh/flow_lib.bash
. "$ROOT/tests/sh/flow_lib.bash"

# group, check, end_group, unavailable (tests/unit/harness.h's format)
# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"

need_tools "secho flow" jq editcap || exit 1 # editcap: tshark's wireshark-common
[ -x "$S" ] || { echo "FAIL secho flow: $S not built"; exit 1; }

# ---- usage ----
group "flow: usage and bad arguments (exit 2, one line on stderr, nothing on stdout)"
"$S" flow --help >"$T/out" 2>"$T/err"
check $? "--help exit"
grep -q -- '--pcap FILE' "$T/out" && grep -q -- '--json-stats' "$T/out" && [ ! -s "$T/err" ]
check $? "--help text"
: >"$T/empty.pcap"
bad() { # description, args...
	local what=$1
	shift
	"$S" flow "$@" </dev/null >"$T/out" 2>"$T/err"
	local r=$?
	[ $r -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -s "$T/out" ]
	check $? "$what: exit $r, $(wc -l <"$T/err") stderr lines: $(head -c 200 "$T/err")"
}
"$S" flow >"$T/out" 2>"$T/err"
[ $? -eq 2 ] && [ ! -s "$T/out" ] && grep -q '^usage: secho flow' "$T/err"
check $? "secho flow alone: exit 2 and the usage on stderr"
bad "no input" --uniflow
bad "two inputs" --pcap "$T/empty.pcap" --iface lo
bad "--io with --pcap" --pcap "$T/empty.pcap" --io xdp
bad "--io pcap" --iface lo --io pcap
bad "--io unknown" --iface lo --io dpdk
bad "--ring with --pcap" --pcap x --ring 64
bad "--ring 0" --iface lo --ring 0
bad "--ring 2049" --iface lo --ring 2049
bad "--ring text" --iface lo --ring big
bad "--active 0" --pcap x --active 0
bad "--active text" --pcap x --active soon
bad "--inactive negative" --pcap x --inactive -1
bad "--flows 4" --pcap x --flows 4
bad "--flows huge" --pcap x --flows 99999999999
bad "--workers 0" --pcap x --workers 0
bad "--workers 65" --pcap x --workers 65
bad "--flows below 8 a worker" --pcap x --flows 8 --workers 2
bad "--observation-domain" --pcap x --observation-domain 4294967296
bad "--template-refresh 0" --pcap x --template-refresh 0
bad "--stats 0" --pcap x --stats 0
bad "--json empty" --pcap x --json ''
bad "--hash unknown" --pcap x --hash md5
bad "--collector scheme" --pcap x --collector ftp://h:1
bad "--collector no host" --pcap x --collector udp://
bad "--collector port 0" --pcap x --collector udp://h:0
bad "--collector port 65536" --pcap x --collector tcp://h:65536
bad "--collector bracket" --pcap x --collector 'udp://[::1'
bad "--collector bad host" --pcap x --collector 'udp://a b:9'
bad "--collector file: without a name" --pcap x --collector file:
bad "--collector host that does not resolve" --pcap x --collector udp://no-such-host.invalid:9
bad "--collector nine of them" --pcap x $(for i in 1 2 3 4 5 6 7 8 9; do echo --collector udp://127.0.0.1:$i; done)
bad "--template-refresh fraction" --pcap x --template-refresh 1.5
bad "--mtu 575" --pcap x --mtu 575
bad "--mtu 65508" --pcap x --mtu 65508
bad "--mtu text" --pcap x --mtu jumbo
bad "unknown option" --pcap x --frobnicate
bad "missing value" --pcap
bad "extra argument" --pcap x extra
bad "empty --pcap" --pcap ''
end_group

# ---- capture formats ----
group "flow: pcap (us, ns) and pcapng give the same records; a cut file fails after them"
"$BUILD/tests/test_wire" --write-pcap "$T/corpus.pcap" >/dev/null 2>&1
check $? "test_wire --write-pcap"
editcap -F pcapng "$T/corpus.pcap" "$T/corpus.pcapng" >/dev/null 2>&1 &&
	editcap -F nsecpcap "$T/corpus.pcap" "$T/corpus-ns.pcap" >/dev/null 2>&1
check $? "editcap"
for f in corpus.pcap corpus.pcapng corpus-ns.pcap; do
	"$S" flow --pcap "$T/$f" --json "$T/$f.json" --quiet >"$T/$f.sum" 2>"$T/err"
	check $? "$f: exit $?: $(head -1 "$T/err")"
	record_lines "$T/$f.json" >"$T/$f.lines"
done
[ -s "$T/corpus.pcap.lines" ]
check $? "no records from the corpus"
cmp -s "$T/corpus.pcap.lines" "$T/corpus.pcapng.lines" &&
	cmp -s "$T/corpus.pcap.lines" "$T/corpus-ns.pcap.lines"
check $? "records differ between formats"
# cut the file inside its fifth record: exit 1, the records before it, the reason named
size=$(stat -c %s "$T/corpus.pcap")
head -c $((size - 7)) "$T/corpus.pcap" >"$T/cut.pcap"
"$S" flow --pcap "$T/cut.pcap" --json "$T/cut.json" --quiet >/dev/null 2>"$T/err"
r=$?
[ $r -eq 1 ] && grep -q 'truncated record at byte' "$T/err"
check $? "cut file: exit $r: $(head -1 "$T/err")"
n_all=$(wc -l <"$T/corpus.pcap.lines")
n_cut=$(record_lines "$T/cut.json" | wc -l)
[ "$n_cut" -ge $((n_all - 1)) ] && [ "$n_cut" -le "$n_all" ]
check $? "cut file: $n_cut records of $n_all"
"$S" flow --pcap "$T/nonexistent.pcap" >/dev/null 2>"$T/err"
r=$?
[ $r -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q 'No such file' "$T/err"
check $? "missing file: exit $r"
echo "not a capture at all, just text" >"$T/text.pcap"
"$S" flow --pcap "$T/text.pcap" >/dev/null 2>"$T/err"
r=$?
[ $r -eq 1 ] && grep -q 'not a pcap or pcapng' "$T/err"
check $? "not a capture: exit $r"
end_group

# ---- generated captures against their truth ----
if ! have_gen; then
	unavailable "flow: generated captures equal their truth" \
		"no traffic generator in this build (secho flow gen)"
	exit 0
fi

# meter NAME PCAP ARGS...: records to $T/NAME.json, JSON statistics to $T/NAME.stats
meter() {
	local name=$1 pcap=$2
	shift 2
	"$S" flow --pcap "$pcap" --json "$T/$name.json" --json-stats --quiet "$@" \
		>"$T/$name.stats" 2>"$T/$name.err"
}
# same_as_truth WHAT JSON TRUTH: line-for-line equality, differences shown
same_as_truth() {
	record_lines "$2" >"$T/got.lines"
	truth_lines "$3" >"$T/want.lines"
	if cmp -s "$T/got.lines" "$T/want.lines"; then
		check 0 ""
	else
		check 1 "$1: records differ from the truth ($(wc -l <"$T/got.lines") lines, want $(wc -l <"$T/want.lines"))"
		diff "$T/got.lines" "$T/want.lines" | head -6 | sed 's/^/    /'
	fi
}
stat_of() { jq -r "select(.final) | $2" "$T/$1.stats"; }

group "flow: every header case (conformance profile) equals the truth: biflow, uniflow, 2 workers"
flow_gen conformance 2000 11 "$T/conf.pcap"
check $? "generate"
TR=$T/conf.pcap.truth.csv
for mode in bi uni w2; do
	case $mode in
	bi) meter conf-bi "$T/conf.pcap" ;;
	uni) meter conf-uni "$T/conf.pcap" --uniflow ;;
	w2) meter conf-w2 "$T/conf.pcap" --workers 2 ;;
	esac
	check $? "$mode: exit $?: $(head -1 "$T/conf-$mode.err")"
	same_as_truth "$mode" "$T/conf-$mode.json" "$TR"
	[ "$(stat_of conf-$mode .packets)" = "$(truth_total "$TR" flow_packets)" ] &&
		[ "$(stat_of conf-$mode .octets)" = "$(truth_total "$TR" flow_octets)" ] &&
		[ "$(stat_of conf-$mode .ignored)" = "$(truth_total "$TR" ignored)" ] &&
		[ "$(stat_of conf-$mode .ignored_by.not_ip)" = "$(truth_total "$TR" non_ip)" ] &&
		[ "$(stat_of conf-$mode .ignored_by.frag_orphan)" = "$(truth_total "$TR" orphan_fragments)" ] &&
		[ "$(stat_of conf-$mode '[.ignored_by | to_entries[] | select(.key != "not_ip" and .key != "frag_orphan") | .value] | add')" = "$(truth_total "$TR" malformed)" ]
	check $? "$mode: totals differ from the truth's"
	[ "$(stat_of conf-$mode '.end_resource + .end_active')" = 0 ] &&
		[ "$(stat_of conf-$mode .frames_read)" = "$(truth_total "$TR" packets)" ]
	check $? "$mode: splits or frames read"
done
end_group

group "flow: light, heavy and short profiles equal the truth (1 and 2 workers)"
for prof in light heavy short; do
	flow_gen $prof 60000 5 "$T/$prof.pcap"
	check $? "generate $prof"
	for w in 1 2; do
		meter "$prof-$w" "$T/$prof.pcap" --workers $w
		check $? "$prof workers $w: exit"
		same_as_truth "$prof workers $w" "$T/$prof-$w.json" "$T/$prof.pcap.truth.csv"
	done
done
end_group

# ---- splits: only where a timeout or the table demands, with the reason ----
# per_key JSON > LINES: per unidirectional key, the sum of packets and octets, the first
# first_ns and the last last_ns over its records (what the truth has for an unsplit flow)
per_key() {
	record_lines "$1" | awk -F, -v OFS=, '{
		k = $1 OFS $2 OFS $3 OFS $4 OFS $5 OFS $6 OFS $7 OFS $8 OFS $9 OFS $10
		p[k] += $11; o[k] += $12
		if (!(k in f) || $13 < f[k]) f[k] = $13
		if (!(k in l) || $14 > l[k]) l[k] = $14
	} END { for (k in p) print k, p[k], o[k], f[k], l[k] }' | LC_ALL=C sort
}
truth_key() {
	truth_lines "$1" | cut -d, -f1-14 | LC_ALL=C sort
}

# pieces_ok JSON REASONS: in every key's records (uniflow), taken in time order, each one
# but the last ended for one of REASONS (a jq array): a split only for those
pieces_ok() {
	jq -s -e --argjson ok "$2" 'group_by([.vlan, .vlan_inner, .proto, .src, .dst, .sport,
		.dport, .icmp_type, .icmp_code]) | map(sort_by(.first_ns) | .[:-1][] |
		select(.end_reason as $r | $ok | index($r) | not)) | length == 0' "$1" >/dev/null
}

group "flow: a 64-entry table splits flows for lack of resources, and only that"
meter tiny "$T/light.pcap" --flows 64 --uniflow
check $? "exit"
[ "$(stat_of tiny .end_resource)" -gt 0 ] 2>/dev/null
check $? "no evictions in a 64-entry table"
per_key "$T/tiny.json" >"$T/tiny.keys"
truth_key "$T/light.pcap.truth.csv" >"$T/light.keys"
cmp -s "$T/tiny.keys" "$T/light.keys"
check $? "per key, the records do not add up to the truth"
pieces_ok "$T/tiny.json" '[5]'
check $? "a flow was split for another reason than lack of resources"
[ "$(stat_of tiny .active)" = 0 ] && [ "$(stat_of tiny .capacity)" = 64 ]
check $? "capacity or active at the end"
end_group

group "flow: short timeouts split flows at the time, with the reason"
meter short "$T/light.pcap" --active 2 --inactive 1 --uniflow
check $? "exit"
per_key "$T/short.json" >"$T/short.keys"
cmp -s "$T/short.keys" "$T/light.keys"
check $? "per key, the records do not add up to the truth"
[ "$(stat_of short .end_active)" -gt 0 ] && [ "$(stat_of short .end_idle)" -gt 0 ] \
	2>/dev/null
check $? "no active or idle ends with 2 s / 1 s"
pieces_ok "$T/short.json" '[1, 2]'
check $? "a flow was split for another reason than a timeout"
# an active-timeout record spans less than 2 s; an idle one is followed by 1 s of silence
jq -s -e 'map(select(.end_reason == 2 and (.last_ns - .first_ns) >= 2000000000)) |
	length == 0' "$T/short.json" >/dev/null
check $? "an active-timeout record spans 2 s or more"
end_group
exit 0
