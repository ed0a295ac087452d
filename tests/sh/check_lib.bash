# tests/sh/check_lib.bash - the shell tests' reporting, in tests/unit/harness.h's format.
# Source it, then:   group NAME; check STATUS MESSAGE ...; end_group
#   group NAME       start a group of checks
#   check S MSG      S 0 = the check held; a failed one prints "  NAME: MSG" (the first
#                    $G_SHOW of a group, default 5)
#   end_group        one line: "PASS NAME (N checks)" or "FAIL NAME (F of N checks failed)";
#                    a failed group sets g_failed=1
#   skip_group WHY   "UNAVAILABLE NAME: WHY" for the group begun (what the machine lacks);
#                    its end_group then prints nothing (a skipped group never passes)
#   unavailable NAME WHY   "UNAVAILABLE NAME: WHY" (what the machine lacks, never a failure)
#   need_tools NAME CMD... every CMD on the PATH, or "FAIL NAME: CMD not installed
#                    (scripts/deps.sh installs it)" for the first one missing and status 1: a
#                    command scripts/deps.sh installs is part of the set-up, and a missing
#                    one is a broken set-up, not a machine that lacks something (the caller
#                    exits 1)
# Not run by tests/run.sh itself (no .sh suffix).

g_name="" g_n=0 g_f=0 g_failed=0 g_skip=0
G_SHOW=${G_SHOW:-5}
group() { g_name=$1 g_n=0 g_f=0 g_skip=0; }
check() { # ok(0/1) message
	g_n=$((g_n + 1))
	if [ "$1" -ne 0 ]; then
		g_f=$((g_f + 1))
		[ "$g_f" -le "$G_SHOW" ] && echo "  $g_name: $2"
	fi
	return 0
}
end_group() {
	if [ "$g_skip" -eq 1 ] && [ "$g_f" -eq 0 ]; then
		g_skip=0
	elif [ "$g_f" -eq 0 ]; then
		echo "PASS $g_name ($g_n checks)"
	else
		echo "FAIL $g_name ($g_f of $g_n checks failed)"
		g_failed=1
	fi
}
unavailable() { echo "UNAVAILABLE $1: $2"; }
skip_group() {
	echo "UNAVAILABLE $g_name: $1"
	g_skip=1
}
need_tools() {
	local name=$1 t
	shift
	for t in "$@"; do
		command -v "$t" >/dev/null && continue
		echo "FAIL $name: $t not installed (scripts/deps.sh installs it)"
		return 1
	done
	return 0
}
