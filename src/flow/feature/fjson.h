/*
 * src/flow/feature/fjson.h - the JSON members a feature set writes (secho_feat_X_json): a
 * cursor over the caller's buffer that remembers running out of room, so a writer emits
 * every member unconditionally and checks once at the end.
 *
 * Every member is written with a leading comma (",\"name\":value"), so the caller appends a
 * feature set's members after its own. Strings are escaped for JSON: '"' and '\\' with a
 * backslash, control bytes and bytes >= 0x80 as \u00XX (each byte one code point: the
 * output is valid JSON whatever the packet held, and the original bytes are recoverable).
 */
#ifndef SECHO_FLOW_FEATURE_FJSON_H
#define SECHO_FLOW_FEATURE_FJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct secho_fjson {
	char *buf;
	size_t cap;
	size_t used;
	bool full; /* a write did not fit: the result is -ENOSPC */
};

/* Start writing into buf[0..cap). Can't fail. */
void secho_fjson_init(struct secho_fjson *j, char *buf, size_t cap);
/* Literal text, copied as is (the writer's own punctuation and names). */
void secho_fjson_raw(struct secho_fjson *j, const char *s);
/* s[0..n) as a JSON string, quoted and escaped. */
void secho_fjson_str(struct secho_fjson *j, const uint8_t *s, size_t n);
/* Members: ,"name":value */
void secho_fjson_mem_u(struct secho_fjson *j, const char *name, uint64_t v);
void secho_fjson_mem_i(struct secho_fjson *j, const char *name, int64_t v);
void secho_fjson_mem_s(struct secho_fjson *j, const char *name, const char *s, size_t n);
void secho_fjson_mem_b(struct secho_fjson *j, const char *name, bool v);
/* An unsigned or signed number alone (list elements). */
void secho_fjson_u(struct secho_fjson *j, uint64_t v);
void secho_fjson_i(struct secho_fjson *j, int64_t v);
/* Bytes written, or -ENOSPC when something did not fit (the buffer's content is then
 * unspecified). A NUL follows the bytes when there is room for it. */
int secho_fjson_end(struct secho_fjson *j);

#endif
