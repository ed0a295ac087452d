/*
 * src/flow/feature/fjson.c - JSON members of the feature sets (src/flow/feature/fjson.h).
 */
#include "flow/feature/fjson.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void secho_fjson_init(struct secho_fjson *j, char *buf, size_t cap)
{
	j->buf = buf;
	j->cap = cap;
	j->used = 0;
	j->full = false;
	j->bare = false;
}

void secho_fjson_init_bare(struct secho_fjson *j, char *buf, size_t cap)
{
	secho_fjson_init(j, buf, cap);
	j->bare = true;
}

static void put(struct secho_fjson *j, const char *s, size_t n)
{
	if (j->full || n > j->cap - j->used) {
		j->full = true;
		return;
	}
	memcpy(j->buf + j->used, s, n);
	j->used += n;
}

void secho_fjson_raw(struct secho_fjson *j, const char *s)
{
	put(j, s, strlen(s));
}

void secho_fjson_str(struct secho_fjson *j, const uint8_t *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	put(j, "\"", 1);
	for (size_t i = 0; i < n && !j->full; i++) {
		uint8_t c = s[i];
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			put(j, e, 2);
		} else if (c < 0x20 || c >= 0x7f) {
			char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			put(j, e, 6);
		} else {
			put(j, (const char *)&s[i], 1);
		}
	}
	put(j, "\"", 1);
}

static void put_name(struct secho_fjson *j, const char *name)
{
	if (!j->bare || j->used > 0)
		put(j, ",", 1);
	put(j, "\"", 1);
	secho_fjson_raw(j, name);
	put(j, "\":", 2);
}

void secho_fjson_u(struct secho_fjson *j, uint64_t v)
{
	char t[24];
	int n = snprintf(t, sizeof(t), "%" PRIu64, v);
	put(j, t, (size_t)n);
}

void secho_fjson_i(struct secho_fjson *j, int64_t v)
{
	char t[24];
	int n = snprintf(t, sizeof(t), "%" PRId64, v);
	put(j, t, (size_t)n);
}

void secho_fjson_mem_u(struct secho_fjson *j, const char *name, uint64_t v)
{
	put_name(j, name);
	secho_fjson_u(j, v);
}

void secho_fjson_mem_i(struct secho_fjson *j, const char *name, int64_t v)
{
	put_name(j, name);
	secho_fjson_i(j, v);
}

void secho_fjson_mem_s(struct secho_fjson *j, const char *name, const char *s, size_t n)
{
	put_name(j, name);
	secho_fjson_str(j, (const uint8_t *)s, n);
}

void secho_fjson_mem_b(struct secho_fjson *j, const char *name, bool v)
{
	put_name(j, name);
	secho_fjson_raw(j, v ? "true" : "false");
}

void secho_fjson_mem_hex(struct secho_fjson *j, const char *name, const uint8_t *b, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	put_name(j, name);
	put(j, "\"", 1);
	for (size_t i = 0; i < n && !j->full; i++) {
		char e[2] = {hex[b[i] >> 4], hex[b[i] & 15]};
		put(j, e, 2);
	}
	put(j, "\"", 1);
}

/* ,"name":[v0,...] for the list writers below: v is an array of n elements of width bytes
 * (2, 4 or 8), each written as an unsigned number. */
static void mem_list(struct secho_fjson *j, const char *name, const void *v, size_t width, size_t n)
{
	put_name(j, name);
	put(j, "[", 1);
	for (size_t i = 0; i < n && !j->full; i++) {
		uint64_t x;
		if (width == 2)
			x = ((const uint16_t *)v)[i];
		else if (width == 4)
			x = ((const uint32_t *)v)[i];
		else
			x = ((const uint64_t *)v)[i];
		if (i)
			put(j, ",", 1);
		secho_fjson_u(j, x);
	}
	put(j, "]", 1);
}

void secho_fjson_mem_list16(struct secho_fjson *j, const char *name, const uint16_t *v, size_t n)
{
	mem_list(j, name, v, sizeof(*v), n);
}

void secho_fjson_mem_list32(struct secho_fjson *j, const char *name, const uint32_t *v, size_t n)
{
	mem_list(j, name, v, sizeof(*v), n);
}

void secho_fjson_mem_list64(struct secho_fjson *j, const char *name, const uint64_t *v, size_t n)
{
	mem_list(j, name, v, sizeof(*v), n);
}

int secho_fjson_end(struct secho_fjson *j)
{
	if (j->full)
		return -ENOSPC;
	if (j->used < j->cap)
		j->buf[j->used] = '\0';
	return (int)j->used;
}

int secho_fjson_end_cstr(struct secho_fjson *j)
{
	if (j->full || j->used >= j->cap) {
		if (j->cap > 0)
			j->buf[0] = '\0';
		return -ENOSPC;
	}
	j->buf[j->used] = '\0';
	return (int)j->used;
}
