#!/usr/bin/env bash
# tests/sh/test_flow_gen.sh - `secho flow gen`, end to end.
#
# Checks (one PASS/FAIL/UNAVAILABLE line per group, see tests/unit/harness.h):
#   - usage: `secho flow` alone prints its usage and exits 2; --help; every bad argument
#     (missing -o or --profile, bad counts, unknown profile, a bad CSV row) exits 2 with one
#     line on stderr, nothing on stdout and no file left behind;
#   - outputs: -o (or its truth's name) a device node, a symbolic link, a FIFO or a
#     directory is refused (exit 2, the reason) and left as it was; a regular file is replaced;
#   - a run stopped by SIGINT or SIGTERM removes its temporary files (exit 1);
#   - determinism: the same arguments give the same pcap and truth bytes, another seed not;
#   - the truth against an independent recount (build/tools/flow_truth_check parses the
#     pcap itself and rebuilds the flows): conformance (one round and several seeds of
#     several rounds), every statistical profile, FlowTest CSV profiles; and the checker
#     itself rejects a truth with one number changed;
#   - packet sizes: the FlowTest shares of geant and nix (tshark counts the frame sizes),
#     the mean IP lengths of heavy and light.
#   - encapsulations (--encap, the encap profile): metered by `secho flow --pcap` equal to
#     the truth with its tunnel columns (biflow, uniflow, 2 workers), tenants in two tunnels
#     two flows, no malformed frame in tshark that the encapsulation brought, every checksum
#     right; bad --encap arguments exit 2.
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-build}
S=${SECHO_BIN:-$ROOT/$BUILD/secho}
CHECK=$ROOT/$BUILD/tools/flow_truth_check
T=$(mktemp -d /tmp/secho-flowgen.XXXXXX)
trap 'rm -rf "$T"' EXIT

# group, check, end_group, unavailable (tests/unit/harness.h's format)
# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"
lines() { wc -l <"$1" | tr -d ' '; }

for b in "$S" "$CHECK"; do
	if [ ! -x "$b" ]; then
		echo "FAIL flow gen: $b not built"
		exit 1
	fi
done

# ---- usage and bad arguments ----
group "flow gen: usage and bad arguments"
"$S" flow >"$T/out" 2>"$T/err"
[ $? -eq 2 ] && [ ! -s "$T/out" ] && grep -q '^usage: secho flow' "$T/err"
check $? "secho flow alone: want exit 2 and the usage on stderr"
"$S" flow gen --help >"$T/out" 2>"$T/err"
[ $? -eq 0 ] && grep -q '^usage: secho flow gen' "$T/out" && grep -q 'geant' "$T/out" &&
	[ ! -s "$T/err" ]
check $? "flow gen --help"
printf 'START_TIME,END_TIME,L3_PROTO,L4_PROTO,SRC_PORT,DST_PORT,PACKETS,BYTES,PACKETS_REV,BYTES_REV\n0,1,4,6,1,2,1,40,0,0\n1,2,4,6,1,2,1,40,0,0,9\n' >"$T/bad.csv"
bad_args=(
	"flow gen -o $T/x.pcap"
	"flow gen --profile conformance"
	"flow gen --profile conformance -o"
	"flow gen --profile conformance -o $T/x.pcap --packets 0"
	"flow gen --profile conformance -o $T/x.pcap --packets lots"
	"flow gen --profile conformance -o $T/x.pcap --seed -1"
	"flow gen --profile frobnicate -o $T/x.pcap"
	"flow gen --profile conformance -o $T/x.pcap extra"
	"flow gen --profile conformance -o $T/x.pcap --no-such-option"
	"flow gen --profile $T/bad.csv -o $T/x.pcap"
	"flow frobnicate"
)
for a in "${bad_args[@]}"; do
	# shellcheck disable=SC2086
	"$S" $a >"$T/out" 2>"$T/err"
	r=$?
	[ $r -eq 2 ] && [ "$(lines "$T/err")" -eq 1 ] && [ ! -s "$T/out" ] &&
		! ls "$T"/x.pcap* >/dev/null 2>&1
	check $? "'$a': exit $r, $(lines "$T/err") stderr lines: $(head -1 "$T/err")"
done
"$S" flow gen --profile "$T/bad.csv" -o "$T/x.pcap" 2>"$T/err"
grep -q "bad.csv:3: " "$T/err"
check $? "a bad CSV row is named by its line: $(cat "$T/err")"
grep -q "bad.csv:3: 11 fields, the header has 10" "$T/err"
check $? "a row of 11 fields against 10 columns is counted exactly: $(cat "$T/err")"
printf '%s\n' "$(head -1 "$T/bad.csv")" "$(seq -s, 40)" >"$T/wide.csv"
"$S" flow gen --profile "$T/wide.csv" -o "$T/x.pcap" 2>"$T/err"
grep -q "wide.csv:2: more than 32 fields, the header has 10" "$T/err"
check $? "a row of 40 fields: $(cat "$T/err")"
"$S" flow gen --profile "$T/none.csv" -o "$T/x.pcap" 2>"$T/err"
r=$?
[ $r -eq 1 ] && grep -q 'none.csv' "$T/err"
check $? "missing profile file: exit $r ($(cat "$T/err"))"
end_group

# ---- outputs: only new or regular files ----
# A device node (our own, made here: never the system's), a symbolic link (to a file that
# must stay as it is), a FIFO and a directory at -o or at its truth's name are refused with
# the reason, exit 2, and left as they were; a regular file is replaced.
group "flow gen: -o writes only a new or a regular file"
gen_to() { "$S" flow gen -q --profile conformance -o "$1" >"$T/out" 2>"$T/err"; }
if mknod "$T/dev" c 1 3 2>/dev/null; then
	gen_to "$T/dev"
	r=$?
	[ $r -eq 2 ] && [ -c "$T/dev" ] && grep -q 'is a device node' "$T/err"
	check $? "-o a device node: exit $r, $(cat "$T/err"), $(stat -c %F "$T/dev")"
else
	check 1 "mknod failed (the tests run as root)"
fi
echo keep >"$T/target"
ln -s "$T/target" "$T/link"
gen_to "$T/link"
r=$?
[ $r -eq 2 ] && [ -L "$T/link" ] && [ "$(cat "$T/target")" = keep ] &&
	grep -q 'is a symbolic link' "$T/err"
check $? "-o a symbolic link: exit $r, $(cat "$T/err")"
mkfifo "$T/fifo"
gen_to "$T/fifo"
r=$?
[ $r -eq 2 ] && [ -p "$T/fifo" ] && grep -q 'is a FIFO' "$T/err"
check $? "-o a FIFO: exit $r, $(cat "$T/err")"
mkdir "$T/dir"
gen_to "$T/dir"
r=$?
[ $r -eq 2 ] && [ -d "$T/dir" ] && grep -q 'is a directory' "$T/err"
check $? "-o a directory: exit $r, $(cat "$T/err")"
ln -s "$T/target" "$T/t2.pcap.truth.csv"
gen_to "$T/t2.pcap"
r=$?
[ $r -eq 2 ] && [ -L "$T/t2.pcap.truth.csv" ] && [ ! -e "$T/t2.pcap" ] &&
	[ "$(cat "$T/target")" = keep ] && grep -q 'truth.csv: is a symbolic link' "$T/err"
check $? "the truth's name a symbolic link: exit $r, $(cat "$T/err")"
! ls "$T"/*.tmp.* >/dev/null 2>&1
check $? "temporary files left: $(ls "$T"/*.tmp.* 2>/dev/null)"
echo old >"$T/reg.pcap"
gen_to "$T/reg.pcap"
r=$?
[ $r -eq 0 ] && [ -f "$T/reg.pcap" ] && [ "$(head -c 3 "$T/reg.pcap")" != old ]
check $? "-o an existing regular file is replaced: exit $r, $(cat "$T/err")"
rm -f "$T/dev" "$T/link" "$T/fifo" "$T/t2.pcap.truth.csv" "$T/reg.pcap"*
rmdir "$T/dir"
end_group

# ---- stopped by a signal: no temporary file left ----
# A long run is stopped once its temporary capture exists (bounded wait): it exits 1
# saying so, and neither the temporary files nor the targets remain.
group "flow gen: SIGINT or SIGTERM removes the temporary files"
for sig in INT TERM; do
	mkdir "$T/sig"
	"$S" flow gen -q --profile heavy --packets 100000000 -o "$T/sig/big.pcap" \
		>"$T/out" 2>"$T/err" &
	pid=$!
	for _ in $(seq 100); do
		ls "$T"/sig/big.pcap.tmp.* >/dev/null 2>&1 && break
		sleep 0.05
	done
	sleep 0.2
	kill -"$sig" $pid
	r=0
	for _ in $(seq 100); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.05
	done
	kill -0 $pid 2>/dev/null && kill -KILL $pid
	wait $pid
	r=$?
	[ $r -eq 1 ] && [ -z "$(ls -A "$T/sig")" ] && grep -q 'stopped by a signal' "$T/err"
	check $? "SIG$sig: exit $r, left: $(ls -A "$T/sig" | tr '\n' ' '), $(cat "$T/err")"
	rm -rf "$T/sig"
done
end_group

# ---- determinism ----
group "flow gen: same arguments, same bytes"
for p in conformance heavy light geant nix short; do
	n=8000
	[ $p = conformance ] && n=3000
	"$S" flow gen -q --profile $p --packets $n --seed 5 -o "$T/a.pcap" &&
		"$S" flow gen -q --profile $p --packets $n --seed 5 -o "$T/b.pcap" &&
		"$S" flow gen -q --profile $p --packets $n --seed 6 -o "$T/c.pcap"
	check $? "$p: generation failed"
	cmp -s "$T/a.pcap" "$T/b.pcap" && cmp -s "$T/a.pcap.truth.csv" "$T/b.pcap.truth.csv"
	check $? "$p: same seed, different files"
	! cmp -s "$T/a.pcap" "$T/c.pcap" && ! cmp -s "$T/a.pcap.truth.csv" "$T/c.pcap.truth.csv"
	check $? "$p: another seed, same files"
done
end_group

# ---- the truth against an independent recount ----
group "flow gen: truth equals an independent recount of the capture"
recount() { # label pcap
	"$CHECK" "$2" "$2.truth.csv" >"$T/chk" 2>&1
	check $? "$1: $(head -5 "$T/chk" | tr '\n' ' ')"
}
"$S" flow gen -q --profile conformance -o "$T/conf.pcap"
recount "conformance, one round" "$T/conf.pcap"
for seed in 1 2 3; do
	"$S" flow gen -q --profile conformance --packets 4000 --seed $seed -o "$T/c$seed.pcap"
	recount "conformance seed $seed" "$T/c$seed.pcap"
done
for p in heavy light geant nix short; do
	"$S" flow gen -q --profile $p --packets 20000 --seed 9 -o "$T/$p.pcap"
	recount "$p" "$T/$p.pcap"
done
# FlowTest profiles: the shapes of its published files (unsorted rows, negative times,
# a flow longer than the active timeout, ICMP rows with ports), and its report format
# (addresses first, fractional times) with address clashes to resolve.
cat >"$T/ft.csv" <<'EOF'
START_TIME,END_TIME,L3_PROTO,L4_PROTO,SRC_PORT,DST_PORT,PACKETS,BYTES,PACKETS_REV,BYTES_REV
64230,66230,4,1,0,0,3,252,0,0
-1,0,4,6,445,51572,2,316,2,281
-3662,-3662,4,17,53,38176,1,84,1,68
-126506,-1514,4,6,16386,443,28,10122,27,11019
642995,688834,4,6,49154,59075,396,578494,49,10646
-4729,24,6,58,0,0,1,72,1,64
-273194,618532,4,1,0,0,1785,51765,1785,51765
0,28354,4,1,58428,1443,318,427066,100,134222
0,28354,6,17,58428,1443,318,427066,100,20000
622215,685944,6,6,993,59594,12,960,0,0
EOF
cat >"$T/ftr.csv" <<'EOF'
SRC_IP,DST_IP,START_TIME,END_TIME,L3_PROTO,L4_PROTO,SRC_PORT,DST_PORT,PACKETS,BYTES,PACKETS_REV,BYTES_REV
198.51.100.1,203.0.113.9,0.000,900314.000,4,1,0,0,17,25632,17,25632
198.51.100.2,203.0.113.9,30.000,891.5,4,17,5060,5060,15,21013,75,5901
198.51.100.2,203.0.113.9,40.000,2000,4,17,5060,5060,3,300,0,0
198.51.100.2,203.0.113.9,50.000,2000,4,47,0,0,3,300,0,0
198.51.100.2,203.0.113.9,60.000,2000,4,47,0,0,3,300,3,300
2001:db8::1,,268465.000,273218.000,6,58,0,0,1,72,1,72
EOF
for f in ft ftr; do
	"$S" flow gen -q --profile "$T/$f.csv" -o "$T/$f.pcap"
	check $? "$f.csv: generation failed"
	recount "$f.csv" "$T/$f.pcap"
done
grep -q '^# csv_key_adjusted=2$' "$T/ftr.pcap.truth.csv"
check $? "ftr.csv: the two key clashes are counted"
# The row totals: each profile row's packets appear in the truth (none lost).
want=$(awk -F, 'NR > 1 {s += $7 + $9} END {print s}' "$T/ft.csv")
have=$(awk -F, '!/^#/ && NR > 1 {s += $11} END {print s}' "$T/ft.pcap.truth.csv")
[ "$want" = "$have" ]
check $? "ft.csv: $want packets in the profile, $have in the truth"
# The checker must be able to fail: one octet count changed.
awk -F, 'BEGIN {OFS = ","} NR == 2 {$12 = $12 + 1} {print}' "$T/conf.pcap.truth.csv" \
	>"$T/bad.truth"
"$CHECK" "$T/conf.pcap" "$T/bad.truth" >/dev/null 2>&1
[ $? -eq 1 ]
check $? "the recount accepted a truth with a wrong octet count"
end_group

# ---- packet sizes ----
group "flow gen: packet sizes of the profiles"
if command -v tshark >/dev/null; then
	shares() { # pcap -> "s64 s127 s1023 s1518 sjumbo" (percent of frames)
		tshark -r "$1" -T fields -e frame.len 2>/dev/null | awk '
			{ n++; l = $1; if (l <= 64) a++; else if (l <= 127) b++;
			  else if (l <= 1023) c++; else if (l <= 1518) d++; else e++ }
			END { printf "%.1f %.1f %.1f %.1f %.1f", a*100/n, b*100/n, c*100/n, d*100/n, e*100/n }'
	}
	near() { # have want tolerance
		awk -v h="$1" -v w="$2" -v t="$3" 'BEGIN { exit !(h - w <= t && w - h <= t) }'
	}
	"$S" flow gen -q --profile geant --packets 40000 -o "$T/g.pcap"
	"$S" flow gen -q --profile nix --packets 40000 -o "$T/n.pcap"
	read -r -a gs <<<"$(shares "$T/g.pcap")"
	read -r -a ns <<<"$(shares "$T/n.pcap")"
	gw=(7.9 28.4 4.2 7.1 52.4)
	nw=(16.9 37.7 12.4 20.9 12.1)
	for i in 0 1 2 3 4; do
		near "${gs[$i]:-0}" "${gw[$i]}" 2
		check $? "geant band $i: ${gs[$i]:-?}% (FlowTest ${gw[$i]}%)"
		near "${ns[$i]:-0}" "${nw[$i]}" 2
		check $? "nix band $i: ${ns[$i]:-?}% (FlowTest ${nw[$i]}%)"
	done
else
	check 1 "FlowTest shares: tshark not installed (scripts/deps.sh installs it)"
fi
mean_len() { awk -F, '!/^#/ && NR > 1 {p += $11; o += $12} END {printf "%.0f", o / p}' "$1"; }
hm=$(mean_len "$T/heavy.pcap.truth.csv")
lm=$(mean_len "$T/light.pcap.truth.csv")
[ "$hm" -ge 900 ] && [ "$hm" -le 1100 ]
check $? "heavy mean IP length $hm B (about 1,000)"
[ "$lm" -ge 260 ] && [ "$lm" -le 320 ]
check $? "light mean IP length $lm B (about 290)"
end_group

# ---- encapsulations: metered exactly, decoded by tshark ----
# Every --encap kind around the conformance profile (and two statistical profiles), and the
# encap profile (every kind,
# tenants with the same inner key in two tunnels): `secho flow --pcap` biflow, uniflow and
# with two workers gives records equal to the truth, tunnel columns included
# (tests/sh/flow_lib.bash). tshark decodes the frames with no malformed packet the
# encapsulation brought: the same frames (the same seed) are malformed with and without
# it or fewer (the conformance profile's deliberate ones, zero payloads on DNS or NTP
# ports: tshark does not look into every tunnel's payload as far), and every checksum
# verifies; and
# in the encap profile only an application protocol inside is.
group "flow gen: every encapsulation metered exactly (biflow, uniflow, 2 workers), tshark clean"
# shellcheck source=tests/sh/flow_lib.bash
. "$ROOT/tests/sh/flow_lib.bash"
if ! command -v jq >/dev/null || ! command -v tshark >/dev/null; then
	check 1 "jq and tshark needed (scripts/deps.sh installs them)"
else
	metered_as_truth() { # label pcap
		local m
		for m in bi uni w2; do
			case $m in
			bi) set -- "$1" "$2" ;;
			uni) set -- "$1" "$2" --uniflow ;;
			w2) set -- "$1" "$2" --workers 2 ;;
			esac
			"$S" flow --pcap "$2" --json "$T/enc.json" --quiet "${@:3}" >/dev/null 2>"$T/err"
			check $? "$1 $m: secho flow: $(head -1 "$T/err")"
			record_lines "$T/enc.json" >"$T/got.lines"
			truth_lines "$2.truth.csv" >"$T/want.lines"
			cmp -s "$T/got.lines" "$T/want.lines"
			check $? "$1 $m: records differ from the truth: $(diff "$T/got.lines" "$T/want.lines" | head -4 | tr '\n' ' ')"
		done
	}
	malformed() { tshark -r "$1" -Y _ws.malformed -T fields -e frame.number 2>/dev/null; }
	"$S" flow gen -q --profile conformance --packets 1500 --seed 4 -o "$T/plain.pcap"
	malformed "$T/plain.pcap" >"$T/plain.mal"
	for e in mpls mpls2:100 pppoe:7 gre gre:5 erspan:9 vxlan:42 geneve:43 gtpu:44 ipip ipip4 \
		ipip6 eompls:99; do
		"$S" flow gen -q --profile conformance --packets 1500 --seed 4 --encap $e -o "$T/enc.pcap"
		check $? "--encap $e: generation failed"
		head -1 "$T/enc.pcap.truth.csv" | grep -q ',tunnel_type,tunnel_id,bytes_outer$'
		check $? "--encap $e: no tunnel columns in the truth"
		want_type=${e%%:*}
		case $want_type in mpls* | pppoe) want_type=none ;; ipip4 | ipip6) want_type=ipip ;; esac
		n=$(grep -v '^#' "$T/enc.pcap.truth.csv" | tail -n +2 | cut -d, -f16 | sort -u | tr '\n' ' ')
		[ "$n" = "$want_type " ]
		check $? "--encap $e: tunnel types in the truth: '$n', want '$want_type '"
		metered_as_truth "--encap $e" "$T/enc.pcap"
		malformed "$T/enc.pcap" >"$T/enc.mal"
		new=$(comm -13 <(sort "$T/plain.mal") <(sort "$T/enc.mal") | head -3 | tr '\n' ' ')
		[ -s "$T/plain.mal" ] && [ -z "$new" ]
		check $? "--encap $e: frames tshark finds malformed only with the encapsulation: $new"
	done
	# statistical profiles too: jumbo frames (geant) in VXLAN, many flows (short) in MPLS
	for pe in "geant vxlan:7" "short mpls2"; do
		read -r p e <<<"$pe"
		"$S" flow gen -q --profile "$p" --packets 10000 --seed 2 --encap "$e" -o "$T/st.pcap"
		check $? "$p --encap $e: generation failed"
		metered_as_truth "$p --encap $e" "$T/st.pcap"
	done
	"$S" flow gen -q --profile encap --packets 3000 --seed 2 -o "$T/encp.pcap"
	check $? "encap profile: generation failed"
	metered_as_truth "encap profile" "$T/encp.pcap"
	bad=$(tshark -r "$T/encp.pcap" -Y _ws.malformed -T fields -e frame.protocols 2>/dev/null |
		grep -Ev ':(dns|ntp|ssh|tls|data)$' | sort -u | head -3 | tr '\n' ' ')
	[ -z "$bad" ]
	check $? "encap profile: tshark finds malformed tunnel or IP headers: $bad"
	# every checksum right, outer and inner (tshark verifies them when asked)
	ck=(-o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE)
	nbad=$(tshark -r "$T/encp.pcap" "${ck[@]}" -Y 'ip.checksum.status == 0 ||
		udp.checksum.status == 0 || tcp.checksum.status == 0 || icmp.checksum.status == 0 ||
		icmpv6.checksum.status == 0' 2>/dev/null | wc -l)
	ngood=$(tshark -r "$T/encp.pcap" "${ck[@]}" -Y 'udp.checksum.status == 1 &&
		(vxlan || geneve || gtp)' 2>/dev/null | wc -l)
	[ "$nbad" -eq 0 ] && [ "$ngood" -gt 20 ]
	check $? "encap profile: $nbad frames with a bad checksum, $ngood tunnel UDP checksums verified"
	# every kind in the truth, and the tenants: one inner key in two tunnels is two flows
	types=$(grep -v '^#' "$T/encp.pcap.truth.csv" | tail -n +2 | cut -d, -f16 | sort -u | tr '\n' ' ')
	[ "$types" = "eompls erspan geneve gre gtpu ipip none vxlan " ]
	check $? "encap profile: tunnel types '$types'"
	for t in vxlan geneve gre gtpu; do
		n=$(grep -v '^#' "$T/encp.pcap.truth.csv" | tail -n +2 | awk -F, -v t=$t '$16 == t {
			k = $1 FS $2 FS $3 FS $4 FS $5 FS $6 FS $7 FS $8; if (!(k SUBSEP $17 in s)) { s[k SUBSEP $17] = 1; ids[k]++ } }
			END { n = 0; for (k in ids) if (ids[k] > 1) n++; print n }')
		[ "${n:-0}" -gt 0 ]
		check $? "encap profile: no inner key in two $t tunnels ($n)"
	done
	# bytes_outer: the inner octets plus the outer headers, per packet
	awk -F, '!/^#/ && NR > 1 && $16 != "none" && $16 != "eompls" && $18 <= $12 { bad++ }
		END { exit bad > 0 }' "$T/encp.pcap.truth.csv"
	check $? "encap profile: a tunnelled flow's bytes_outer not above its octets"
	# a comparison that can fail: one tunnel ID changed
	awk -F, 'BEGIN { OFS = "," } NR > 1 && !/^#/ && $16 == "vxlan" && !done { $17 = $17 + 1; done = 1 } { print }' \
		"$T/encp.pcap.truth.csv" >"$T/bad.truth"
	"$S" flow --pcap "$T/encp.pcap" --json "$T/enc.json" --quiet >/dev/null 2>&1
	record_lines "$T/enc.json" >"$T/got.lines"
	truth_lines "$T/bad.truth" >"$T/want.lines"
	! cmp -s "$T/got.lines" "$T/want.lines"
	check $? "a truth with a wrong VNI was accepted"
	# bad --encap arguments: exit 2, one line
	for a in "--encap frob" "--encap vxlan:16777216" "--encap ipip:3" "--encap mpls:15" \
		"--encap gtpu:-1" "--encap vxlan:" "--profile encap --encap gre"; do
		# shellcheck disable=SC2086
		"$S" flow gen --profile conformance -o "$T/x.pcap" $a >"$T/out" 2>"$T/err"
		r=$?
		[ $r -eq 2 ] && [ "$(lines "$T/err")" -eq 1 ] && [ ! -s "$T/out" ] && [ ! -e "$T/x.pcap" ]
		check $? "'$a': exit $r: $(cat "$T/err")"
	done
fi
end_group
