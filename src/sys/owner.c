/*
 * src/sys/owner.c - process ownership (contract: src/sys/owner.h).
 */
#include "sys/owner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Contract: owner.h. */
int secho_proc_start(pid_t pid, unsigned long long *ticks)
{
	char path[32], buf[1024];
	ssize_t n;
	int fd;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	/* The name (field 2) may hold spaces and ')': fields 3.. follow its last ')'. */
	char *p = strrchr(buf, ')');

	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	return p && sscanf(p + 1, "%llu", ticks) == 1 ? 0 : -ESRCH;
}

/* Contract: owner.h. */
int secho_owner_of(pid_t pid, struct secho_owner *o)
{
	o->pid = pid;
	o->start = 0;
	return secho_proc_start(pid, &o->start);
}

/* Contract: owner.h. */
bool secho_owner_alive(const struct secho_owner *o)
{
	unsigned long long now;

	return o->pid > 0 && secho_proc_start(o->pid, &now) == 0 && now == o->start;
}

/* Contract: owner.h. */
int secho_owner_kill(const struct secho_owner *o, int sig)
{
	if (!secho_owner_alive(o))
		return -ESRCH;
	return kill(o->pid, sig) == 0 ? 0 : -errno;
}

/* Contract: owner.h. */
int secho_owner_mark_read(int dfd, const char *name, char *text, size_t cap)
{
	struct stat st;
	ssize_t n;
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	n = read(fd, text, cap - 1);
	text[n > 0 ? n : 0] = '\0';
	return fd;
}

/* Contract: owner.h. */
int secho_owner_sweep(const char *dir, bool (*visit)(int dfd, const char *name, void *arg),
                      void *arg)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int removed = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    visit(dirfd(d), e->d_name, arg))
			removed++;
	closedir(d);
	return removed;
}
