/*
 * src/sys/mem.h - how much memory this process may still have: the tightest of its
 * cgroup's limit (v2 memory.max less memory.current along the path to the root, or v1
 * memory.limit_in_bytes less memory.usage_in_bytes) and the machine's MemAvailable
 * (/proc/meminfo). Read once, at set-up, to refuse a request the kernel would answer with
 * the OOM killer (the flow meter's tables: docs/FLOW.md, "Hostile inputs, lag and limits").
 */
#ifndef SECHO_SYS_MEM_H
#define SECHO_SYS_MEM_H

#include <stddef.h>
#include <stdint.h>

struct secho_mem_avail {
	uint64_t bytes;   /* available: the smallest of what is known (UINT64_MAX: nothing) */
	char source[160]; /* what set it, with its numbers, for a message */
};

/* Fill *a from the files above. Can't fail: what cannot be read is left out (bytes is then
 * UINT64_MAX and source "unknown" when nothing could be). */
void secho_mem_available(struct secho_mem_avail *a);

#endif
