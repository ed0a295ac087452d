#!/usr/bin/env bash
# scripts/embed_static.sh OUT.c FILE... - embed the dashboard's page into the binary.
# Writes a C file defining dash_assets[] (src/dashboard/dashboard.h): one entry per FILE,
# named by its base name, its bytes as a NUL-terminated array. Only od and sed: no xxd.
set -euo pipefail
out=$1
shift
tmp=$out.tmp
{
	echo "/* From src/dashboard/static/ by scripts/embed_static.sh; do not edit. */"
	echo '#include "dashboard/dashboard.h"'
	i=0
	for f in "$@"; do
		echo "static const unsigned char a$i[] = {"
		od -An -v -tx1 "$f" | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g' -e 's/^/\t/'
		echo "	0x00};"
		i=$((i + 1))
	done
	echo "const struct dash_asset dash_assets[] = {"
	i=0
	for f in "$@"; do
		echo "	{\"$(basename "$f")\", a$i, sizeof(a$i) - 1},"
		i=$((i + 1))
	done
	echo "};"
	echo "const size_t dash_nassets = $#;"
} >"$tmp"
mv "$tmp" "$out"
