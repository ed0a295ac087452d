/*
 * src/flow/export/ipfix_feat.h - the feature sets (`--features`, src/flow/feature/sets.h) as
 * IPFIX elements, laid out as ipfixprobe's process plugins export them: the same enterprise
 * numbers (8057 CESNET, 39499) and element IDs, the same types and lengths, strings
 * variable-length (RFC 7011 section 7) and lists as RFC 6313 basicLists (docs/FLOW.md, "IPFIX
 * export of the features").
 *
 * A record with features goes out under a template made of its plain variant's elements
 * followed by the elements of each set it carries, in set order (ipfix.c allocates these
 * template IDs from SECHO_IPFIX_TID_FEAT up). Which sets a record carries is ipfixprobe's
 * rule: a set whose plugin found nothing adds no element to the record (the record takes a
 * template without it); the statistics sets are carried whenever their export rule keeps
 * them (secho_feat_X_keep), empty lists included, as ipfixprobe's pstats, phists and bstats
 * are.
 *
 * Pure functions over the record's feature area; no state.
 */
#ifndef SECHO_FLOW_IPFIX_FEAT_H
#define SECHO_FLOW_IPFIX_FEAT_H

#include <stddef.h>
#include <stdint.h>

#include "flow/core/record.h"

#define SECHO_IPFIX_PEN_CESNET   8057u  /* ipfixprobe's elements (CESNET) */
#define SECHO_IPFIX_PEN_CESNET2  39499u /* Flowmon's: ipfixprobe's HTTP and TLS elements */
#define SECHO_IPFIX_IE_BASICLIST 291u   /* RFC 6313 basicList */
#define SECHO_IPFIX_VARLEN       65535u /* a template's length of a variable-length element */

/* The template IDs of records with features: SECHO_IPFIX_TID_FEAT and up, at most
 * SECHO_IPFIX_FEAT_TEMPLATES of them per exporter. */
#define SECHO_IPFIX_TID_FEAT       1024
#define SECHO_IPFIX_FEAT_TEMPLATES 1024

/* The most bytes the feature part of one data record takes (every set on, every list and
 * string at its bound: 3,099), and of its template's field specifiers (67 elements, 456
 * bytes). */
#define SECHO_IPFIX_FEAT_REC_MAX  3584
#define SECHO_IPFIX_FEAT_TMPL_MAX 512
/* The most bytes a template set of a record with features takes: its headers, the largest
 * plain variant's field specifiers (368 bytes with them) and every set's (456);
 * tests/unit/test_ipfix_feat.c checks the sum against it. */
#define SECHO_IPFIX_FEAT_TSET_MAX 1024

/* The sets (bit 1u << SECHO_FEAT_SET_*) record r carries in IPFIX: those on whose state has
 * something to export by ipfixprobe's rules (above); 0 without features. Can't fail. */
uint32_t secho_ipfix_feat_carried(const struct secho_flow_rec *r);

/* The field specifiers (RFC 7011 section 3.2: ID with the enterprise bit, length, PEN) of
 * the sets in carried, in set order, into out (room for SECHO_IPFIX_FEAT_TMPL_MAX bytes):
 * returns the bytes written and sets *nfields. */
size_t secho_ipfix_feat_fields(uint32_t carried, uint8_t *out, unsigned *nfields);

/* The data of the sets in carried (each one on in r->feat_layout), in set order, into out
 * (room for SECHO_IPFIX_FEAT_REC_MAX bytes): returns the bytes written. */
size_t secho_ipfix_feat_encode(const struct secho_flow_rec *r, uint32_t carried, uint8_t *out);

/* One set's data from its state (struct secho_feat_X) into out; returns the bytes written, 0
 * for a set out of range. packets and tcp_flags are not looked at: whether a set is carried
 * is secho_ipfix_feat_carried's question. */
size_t secho_ipfix_feat_set_encode(unsigned set, const void *state, uint8_t *out);

/* A variable-length value (RFC 7011 section 7): one length byte below 255, else 255 and two
 * length bytes; then the bytes (n at most 65535). Returns the bytes written. */
size_t secho_ipfix_varlen(uint8_t *out, const void *bytes, size_t n);

#endif
