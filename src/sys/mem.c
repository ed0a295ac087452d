/*
 * src/sys/mem.c - the memory this process may still have (src/sys/mem.h).
 */
#include "sys/mem.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first number in a file ("max" and anything unreadable: false). */
static int read_u64(const char *path, uint64_t *v)
{
	char buf[64];
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok || buf[0] < '0' || buf[0] > '9')
		return 0;
	char *end;
	unsigned long long x = strtoull(buf, &end, 10);
	*v = x;
	return 1;
}

static void consider(struct secho_mem_avail *a, uint64_t limit, uint64_t used, const char *what,
                     const char *path)
{
	uint64_t left = limit > used ? limit - used : 0;
	if (left < a->bytes) {
		a->bytes = left;
		snprintf(a->source, sizeof(a->source),
		         "cgroup %.80s: %s %" PRIu64 " MiB, %" PRIu64 " MiB in use", path, what,
		         limit >> 20, used >> 20);
	}
}

/* cgroup v2: every level from the process's group up to the root may limit it. */
static void cgroup_v2(struct secho_mem_avail *a, const char *root, const char *path)
{
	char p[4096], f[4200];
	snprintf(p, sizeof(p), "%s", path);
	for (;;) {
		uint64_t max, cur;
		snprintf(f, sizeof(f), "%s%s/memory.max", root, p);
		if (read_u64(f, &max)) {
			snprintf(f, sizeof(f), "%s%s/memory.current", root, p);
			if (!read_u64(f, &cur))
				cur = 0;
			consider(a, max, cur, "memory.max", p[0] ? p : "/");
		}
		char *slash = strrchr(p, '/');
		if (!slash || !p[0])
			break;
		*slash = 0; /* the parent ("" for the root, whose files are not there) */
	}
}

/* Contract: src/sys/mem.h. */
void secho_mem_available(struct secho_mem_avail *a)
{
	a->bytes = UINT64_MAX;
	snprintf(a->source, sizeof(a->source), "unknown");

	FILE *f = fopen("/proc/self/cgroup", "re");
	if (f) {
		char line[4096];
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
			if (!c2)
				continue;
			*c2 = 0;
			const char *ctrl = c1 + 1, *path = c2 + 1;
			if (!strcmp(path, "/"))
				path = "";
			if (!*ctrl) { /* v2, mounted at /sys/fs/cgroup or, hybrid, below it */
				cgroup_v2(a, "/sys/fs/cgroup", path);
				cgroup_v2(a, "/sys/fs/cgroup/unified", path);
			} else if (strstr(ctrl, "memory")) { /* v1: the group's own limit */
				char l[4200], u[4200];
				uint64_t lim, use;
				snprintf(l, sizeof(l),
				         "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", path);
				snprintf(u, sizeof(u),
				         "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", path);
				if (read_u64(l, &lim) && lim < (UINT64_C(1) << 62)) {
					if (!read_u64(u, &use))
						use = 0;
					consider(a, lim, use, "memory.limit_in_bytes",
					         path[0] ? path : "/");
				}
			}
		}
		fclose(f);
	}

	f = fopen("/proc/meminfo", "re");
	if (f) {
		char line[256];
		unsigned long long kb;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
				uint64_t b = (uint64_t)kb * 1024;
				if (b < a->bytes) {
					a->bytes = b;
					snprintf(a->source, sizeof(a->source),
					         "MemAvailable (/proc/meminfo) %" PRIu64 " MiB",
					         b >> 20);
				}
				break;
			}
		fclose(f);
	}
}
