/*
 * src/flow/feature/fjson.h - the JSON members a feature set writes (secho_feat_X_json): a
 * cursor over the caller's buffer that remembers running out of room, so a writer emits
 * every member unconditionally and checks once at the end.
 *
 * Every member is written with a leading comma (",\"name\":value"), so the caller appends a
 * feature set's members after its own. Strings are escaped for JSON: '"' and '\\' with a
 * backslash, control bytes and bytes >= 0x80 as \u00XX (each byte one code point: the
 * output is valid JSON whatever the packet held, and the original bytes are recoverable).
 *
 * The tls and quic sets keep an older contract (tls.h, quic.h): members comma separated
 * with none before the first, and always a C string. secho_fjson_init_bare and
 * secho_fjson_end_cstr write that.
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
	bool bare; /* no comma before a member written first (secho_fjson_init_bare) */
};

/* Start writing into buf[0..cap). Can't fail. */
void secho_fjson_init(struct secho_fjson *j, char *buf, size_t cap);
/* The same, but a member written first has no leading comma ("name":value,...). */
void secho_fjson_init_bare(struct secho_fjson *j, char *buf, size_t cap);
/* Literal text, copied as is (the writer's own punctuation and names). */
void secho_fjson_raw(struct secho_fjson *j, const char *s);
/* s[0..n) as a JSON string, quoted and escaped. */
void secho_fjson_str(struct secho_fjson *j, const uint8_t *s, size_t n);
/* Members: ,"name":value */
void secho_fjson_mem_u(struct secho_fjson *j, const char *name, uint64_t v);
void secho_fjson_mem_i(struct secho_fjson *j, const char *name, int64_t v);
void secho_fjson_mem_s(struct secho_fjson *j, const char *name, const char *s, size_t n);
void secho_fjson_mem_b(struct secho_fjson *j, const char *name, bool v);
/* b[0..n) as a string of lowercase hex digits, two a byte. */
void secho_fjson_mem_hex(struct secho_fjson *j, const char *name, const uint8_t *b, size_t n);
/* A list of n unsigned numbers, [v0,v1,...], one function per element width. */
void secho_fjson_mem_list16(struct secho_fjson *j, const char *name, const uint16_t *v, size_t n);
void secho_fjson_mem_list32(struct secho_fjson *j, const char *name, const uint32_t *v, size_t n);
void secho_fjson_mem_list64(struct secho_fjson *j, const char *name, const uint64_t *v, size_t n);
/* An unsigned or signed number alone (list elements). */
void secho_fjson_u(struct secho_fjson *j, uint64_t v);
void secho_fjson_i(struct secho_fjson *j, int64_t v);
/* Bytes written, or -ENOSPC when something did not fit (the buffer's content is then
 * unspecified). A NUL follows the bytes when there is room for it. */
int secho_fjson_end(struct secho_fjson *j);
/* Like secho_fjson_end, but the NUL must fit too: bytes written (a NUL follows), or -ENOSPC
 * with buf holding the empty string (when cap > 0). */
int secho_fjson_end_cstr(struct secho_fjson *j);

#endif
