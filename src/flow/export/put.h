/*
 * src/flow/export/put.h - big-endian writers for the IPFIX encoders (ipfix.c, ipfix_feat.c):
 * each writes v at p in network byte order and returns the byte after it. Private to
 * src/flow/export.
 */
#ifndef SECHO_FLOW_EXPORT_PUT_H
#define SECHO_FLOW_EXPORT_PUT_H

#include <stdint.h>

static inline uint8_t *w8(uint8_t *p, uint8_t v)
{
	*p = v;
	return p + 1;
}

static inline uint8_t *w16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static inline uint8_t *w32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static inline uint8_t *w64(uint8_t *p, uint64_t v)
{
	w32(p, (uint32_t)(v >> 32));
	return w32(p + 4, (uint32_t)v);
}

#endif
