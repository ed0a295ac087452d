#!/usr/bin/env bash
# tests/sh/test_cli.sh - the secho command line, end to end.
#
# Checks (one PASS/FAIL/UNAVAILABLE line per group, see tests/unit/harness.h):
#   - `secho --help`, `secho help`, `--version` and every command's --help exit 0;
#     an unknown command or option exits 2 with exactly one line on stderr;
#   - crypt, every mode x key size x implementation: round trip, and equality with
#     `openssl enc -nopad` on random inputs of 0, 1, 15, 16, 17, 1000 bytes (block modes:
#     whole blocks; PCBC, which OpenSSL lacks, against CBC of P_i ^ P_(i-1): the two are
#     equal because C_i = E(P_i ^ P_(i-1) ^ C_(i-1)) in both);
#   - GCM: McGrew-Viega test cases (AES-128/192/256, with and without AAD, a 60-byte
#     IV), round trips, tampering (exit 1, nothing on stdout);
#   - every bad-argument case: exit 2, one line on stderr, nothing on stdout, no key text;
#   - selftest exits 0; `speed --quick --json` is valid JSON with the documented fields.
# Needs: openssl, xxd, jq (scripts/deps.sh installs them).
set -u
ROOT=${SECHO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
S=${SECHO_BIN:-$ROOT/build/secho}
T=$(mktemp -d /tmp/secho-cli-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
QUICK=${SECHO_TEST_QUICK:-0}

# shellcheck source=tests/sh/check_lib.bash
. "$ROOT/tests/sh/check_lib.bash"

need_tools "secho cli" openssl xxd jq || exit 1
if [ ! -x "$S" ]; then
	echo "FAIL secho cli: $S not built"
	exit 1
fi

# run [-o OUTFILE] INFILE ARGS...: run secho with stdin from INFILE, stdout to OUTFILE
# (default $T/out), stderr to $T/err. Sets rc, err1 (first stderr line) and nerr (stderr
# line count) with builtins only: process start-up is the test's main cost.
run() {
	local o=$T/out
	if [ "$1" = -o ]; then
		o=$2
		shift 2
	fi
	local in=$1
	shift
	"$S" "$@" <"$in" >"$o" 2>"$T/err"
	rc=$?
	mapfile -t errl <"$T/err"
	nerr=${#errl[@]}
	err1=${errl[0]:-}
}
lines() { wc -l <"$1" | tr -d ' '; }
: >"$T/empty"

# ---- help, version, unknown command/options ----
group "help and usage"
"$S" --help >"$T/out" 2>&1
check $? "--help exit"
grep -q '^Commands:' "$T/out"
check $? "--help lists commands"
cmds=$(sed -n '/^Commands:/,$p' "$T/out" | awk 'NR > 1 && $1 != "" {print $1}')
[ -n "$cmds" ]
check $? "no commands listed"
"$S" help >/dev/null 2>&1
check $? "help exit"
"$S" --version >"$T/out" 2>&1 && grep -q '^secho ' "$T/out"
check $? "--version"
for c in $cmds; do
	"$S" "$c" --help >"$T/out" 2>"$T/err"
	r=$?
	[ $r -eq 0 ] && grep -qi "^usage: secho $c" "$T/out" && [ ! -s "$T/err" ]
	check $? "$c --help: exit $r or no usage"
	"$S" help "$c" >"$T/out2" 2>/dev/null && cmp -s "$T/out" "$T/out2"
	check $? "help $c differs from $c --help"
	"$S" "$c" --no-such-option </dev/null >"$T/out" 2>"$T/err"
	r=$?
	# The contract for every command: exit 2, one line on stderr, nothing on stdout; the
	# commands of this file's scope (crypt, speed, selftest) also name the option.
	[ $r -eq 2 ] && [ "$(lines "$T/err")" -eq 1 ] && [ ! -s "$T/out" ] &&
		{ [[ " crypt speed selftest " != *" $c "* ]] ||
			grep -q -- '--no-such-option' "$T/err"; }
	check $? "$c --no-such-option: exit $r, $(lines "$T/err") stderr lines (want 2, 1)"
done
for bad in frobnicate --frobnicate; do
	"$S" $bad >"$T/out" 2>"$T/err"
	r=$?
	[ $r -eq 2 ] && [ "$(lines "$T/err")" -eq 1 ] && grep -q -- "$bad" "$T/err"
	check $? "'$bad': exit $r, $(lines "$T/err") stderr lines"
done
"$S" help frobnicate >/dev/null 2>"$T/err"
[ $? -eq 2 ] && [ "$(lines "$T/err")" -eq 1 ]
check $? "help frobnicate"
"$S" >/dev/null 2>&1
[ $? -eq 2 ]
check $? "no command: exit 2"
end_group

# ---- which implementations run here ----
# An implementation is skipped only when the CPU lacks its instructions, as /proc/cpuinfo
# says (the kernel's view, not ours): otherwise a refusal is a failure.
K16=000102030405060708090a0b0c0d0e0f
cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
cpu_lacks() { # impl -> the missing flags, or nothing
	local f need=
	case $1 in
	aesni) need="aes pclmulqdq sse4_1" ;;
	vaes | vaes-split) need="vaes vpclmulqdq avx512f avx512bw avx512vl" ;;
	esac
	for f in $need; do [[ "$cpu_flags" == *" $f "* ]] || echo -n "$f "; done
}
impls=()
group "crypt: every implementation the CPU can run is available"
for i in portable aesni vaes vaes-split; do
	run "$T/empty" crypt -e --mode ctr --key $K16 --iv $K16 --impl $i
	missing=$(cpu_lacks $i)
	if [ $rc -ne 0 ] && [ -n "$missing" ]; then
		unavailable "crypt --impl $i" "the CPU lacks $missing($(head -1 "$T/err"))"
		continue
	fi
	check $rc "--impl $i refused although the CPU has its instructions: $(head -1 "$T/err")"
	[ $rc -eq 0 ] && impls+=("$i")
done
end_group
if [ ${#impls[@]} -eq 0 ]; then
	echo "FAIL crypt: no implementation available"
	exit 1
fi

# ---- crypt vs openssl enc, every mode x key size x impl ----
# Process start-up costs tens of milliseconds here, so random keys and IVs come from one
# pool read once, and each openssl reference is computed once and compared with every
# implementation.
POOL=$(xxd -p -c0 -l 32768 /dev/urandom | tr -d '\n')
pool_at=0
rnd_hex() { # bytes -> sets $hex (no subshell)
	local n=$(($1 * 2))
	[ $((pool_at + n)) -gt ${#POOL} ] && pool_at=0
	hex=${POOL:pool_at:n}
	pool_at=$((pool_at + n))
}
xor_prev() { # PCBC -> CBC plaintext: Q_i = P_i ^ P_(i-1), P_0 = 0 (hex in $1, out $q_out)
	local h=$1 prev=00000000000000000000000000000000 i j blk w
	q_out=""
	for ((i = 0; i < ${#h}; i += 32)); do
		blk=${h:i:32}
		for ((j = 0; j < 32; j += 8)); do
			printf -v w '%08x' $((0x${blk:j:8} ^ 0x${prev:j:8}))
			q_out+=$w
		done
		prev=$blk
	done
}
openssl_ref() { # mode keyhex ivhex infile -> stdout
	local m=$1 k=$2 iv=$3 f=$4 bits=$((${#2} * 4))
	case $m in
	ecb) openssl enc -aes-$bits-ecb -K "$k" -nopad <"$f" ;;
	pcbc)
		xor_prev "$(xxd -p -c0 "$f" | tr -d '\n')"
		printf '%s' "$q_out" | xxd -r -p |
			openssl enc -aes-$bits-cbc -K "$k" -iv "$iv" -nopad
		;;
	*) openssl enc -aes-$bits-$m -K "$k" -iv "$iv" -nopad <"$f" ;;
	esac
}
for n in 0 1 15 16 17 992 1000; do head -c $n /dev/urandom >"$T/m$n"; done
for mode in ecb cbc pcbc ctr cfb ofb; do
	case $mode in
	ecb | cbc | pcbc) sizes="0 16 992" ;;
	*) sizes="0 1 15 16 17 1000" ;;
	esac
	for bits in 128 192 256; do
		group "crypt $mode aes-$bits ${impls[*]} vs openssl enc, round trip"
		for n in $sizes; do
			rnd_hex $((bits / 8))
			key=$hex
			rnd_hex 16
			iv=$hex
			ivarg=(--iv "$iv")
			[ $mode = ecb ] && ivarg=()
			f=$T/m$n
			openssl_ref $mode "$key" "$iv" "$f" >"$T/ref" 2>/dev/null
			check $? "openssl enc failed ($mode, $bits, $n bytes)"
			for impl in "${impls[@]}"; do
				run -o "$T/ct" "$f" crypt -e --mode $mode --key "$key" "${ivarg[@]}" \
					--impl $impl
				check $rc "$impl: encrypt $n bytes: exit $rc: $err1"
				cmp -s "$T/ct" "$T/ref"
				check $? "$impl: $n bytes: differs from openssl enc"
				run "$T/ct" crypt -d --mode $mode --key "$key" "${ivarg[@]}" --impl $impl
				[ $rc -eq 0 ] && cmp -s "$T/out" "$f"
				check $? "$impl: $n bytes: decrypt does not round-trip (exit $rc)"
			done
		done
		end_group
	done
done

# ---- GCM known answers: McGrew & Viega, "The Galois/Counter Mode of Operation",
# test cases 2, 3, 4, 6 (AES-128), 8, 9 (AES-192), 13, 14, 15, 16 (AES-256).
# key | iv | aad | plaintext | ciphertext || tag
MVK=feffe9928665731c6d6a8f9467308308
MVP=d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39
MVA=feedfacedeadbeeffeedfacedeadbeefabaddad2
Z16=00000000000000000000000000000000
gcm_cases=(
	"2|$Z16|000000000000000000000000||$Z16|0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf"
	"3|$MVK|cafebabefacedbaddecaf888||${MVP}1aafd255|42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f59854d5c2af327cd64a62cf35abd2ba6fab4"
	"4|$MVK|cafebabefacedbaddecaf888|$MVA|$MVP|42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e0915bc94fbc3221a5db94fae95ae7121a47"
	"6|$MVK|9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b|$MVA|$MVP|8ce24998625615b603a033aca13fb894be9112a5c3a211a8ba262a3cca7e2ca701e4a9a4fba43c90ccdcb281d48c7c6fd62875d2aca417034c34aee5619cc5aefffe0bfa462af43c1699d050"
	"8|000000000000000000000000000000000000000000000000|000000000000000000000000||$Z16|98e7247c07f0fe411c267e4384b0f6002ff58d80033927ab8ef4d4587514f0fb"
	"9|000000000000000000000000000000000000000000000000|000000000000000000000000|||cd33b28ac773f74ba00ed1f312572435"
	"13|$Z16$Z16|000000000000000000000000|||530f8afbc74536b9a963b4f1c4cb738b"
	"14|$Z16$Z16|000000000000000000000000||$Z16|cea7403d4d606b6e074ec5d3baf39d18d0d1c8a799996bf0265b98b5d48ab919"
	"15|$MVK$MVK|cafebabefacedbaddecaf888||${MVP}1aafd255|522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015adb094dac5d93471bdec1a502270e3cc6c"
	"16|$MVK$MVK|cafebabefacedbaddecaf888|$MVA|$MVP|522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f66276fc6ece0f4e1768cddf8853bb2d551b"
)
for impl in "${impls[@]}"; do
	group "crypt gcm McGrew-Viega cases 2-16 $impl"
	for c in "${gcm_cases[@]}"; do
		IFS='|' read -r id key iv aad pt ct <<<"$c"
		aadarg=()
		[ -n "$aad" ] && aadarg=(--aad "$aad")
		printf '%s' "$pt" | xxd -r -p >"$T/pt"
		printf '%s' "$ct" | xxd -r -p >"$T/ctref"
		run "$T/pt" crypt -e --mode gcm --key "$key" --iv "$iv" "${aadarg[@]}" --impl $impl
		[ $rc -eq 0 ] && cmp -s "$T/out" "$T/ctref"
		check $? "case $id encrypt (exit $rc)"
		run "$T/ctref" crypt -d --mode gcm --key "$key" --iv "$iv" "${aadarg[@]}" --impl $impl
		[ $rc -eq 0 ] && cmp -s "$T/out" "$T/pt"
		check $? "case $id decrypt (exit $rc)"
	done
	end_group

	group "crypt gcm round trip and tampering $impl"
	k=0
	for n in 0 1 15 16 17 1000; do
		for bits in 128 192 256; do
			rnd_hex $((bits / 8))
			key=$hex
			ivlens=(1 12 16 60)
			ivlen=${ivlens[k % 4]}
			k=$((k + 1))
			rnd_hex $ivlen
			iv=$hex
			rnd_hex $((n % 40 + 1))
			aad=$hex
			a=(crypt --mode gcm --key "$key" --iv "$iv" --aad "$aad" --impl "$impl")
			run -o "$T/ct" "$T/m$n" "${a[@]}" -e
			[ $rc -eq 0 ] && [ "$(stat -c %s "$T/ct")" -eq $((n + 16)) ]
			check $? "$n bytes aes-$bits iv $ivlen: encrypt (exit $rc)"
			run "$T/ct" "${a[@]}" -d
			[ $rc -eq 0 ] && cmp -s "$T/out" "$T/m$n"
			check $? "$n bytes aes-$bits iv $ivlen: round trip (exit $rc)"
			[ $bits = 256 ] || continue
			# tamper: the first byte (ciphertext, or tag when empty) and the last tag
			# byte; wrong AAD; wrong IV; one byte cut
			len=$((n + 16))
			for pos in 0 $((len - 1)); do
				cp "$T/ct" "$T/bad"
				b=$(xxd -s $pos -l 1 -p "$T/ct")
				printf "\\x$(printf %02x $((0x$b ^ 0x01)))" |
					dd of="$T/bad" bs=1 seek=$pos conv=notrunc status=none
				run "$T/bad" "${a[@]}" -d
				[ $rc -eq 1 ] && [ ! -s "$T/out" ] && [ "$nerr" -eq 1 ]
				check $? "$n bytes: flipped byte $pos accepted or wrong report (exit $rc)"
			done
			run "$T/ct" crypt -d --mode gcm --key "$key" --iv "$iv" --aad "${aad}00" \
				--impl $impl
			[ $rc -eq 1 ] && [ ! -s "$T/out" ]
			check $? "$n bytes: wrong AAD accepted (exit $rc)"
			run "$T/ct" crypt -d --mode gcm --key "$key" --iv "${iv}00" --aad "$aad" \
				--impl $impl
			[ $rc -eq 1 ] && [ ! -s "$T/out" ]
			check $? "$n bytes: wrong IV accepted (exit $rc)"
			head -c $((len - 1)) "$T/ct" >"$T/bad"
			run "$T/bad" "${a[@]}" -d
			[ $rc -ne 0 ] && [ ! -s "$T/out" ]
			check $? "$n bytes: truncated input accepted (exit $rc)"
		done
	done
	end_group
done

# ---- bad arguments: exit 2, one stderr line naming the problem, empty stdout ----
rnd_hex 32
KEY=$hex
rnd_hex 16
IV=$hex
group "crypt bad arguments"
bad() { # infile expected-substring args...
	local f=$1 want=$2
	shift 2
	run "$f" "$@"
	shopt -s nocasematch
	[ $rc -eq 2 ] && [ "$nerr" -eq 1 ] && [ ! -s "$T/out" ] && [[ $err1 == *"$want"* ]] &&
		[[ $err1 != *"$KEY"* ]]
	check $? "secho $* -> exit $rc, $nerr stderr lines: ${errl[*]}"
	shopt -u nocasematch
}
E=$T/empty
bad $E "-e" crypt --mode ctr --key $KEY --iv $IV
bad $E "choose one" crypt -e -d --mode ctr --key $KEY --iv $IV
bad $E "missing --mode" crypt -e --key $KEY --iv $IV
bad $E "xts" crypt -e --mode xts --key $KEY --iv $IV
bad $E "missing --key" crypt -e --mode ctr --iv $IV
bad $E "missing --iv" crypt -e --mode ctr --key $KEY
bad $E "missing --iv" crypt -e --mode gcm --key $KEY
bad $E "--iv" crypt -e --mode ecb --key $KEY --iv $IV
bad $E "--key" crypt -e --mode ctr --key 00112233 --iv $IV
bad $E "--key" crypt -e --mode ctr --key "${KEY}00" --iv $IV
bad $E "--key" crypt -e --mode ctr --key "${KEY:0:63}" --iv $IV
bad $E "--key" crypt -e --mode ctr --key "${KEY:0:62}zz" --iv $IV
bad $E "--key" crypt -e --mode ctr --key "" --iv $IV
bad $E "--iv" crypt -e --mode ctr --key $KEY --iv 00112233
bad $E "--iv" crypt -e --mode cbc --key $KEY --iv "${IV}00"
bad $E "--iv" crypt -e --mode cfb --key $KEY --iv "xx${IV:2}"
bad $E "--iv" crypt -e --mode gcm --key $KEY --iv ""
bad $E "--iv" crypt -e --mode gcm --key $KEY --iv 123
bad $E "--aad" crypt -e --mode ctr --key $KEY --iv $IV --aad 00
bad $E "--aad" crypt -e --mode gcm --key $KEY --iv $IV --aad 0g
bad $E "nosuch" crypt -e --mode ctr --key $KEY --iv $IV --impl nosuch
bad $E "--impl" crypt -e --mode ctr --key $KEY --iv $IV --impl
bad $E "extra" crypt -e --mode ctr --key $KEY --iv $IV extra
bad $E "--bogus" crypt -e --mode ctr --key $KEY --iv $IV --bogus
for m in ecb cbc pcbc; do
	ivarg=(--iv "$IV")
	[ $m = ecb ] && ivarg=()
	for n in 1 15 17 1000; do
		bad "$T/m$n" "$n bytes" crypt -e --mode $m --key $KEY "${ivarg[@]}"
		bad "$T/m$n" "$n bytes" crypt -d --mode $m --key $KEY "${ivarg[@]}"
	done
done
for n in 0 1 15; do
	bad "$T/m$n" "$n bytes" crypt -d --mode gcm --key $KEY --iv $IV
done
for i in aesni vaes vaes-split; do
	if [[ " ${impls[*]} " != *" $i "* ]]; then
		bad $E "$i" crypt -e --mode ctr --key $KEY --iv $IV --impl $i
	fi
done
bad $E "--repeat" speed --repeat 0
bad $E "--sizes" speed --sizes 16,abc
bad $E "--mode" speed --mode xts
bad $E "--seconds" speed --seconds -1
bad $E "nosuch" speed --impl nosuch
bad $E "nosuch" selftest --impl nosuch
end_group

# No key may stay readable in the process's command line (each --key is overwritten: an
# earlier one when the next is parsed, the last after parsing) and none appears in any
# output. crypt waits on a FIFO for its input meanwhile, so /proc/PID/cmdline is read
# while it runs (bounded: the writer end is closed after at most 5 s).
group "crypt key hygiene"
rnd_hex 32
KEY2=$hex
mkfifo "$T/fifo"
"$S" crypt -e --mode ctr -k "$KEY2" --key "$KEY" --iv "$IV" <"$T/fifo" >"$T/out" 2>"$T/err" &
pid=$!
exec 9>"$T/fifo"
cmdline=
for _ in $(seq 1 50); do
	# the IV stays (it is no secret): once it is there, argv is in place
	cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)
	[[ "$cmdline" == *"$IV"* ]] && [[ "$cmdline" != *"$KEY"* ]] && break
	sleep 0.1
done
[[ "$cmdline" == *"$IV"* ]]
check $? "crypt's command line not readable while it waits for input"
[[ "$cmdline" != *"$KEY"* ]]
check $? "the last --key visible in /proc/PID/cmdline while reading"
[[ "$cmdline" != *"$KEY2"* ]]
check $? "the first of two --key visible in /proc/PID/cmdline while reading"
exec 9>&-
wait $pid
check $? "crypt after fifo"
! grep -q "$KEY" "$T/err"
check $? "key in stderr"
end_group

# ---- selftest ----
group "selftest"
"$S" selftest >"$T/out" 2>"$T/err"
rc=$?
check $rc "selftest exit $rc: $(grep -m3 '^FAIL' "$T/out" | tr '\n' '|')"
grep -q '^selftest: [0-9]* passed, 0 failed' "$T/out"
check $? "summary line"
for impl in "${impls[@]}"; do
	"$S" selftest --impl $impl >"$T/out" 2>&1
	check $? "selftest --impl $impl"
done
end_group

# ---- the same binary built with ASan+UBSan (make asan), when present: one pass of each
# command path; any sanitizer report makes the command exit non-zero or print to stderr.
A=$ROOT/${BUILD:-build}/asan/secho
if [ -x "$A" ]; then
	group "asan+ubsan build: crypt every mode, selftest, errors, speed"
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99
	export UBSAN_OPTIONS=halt_on_error=1:exitcode=99
	rnd_hex 32
	key=$hex
	for mode in gcm ecb cbc pcbc ctr cfb ofb; do
		f=$T/m1000 ivarg=(--iv "$IV")
		case $mode in ecb) f=$T/m992 ivarg=() ;; cbc | pcbc) f=$T/m992 ;; esac
		"$A" crypt -e --mode $mode --key "$key" "${ivarg[@]}" <"$f" >"$T/ct" 2>"$T/err" &&
			"$A" crypt -d --mode $mode --key "$key" "${ivarg[@]}" <"$T/ct" >"$T/out" \
				2>>"$T/err" && cmp -s "$T/out" "$f" && [ ! -s "$T/err" ]
		check $? "$mode round trip under ASan: $(head -3 "$T/err" | tr '\n' '|')"
	done
	"$A" crypt -d --mode gcm --key "$key" --iv "$IV" <"$T/m1000" >"$T/out" 2>"$T/err"
	[ $? -eq 1 ] && [ "$(lines "$T/err")" -eq 1 ]
	check $? "gcm tag failure under ASan: $(head -3 "$T/err" | tr '\n' '|')"
	"$A" crypt -e --mode cbc --key 0g --iv "$IV" <"$T/empty" >/dev/null 2>"$T/err"
	[ $? -eq 2 ] && [ "$(lines "$T/err")" -eq 1 ]
	check $? "bad key under ASan: $(head -3 "$T/err" | tr '\n' '|')"
	"$A" selftest >"$T/out" 2>"$T/err"
	check $? "selftest under ASan: $(head -3 "$T/err" | tr '\n' '|')"
	"$A" speed --mode gcm,cbc --sizes 16,1472 --seconds 0.3 --repeat 1 --json >"$T/out" \
		2>"$T/err" && jq -e . "$T/out" >/dev/null && [ ! -s "$T/err" ]
	check $? "speed under ASan: $(head -3 "$T/err" | tr '\n' '|')"
	end_group
else
	unavailable "asan+ubsan build" "$A not built (make asan)"
fi

# ---- speed --quick --json ----
group "speed --quick --json"
secs=2
[ "$QUICK" = 1 ] && secs=1
"$S" speed --quick --json --seconds $secs >"$T/json" 2>"$T/err"
check $? "exit: $(head -1 "$T/err")"
jq -e . "$T/json" >/dev/null 2>&1
check $? "not valid JSON"
jq -e '.machine.cpu and (.machine.tsc_hz > 1e8) and (.implementations | length > 0)' \
	"$T/json" >/dev/null 2>&1
check $? "machine fields"
jq -e '[.gcm.rows[] | select(.available) | .results[] |
	(.mbps > 0 and .cycles_per_call > 0)] | length > 0 and all' "$T/json" >/dev/null 2>&1
check $? "gcm results"
jq -e '[.gcm.rows[] | select(.kind == "ours" and .available) | .results[] |
	has("ratio_vs_evp")] | all' "$T/json" >/dev/null 2>&1
check $? "gcm ratios vs evp"
jq -e '[.modes.rows[] | .alg] | unique | length == 12' "$T/json" >/dev/null 2>&1
check $? "modes rows: 6 modes x 2 key sizes"
jq -e '[.gcm.rows[] | select(.batch == 32)] | length > 0' "$T/json" >/dev/null 2>&1
check $? "batch rows"
"$S" speed --mode gcm --sizes 64 --seconds 0.5 --repeat 1 >"$T/out" 2>&1
check $? "text table"
grep -q 'ipsec-mb' "$T/out" && grep -q 'evp' "$T/out" && grep -q '64 bytes' "$T/out"
check $? "text table content"
end_group
