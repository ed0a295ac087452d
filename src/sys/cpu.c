/* src/sys/cpu.c - CPUs this process may use, and pinning (see secho/cpu.h). */
#include "secho/cpu.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The affinity mask the process had when first asked: what it may use. Asking again later
 * would find a thread's own pinning (the endpoint pins its main thread for a moment while
 * it sets each worker up). */
static cpu_set_t first_mask;
static int first_rc;
static pthread_once_t first_once = PTHREAD_ONCE_INIT;

static void read_first_mask(void)
{
	CPU_ZERO(&first_mask);
	first_rc = sched_getaffinity(0, sizeof(first_mask), &first_mask) == 0 ? 0 : -errno;
}

static int process_mask(cpu_set_t *set)
{
	pthread_once(&first_once, read_first_mask);
	*set = first_mask;
	return first_rc;
}

bool secho_cpu_usable(unsigned cpu)
{
	cpu_set_t set;
	return cpu <= SECHO_CPU_MAX && process_mask(&set) == 0 && CPU_ISSET(cpu, &set);
}

char *secho_cpu_usable_list(char *buf, size_t n)
{
	cpu_set_t set;
	size_t used = 0;
	if (!n)
		return buf;
	buf[0] = '\0';
	if (process_mask(&set) != 0) {
		snprintf(buf, n, "?");
		return buf;
	}
	for (unsigned c = 0; c <= SECHO_CPU_MAX && used < n; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		unsigned e = c;
		while (e < SECHO_CPU_MAX && CPU_ISSET(e + 1, &set))
			e++;
		int w = e == c ? snprintf(buf + used, n - used, "%s%u", used ? "," : "", c)
		               : snprintf(buf + used, n - used, "%s%u-%u", used ? "," : "", c, e);
		if (w < 0)
			break;
		used += (size_t)w;
		c = e;
	}
	return buf;
}

int secho_cpu_pin(pthread_t t, unsigned cpu)
{
	cpu_set_t set;
	if (!secho_cpu_usable(cpu))
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(t, sizeof(set), &set);
}

int secho_cpu_pin_here(void)
{
	int cpu = sched_getcpu(), rc;
	if (cpu < 0)
		return -errno;
	rc = secho_cpu_pin(pthread_self(), (unsigned)cpu);
	return rc < 0 ? rc : cpu;
}

int secho_cpu_save(cpu_set_t *saved)
{
	CPU_ZERO(saved);
	return -pthread_getaffinity_np(pthread_self(), sizeof(*saved), saved);
}

int secho_cpu_restore(const cpu_set_t *saved)
{
	return -pthread_setaffinity_np(pthread_self(), sizeof(*saved), saved);
}
