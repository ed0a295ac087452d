/*
 * src/sys/names.h - the names and texts of X-macro tables, looked up one way everywhere.
 *
 * A table of counters, drops or reasons is written once as an X-macro list of
 * X(NAME, "id", "text") lines: the enum is SECHO_..._##NAME in the list's order, "id" the
 * machine name (JSON keys, Prometheus labels) and "text" the sentence a person reads. The
 * arrays of ids and of texts come from the same list with SECHO_X_ID / SECHO_X_TEXT, in the
 * same order as the enum, and SECHO_NAME_AT() reads entry i, or a fallback out of range:
 *
 *   static const char *const ids[] = {SECHO_PIPE_DROPS(SECHO_X_ID)};
 *   return SECHO_NAME_AT(ids, d, "unknown");
 */
#ifndef SECHO_SYS_NAMES_H
#define SECHO_SYS_NAMES_H

#include <stddef.h>

/* The columns of an X(NAME, "id", "text") list, as array initialisers. */
#define SECHO_X_ID(name, id, text)   id,
#define SECHO_X_TEXT(name, id, text) text,

/* Entry i of tab (n entries), or `none` when i is out of range. Can't fail. */
static inline const char *secho_name_at(const char *const tab[], size_t n, size_t i,
                                        const char *none)
{
	return i < n ? tab[i] : none;
}

/* The same for an array whose size the compiler knows. */
#define SECHO_NAME_AT(tab, i, none)                                                                \
	secho_name_at((tab), sizeof(tab) / sizeof((tab)[0]), (size_t)(unsigned)(i), (none))

#endif
