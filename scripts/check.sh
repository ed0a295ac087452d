#!/usr/bin/env bash
# Static analysis: cppcheck and clang-tidy over every C file, and the tree against the one
# .clang-format (`make format` fixes that part). Exits non-zero on findings.
# clang-tidy runs one process per file (in parallel, one per core): its path-sensitive
# checkers keep state across the files of one invocation and then report false positives
# (uninitialised va_list) in later files.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' 2>/dev/null || true)
[ -n "$files" ] || files=$(find src tests bench -name '*.c')
rc=0
echo "  CPPCHECK"
# shellcheck disable=SC2086
cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance \
	--inline-suppr --std=c11 -Iinclude -Isrc -D__x86_64__ -D__GNUC__ \
	--suppress=missingIncludeSystem --suppress=unknownMacro \
	$files || rc=1
echo "  CLANG-FORMAT"
srcs=$(git ls-files '*.c' '*.h' 2>/dev/null || true)
[ -n "$srcs" ] || srcs=$(find include src tests bench -name '*.[ch]')
bad=
for f in $srcs; do
	clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad="$bad $f"
done
if [ -n "$bad" ]; then
	echo "  not formatted (run make format):$bad"
	rc=1
fi
echo "  CLANG-TIDY"
checks='-*,clang-analyzer-*,bugprone-*,-bugprone-easily-swappable-parameters,-bugprone-reserved-identifier,-bugprone-narrowing-conversions,-bugprone-assignment-in-if-condition,-clang-analyzer-security.insecureAPI.DeprecatedOrUnsafeBufferHandling,-bugprone-implicit-widening-of-multiplication-result,-bugprone-macro-parentheses,-clang-analyzer-security.insecureAPI.strcpy,-clang-analyzer-optin.performance.Padding'
out=$(mktemp /tmp/secho-tidy.XXXXXX)
# bench/ipfix_encode.c includes libfixbuf, whose header includes GLib's.
fixbuf_args=$(pkg-config --cflags libfixbuf 2>/dev/null | sed 's/-I/--extra-arg=-isystem/g')
# Generated headers (build/gen: the BPF skeletons `make check` builds first) are not ours
# to analyse: system headers. BPF programs (*.bpf.c) are checked for the bpf target.
host_files=$(printf '%s\n' $files | grep -v '\.bpf\.c$' || true)
bpf_files=$(printf '%s\n' $files | grep '\.bpf\.c$' || true)
# shellcheck disable=SC2086
if ! printf '%s\n' $host_files | xargs -P "$(nproc)" -n 1 clang-tidy --quiet --warnings-as-errors='*' \
	--checks="$checks" --extra-arg=-Iinclude --extra-arg=-Isrc --extra-arg=-Itests/unit \
	--extra-arg=-D_GNU_SOURCE --extra-arg=-std=c17 --extra-arg=-isystem"$(pwd)/build/gen" \
	$fixbuf_args \
	>"$out" 2>&1; then
	rc=1
fi
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
# shellcheck disable=SC2086
if [ -n "$bpf_files" ] && ! printf '%s\n' $bpf_files | xargs -n 1 clang-tidy --quiet \
	--warnings-as-errors='*' --checks="$checks" --extra-arg=--target=bpf \
	--extra-arg=-ffreestanding --extra-arg=-std=gnu17 --extra-arg=-Iinclude --extra-arg=-Isrc \
	--extra-arg=-idirafter/usr/include/"$multiarch" >>"$out" 2>&1; then
	rc=1
fi
grep -v 'warnings generated\|Suppressed\|Use -header-filter\|^$\|Error while processing\|compilation database\|compilation-database\|Running without flags' \
	"$out" || true
rm -f "$out"
[ $rc -eq 0 ] && echo "  check: clean"
exit $rc
