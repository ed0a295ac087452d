/*
 * src/provider/params.c - reading and writing OSSL_PARAM arrays without libcrypto.
 *
 * The rules are OpenSSL's (crypto/params.c, OSSL_PARAM_get_* / OSSL_PARAM_set_*), for
 * the types a cipher uses: integers in native byte order of 1, 2, 4 or 8 bytes, signed
 * (OSSL_PARAM_INTEGER) or not (OSSL_PARAM_UNSIGNED_INTEGER); octet strings (copied) and
 * octet pointers (the address handed out); UTF-8 strings and pointers. A set on a
 * parameter whose data is NULL only reports the size the value needs in return_size,
 * which is how callers ask for sizes. A value that does not fit is refused (false).
 */
#include <string.h>

#include "provider/prov.h"

/* Position of key in names (a NULL-terminated list), or -1. The hot paths walk the
 * caller's array once and switch on this: EVP sends a parameter or two with most calls
 * (keylen, ivlen, padding). firsts has bit c - 'a' set for every first letter c in names
 * (SP_FIRST), so that a name none of them starts with is turned away at once. */
int sp_param_index(const char *key, const char *const *names, uint32_t firsts)
{
	unsigned c = (unsigned)(unsigned char)key[0] - 'a';
	if (c >= 26 || !((firsts >> c) & 1))
		return -1;
	for (int i = 0; names[i]; i++) {
		const char *a = names[i], *b = key;
		while (*a && *a == *b) { /* inline: the names are a few bytes long */
			a++;
			b++;
		}
		if (*a == *b)
			return i;
	}
	return -1;
}

/* The first parameter named key, or NULL. p may be NULL (no parameters). */
const OSSL_PARAM *sp_param_find(const OSSL_PARAM *p, const char *key)
{
	for (; p && p->key; p++)
		if (strcmp(p->key, key) == 0)
			return p;
	return NULL;
}

OSSL_PARAM *sp_param_find_mut(OSSL_PARAM *p, const char *key)
{
	for (; p && p->key; p++)
		if (strcmp(p->key, key) == 0)
			return p;
	return NULL;
}

/* Integers are copied byte-wise in native (little-endian, x86-64 as the whole library)
 * order: no alignment is assumed of the caller's buffer. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "little-endian integer copies");

static bool int_size_ok(size_t n)
{
	return n == 1 || n == 2 || n == 4 || n == 8;
}

/* An integer parameter as an unsigned 64-bit value; false for another type or size, a
 * NULL data pointer, or a negative signed value. */
bool sp_param_get_u64(const OSSL_PARAM *p, uint64_t *v)
{
	if (!p || !p->data || !int_size_ok(p->data_size) ||
	    (p->data_type != OSSL_PARAM_UNSIGNED_INTEGER && p->data_type != OSSL_PARAM_INTEGER))
		return false;
	uint64_t x = 0;
	memcpy(&x, p->data, p->data_size);
	if (p->data_type == OSSL_PARAM_INTEGER && (x >> (8 * p->data_size - 1)) & 1)
		return false; /* negative */
	*v = x;
	return true;
}

bool sp_param_get_size(const OSSL_PARAM *p, size_t *v)
{
	uint64_t u;
	if (!sp_param_get_u64(p, &u) || u > SIZE_MAX)
		return false;
	*v = (size_t)u;
	return true;
}

/* Store v in an integer parameter of any supported size and signedness, when it fits. */
bool sp_param_set_u64(OSSL_PARAM *p, uint64_t v)
{
	if (!p ||
	    (p->data_type != OSSL_PARAM_UNSIGNED_INTEGER && p->data_type != OSSL_PARAM_INTEGER))
		return false;
	if (!p->data) {
		p->return_size = sizeof(uint64_t);
		return true;
	}
	size_t n = p->data_size;
	if (!int_size_ok(n))
		return false;
	unsigned bits = (unsigned)(8 * n) - (p->data_type == OSSL_PARAM_INTEGER);
	if (bits < 64 && v >> bits)
		return false; /* does not fit */
	memcpy(p->data, &v, n);
	p->return_size = n;
	return true;
}

/* An OCTET_STRING's bytes (not copied); false for another type or NULL data with a
 * non-zero size. */
bool sp_param_get_octets(const OSSL_PARAM *p, const unsigned char **data, size_t *len)
{
	if (!p || p->data_type != OSSL_PARAM_OCTET_STRING || (!p->data && p->data_size))
		return false;
	*data = p->data;
	*len = p->data_size;
	return true;
}

bool sp_param_set_octets(OSSL_PARAM *p, const void *data, size_t len)
{
	if (!p)
		return false;
	p->return_size = len;
	if (p->data_type == OSSL_PARAM_OCTET_PTR) {
		if (p->data)
			*(const void **)p->data = data;
		return true;
	}
	if (p->data_type != OSSL_PARAM_OCTET_STRING)
		return false;
	if (!p->data)
		return true;
	if (p->data_size < len)
		return false;
	if (len)
		memcpy(p->data, data, len);
	return true;
}

bool sp_param_set_utf8(OSSL_PARAM *p, const char *s)
{
	if (!p)
		return false;
	size_t len = strlen(s);
	p->return_size = len;
	if (p->data_type == OSSL_PARAM_UTF8_PTR) {
		if (p->data)
			*(const char **)p->data = s;
		return true;
	}
	if (p->data_type != OSSL_PARAM_UTF8_STRING)
		return false;
	if (!p->data)
		return true;
	if (p->data_size < len)
		return false;
	memcpy(p->data, s, len);
	if (len < p->data_size)
		((char *)p->data)[len] = '\0';
	return true;
}
