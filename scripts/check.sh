#!/usr/bin/env bash
# Static analysis: cppcheck and clang-tidy over every C file. Exits non-zero on findings.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' 2>/dev/null || find src tests bench -name '*.c')
[ -n "$files" ] || files=$(find src tests bench -name '*.c')
rc=0
echo "  CPPCHECK"
cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance \
	--inline-suppr --std=c11 -Iinclude -Isrc -D__x86_64__ -D__GNUC__ \
	--suppress=missingIncludeSystem --suppress=unknownMacro \
	$files || rc=1
echo "  CLANG-TIDY"
checks='-*,clang-analyzer-*,bugprone-*,-bugprone-easily-swappable-parameters,-bugprone-reserved-identifier,-bugprone-narrowing-conversions,-bugprone-assignment-in-if-condition,-clang-analyzer-security.insecureAPI.DeprecatedOrUnsafeBufferHandling,-bugprone-implicit-widening-of-multiplication-result,-bugprone-macro-parentheses,-clang-analyzer-security.insecureAPI.strcpy'
# shellcheck disable=SC2086
if ! clang-tidy --quiet --warnings-as-errors='*' --checks="$checks" $files -- \
	-Iinclude -Isrc -Itests/unit -D_GNU_SOURCE -std=c17 2>/tmp/secho-tidy.err; then
	rc=1
fi
grep -v 'warnings generated\|Suppressed\|Use -header-filter\|^$' /tmp/secho-tidy.err || true
[ $rc -eq 0 ] && echo "  check: clean"
exit $rc
