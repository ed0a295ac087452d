/*
 * tests/tools/keyscan.c - where does a key lie in a running process's memory?
 *
 * Reads /proc/PID/smaps (every mapping and its VmFlags) and each readable mapping through
 * /proc/PID/mem, and looks for the 32-byte key: its raw bytes, and its hex text in lower
 * and upper case (a key file's line). Every hit is printed with its address, the mapping
 * it lies in and whether that mapping is locked (VmFlags "lo": never swapped) and excluded
 * from core dumps ("dd"). The key bytes must be somewhere (else the scan proves nothing).
 *
 * Prints one line per hit and a summary "hits N, outside locked dump-excluded memory M,
 * mappings read R, unreadable U". Exits 0 when N > 0 and M == 0, 1 otherwise, 2 on bad
 * usage or when the process cannot be read (root is needed for a non-dumpable one).
 *
 * usage: keyscan PID KEYHEX64
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct mapping {
	uint64_t start, end;
	char perms[8];
	char name[256];
	bool locked, no_dump;
};

static int unhex(const char *s, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (!isxdigit((unsigned char)s[2 * i]) || !isxdigit((unsigned char)s[2 * i + 1]) ||
		    sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return s[2 * n] ? -1 : 0;
}

/* Every mapping of pid with its VmFlags; returns the count, or -1. */
static int read_smaps(int pid, struct mapping **out)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	struct mapping *m = NULL;
	int n = 0, cap = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t a, b;
		char perms[8];
		int off = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s%n", &a, &b, perms,
		           &off) == 3) {
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				struct mapping *g = realloc(m, (size_t)cap * sizeof(*m));
				if (!g) {
					free(m);
					fclose(f);
					return -1;
				}
				m = g;
			}
			struct mapping *c = &m[n++];
			memset(c, 0, sizeof(*c));
			c->start = a;
			c->end = b;
			snprintf(c->perms, sizeof(c->perms), "%s", perms);
			const char *nm = line + off;
			while (*nm == ' ')
				nm++;
			snprintf(c->name, sizeof(c->name), "%s", nm);
			c->name[strcspn(c->name, "\n")] = 0;
			if (!c->name[0])
				snprintf(c->name, sizeof(c->name), "[anonymous]");
		} else if (n && !strncmp(line, "VmFlags:", 8)) {
			m[n - 1].locked = strstr(line, " lo") != NULL;
			m[n - 1].no_dump = strstr(line, " dd") != NULL;
		}
	}
	fclose(f);
	*out = m;
	return n;
}

static bool find_next(const uint8_t *buf, size_t n, size_t *pos, const uint8_t *pat, size_t plen)
{
	for (size_t i = *pos; i + plen <= n; i++) {
		if (buf[i] == pat[0] && !memcmp(buf + i, pat, plen)) {
			*pos = i;
			return true;
		}
	}
	return false;
}

int main(int argc, char **argv)
{
	uint8_t key[32];
	if (argc != 3 || unhex(argv[2], key, sizeof(key)) != 0) {
		fprintf(stderr, "usage: keyscan PID KEYHEX64\n");
		return 2;
	}
	int pid = atoi(argv[1]);
	char lower[65], upper[65];
	for (int i = 0; i < 32; i++) {
		snprintf(lower + 2 * i, 3, "%02x", key[i]);
		snprintf(upper + 2 * i, 3, "%02X", key[i]);
	}
	const struct {
		const char *what;
		const uint8_t *p;
		size_t n;
	} pats[] = {{"key bytes", key, 32},
	            {"key hex", (const uint8_t *)lower, 64},
	            {"key HEX", (const uint8_t *)upper, 64}};

	struct mapping *maps;
	int nm = read_smaps(pid, &maps);
	if (nm <= 0) {
		fprintf(stderr, "keyscan: cannot read /proc/%d/smaps: %s\n", pid, strerror(errno));
		return 2;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "keyscan: cannot open %s: %s\n", path, strerror(errno));
		free(maps);
		return 2;
	}
	unsigned hits = 0, bad = 0, nread = 0, unreadable = 0;
	for (int i = 0; i < nm; i++) {
		struct mapping *m = &maps[i];
		size_t len = (size_t)(m->end - m->start);
		if (m->perms[0] != 'r' || !strcmp(m->name, "[vvar]") ||
		    !strcmp(m->name, "[vsyscall]") || len > ((size_t)1 << 31))
			continue;
		uint8_t *buf = malloc(len);
		if (!buf)
			continue;
		ssize_t r = pread(fd, buf, len, (off_t)m->start);
		if (r <= 0) {
			unreadable++;
			free(buf);
			continue;
		}
		nread++;
		for (size_t k = 0; k < sizeof(pats) / sizeof(pats[0]); k++) {
			size_t pos = 0;
			while (find_next(buf, (size_t)r, &pos, pats[k].p, pats[k].n)) {
				bool ok = m->locked && m->no_dump;
				hits++;
				bad += !ok;
				printf("%s %s at 0x%" PRIx64 " in %s (%s)%s%s\n",
				       ok ? "ok " : "BAD", pats[k].what, m->start + pos, m->name,
				       m->perms, m->locked ? " locked" : " NOT locked",
				       m->no_dump ? " dump-excluded" : " NOT dump-excluded");
				pos++;
			}
		}
		memset(buf, 0, (size_t)r);
		free(buf);
	}
	close(fd);
	free(maps);
	memset(key, 0, sizeof(key));
	printf("hits %u, outside locked dump-excluded memory %u, mappings read %u, unreadable %u\n",
	       hits, bad, nread, unreadable);
	return hits > 0 && bad == 0 ? 0 : 1;
}
