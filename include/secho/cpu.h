/*
 * secho/cpu.h - the machine's CPUs: which ones this process may run on, and pinning a
 * thread to one (src/sys/cpu.c).
 *
 * The endpoint pins each data-path worker to a CPU of its own (`secho serve --cpus`) and can
 * pin the offload engine's thread (`--offload-cpu`): a worker that stays on one CPU keeps
 * its rings, counters and key schedule in that CPU's cache, and a thread the scheduler
 * moves onto a busy data path's CPU takes turns with it (the offload engine's p50 went
 * from about 2 us to 11 us when that happened, docs/PERFORMANCE.md).
 */
#ifndef SECHO_CPU_H
#define SECHO_CPU_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The largest CPU number handled (CPU_SETSIZE - 1 with glibc: 1023). */
#define SECHO_CPU_MAX (CPU_SETSIZE - 1)

/* True when this process may run on `cpu`: it is in the affinity mask the process had when
 * this was first asked (online CPUs, less what taskset or a cgroup took away; read once,
 * so that pinning a thread later does not change the answer). Can't fail: false when the
 * mask cannot be read. */
bool secho_cpu_usable(unsigned cpu);

/* The CPUs this process may run on, as a list ("0-1", "0,2-3") in buf (NUL-terminated,
 * truncated to n). Returns buf. Can't fail ("?" when the mask cannot be read). */
char *secho_cpu_usable_list(char *buf, size_t n);

/* Pin thread t to `cpu`. 0, or -errno (-EINVAL: the CPU is not usable). */
int secho_cpu_pin(pthread_t t, unsigned cpu);

/* Pin the calling thread to the CPU it is running on now (a measurement then stays on one
 * core). Returns that CPU, or -errno. */
int secho_cpu_pin_here(void);

/* The calling thread's affinity mask, saved and put back (around work done on another CPU,
 * e.g. allocating a worker's memory where it will run). 0 or -errno. */
int secho_cpu_save(cpu_set_t *saved);
int secho_cpu_restore(const cpu_set_t *saved);

#ifdef __cplusplus
}
#endif
#endif
