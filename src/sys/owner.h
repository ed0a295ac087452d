/*
 * src/sys/owner.h - process ownership: naming a process for good, asking whether it still
 * runs, and sweeping what a dead owner left (src/sys/owner.c).
 *
 * Whatever outlives a SIGKILLed secho (a lab's namespaces, the dashboard's private
 * directory, an XDP offload program left on an interface) carries a record of its owner:
 * the pid and the process's start time (/proc/PID/stat field 22, clock ticks since boot).
 * A pid alone is reused; the pair names one process. An owner is dead when no process runs
 * with that pid and that start time: only then is what it left removed. The record's text
 * and where it is kept stay with each user (lab marks, DIR/owner, the offload program's meta
 * map); the lab (src/lab/wire.c), the dashboard's wire (src/dashboard/runner.c) and the
 * offload tier (src/flow/offload/offload.c) share this one definition of alive.
 */
#ifndef SECHO_SYS_OWNER_H
#define SECHO_SYS_OWNER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A process named for good: pid and start time. */
struct secho_owner {
	pid_t pid;
	unsigned long long start; /* /proc/PID/stat field 22 */
};

/* Process pid's start time in clock ticks since boot (/proc/PID/stat field 22). 0, or
 * -ESRCH when there is no such process (or its stat cannot be read or parsed). */
int secho_proc_start(pid_t pid, unsigned long long *ticks);

/* The record of running process pid (getpid() for the caller itself). 0 or -ESRCH. */
int secho_owner_of(pid_t pid, struct secho_owner *o);

/* True when the process o names still runs: pid > 0 and a process of that pid with the
 * same start time. Can't fail. */
bool secho_owner_alive(const struct secho_owner *o);

/* Send sig to the process o names, only when it is still that very process. 0, -ESRCH (it
 * is gone), or kill()'s -errno. */
int secho_owner_kill(const struct secho_owner *o, int sig);

/* Open dfd/name (not following a link) when it is a regular file owned by this user, and
 * read up to cap-1 bytes of it into text (NUL-terminated). Returns the open file (the
 * caller may lock it, then closes it) or -errno (-EPERM: not a regular file of ours). */
int secho_owner_mark_read(int dfd, const char *name, char *text, size_t cap);

/* The sweep: calls visit(dfd, name, arg) for every entry of directory dir but "." and
 * "..", dfd being dir's descriptor; visit returns true when it removed what a dead owner
 * left there. Returns how many visits removed something (0 when dir cannot be opened). */
int secho_owner_sweep(const char *dir, bool (*visit)(int dfd, const char *name, void *arg),
                      void *arg);

#endif
