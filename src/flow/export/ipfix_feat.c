/*
 * src/flow/export/ipfix_feat.c - the feature sets' IPFIX elements (contract: ipfix_feat.h;
 * docs/FLOW.md, "IPFIX export of the features").
 *
 * Each set's elements are those of ipfixprobe's plugin template (ipfix-elements.hpp,
 * IPFIX_X_TEMPLATE), in its order, less the elements secho does not keep; each value is
 * written as the plugin's fill_ipfix() writes it: numbers in network order at the element's
 * length, strings with a variable-length prefix, lists as a basicList:
 *
 *   255, length (2 bytes: the rest of the list), semantic 3 (allOf), field ID | 0x8000,
 *   element length (2 bytes), PEN 8057 (4 bytes), then the values in network order.
 */
#include "flow/export/ipfix_feat.h"
#include "flow/export/put.h"
#include "flow/feature/bstats.h"
#include "flow/feature/dns.h"
#include "flow/feature/http.h"
#include "flow/feature/phists.h"
#include "flow/feature/pstats.h"
#include "flow/feature/quic.h"
#include "flow/feature/sets.h"
#include "flow/feature/tls.h"
#include "flow/feature/wg.h"

#include <stdbool.h>
#include <string.h>

#define BL_SEMANTIC_ALLOF 3  /* RFC 6313 section 4.5.3, as ipfixprobe */
#define BL_HDR            12 /* 255, length, semantic, field ID, element length, PEN */

/* ---- writers ---- */

size_t secho_ipfix_varlen(uint8_t *out, const void *bytes, size_t n)
{
	uint8_t *p = out;
	if (n > 65535)
		n = 65535;
	if (n < 255) {
		*p++ = (uint8_t)n;
	} else {
		*p++ = 255;
		p = w16(p, (uint16_t)n);
	}
	if (n)
		memcpy(p, bytes, n);
	return (size_t)(p - out) + n;
}

static uint8_t *str(uint8_t *p, const void *s, size_t n)
{
	return p + secho_ipfix_varlen(p, s, n);
}

/* A basicList's header for n values of elen bytes of element 8057/id. */
static uint8_t *bl_hdr(uint8_t *p, uint16_t id, uint16_t elen, size_t n)
{
	p = w8(p, 255);
	p = w16(p, (uint16_t)(BL_HDR - 3 + n * elen));
	p = w8(p, BL_SEMANTIC_ALLOF);
	p = w16(p, (uint16_t)(0x8000 | id));
	p = w16(p, elen);
	return w32(p, SECHO_IPFIX_PEN_CESNET);
}

static uint8_t *bl_u16(uint8_t *p, uint16_t id, const uint16_t *v, size_t n)
{
	p = bl_hdr(p, id, 2, n);
	for (size_t i = 0; i < n; i++)
		p = w16(p, v[i]);
	return p;
}

static uint8_t *bl_u32(uint8_t *p, uint16_t id, const uint32_t *v, size_t n)
{
	p = bl_hdr(p, id, 4, n);
	for (size_t i = 0; i < n; i++)
		p = w32(p, v[i]);
	return p;
}

/* Times: ns since the epoch to ipfixprobe's milliseconds (its Tv2Ts: whole ms, floored). */
static uint8_t *bl_ms(uint8_t *p, uint16_t id, const uint64_t *ns, size_t n)
{
	p = bl_hdr(p, id, 8, n);
	for (size_t i = 0; i < n; i++)
		p = w64(p, ns[i] / 1000000u);
	return p;
}

/* ---- the elements: PEN (0: IANA), ID, length (SECHO_IPFIX_VARLEN: variable) ---- */

struct ie {
	uint32_t pen;
	uint16_t id, len;
};

#define V  SECHO_IPFIX_VARLEN
#define C  SECHO_IPFIX_PEN_CESNET
#define C2 SECHO_IPFIX_PEN_CESNET2
#define BL                                                                                         \
	{                                                                                          \
		0, SECHO_IPFIX_IE_BASICLIST, V                                                     \
	}
#define MAXIE 14

/* clang-format off */
static const struct ie set_ies[SECHO_FEAT_NSETS][MAXIE + 1] = {
	[SECHO_FEAT_SET_TLS] = {
		{C2, 333, 2},  /* TLS_VERSION */
		{C, 808, V},   /* TLS_SNI */
		{C2, 337, V},  /* TLS_ALPN */
		{C2, 357, V},  /* TLS_JA3: 16 bytes */
		{C, 809, V},   /* TLS_JA4 */
		BL,            /* TLS_EXT_TYPE: 8057/802 u16 */
		BL,            /* TLS_EXT_LEN: 8057/803 u16 */
		/* then what ipfixprobe does not export, as Flowmon's probe does (libfds'
		 * flowmon.xml names them; FlowTest's tls_* fields) */
		{C2, 340, 2},  /* tlsClientVersion */
		{C2, 336, 2},  /* tlsCipherSuite */
		{C2, 349, V},  /* tlsIssuerCn */
		{C2, 350, V},  /* tlsSubjectCn */
		{C2, 352, 8},  /* tlsValidityNotBefore: signed64, seconds */
		{C2, 353, 8},  /* tlsValidityNotAfter */
		{C2, 355, 2},  /* tlsPublicKeyAlg: OpenSSL NID */
	},
	[SECHO_FEAT_SET_QUIC] = {
		{C, 890, V},   /* QUIC_SNI */
		{C, 891, V},   /* QUIC_USER_AGENT */
		{C, 892, 4},   /* QUIC_VERSION */
		{C, 893, 4},   /* QUIC_CLIENT_VERSION */
		{C, 894, 8},   /* QUIC_TOKEN_LENGTH */
		{C, 895, V},   /* QUIC_OCCID */
		{C, 896, V},   /* QUIC_OSCID */
		{C, 897, V},   /* QUIC_SCID */
		{C, 898, V},   /* QUIC_RETRY_SCID */
		{C, 889, 1},   /* QUIC_ZERO_RTT */
		{C, 887, 2},   /* QUIC_SERVER_PORT */
		{C, 886, 1},   /* QUIC_CH_PARSED */
		BL,            /* QUIC_TLS_EXT_TYPE: 8057/885 u16 */
		BL,            /* QUIC_TLS_EXT_LEN: 8057/884 u16 */
	},
	[SECHO_FEAT_SET_DNS] = {
		{C, 14, 2},    /* DNS_ANSWERS */
		{C, 1, 1},     /* DNS_RCODE */
		{C, 3, 2},     /* DNS_QTYPE */
		{C, 4, 2},     /* DNS_CLASS */
		{C, 5, 4},     /* DNS_RR_TTL */
		{C, 6, 2},     /* DNS_RLENGTH */
		{C, 8, 2},     /* DNS_PSIZE */
		{C, 9, 1},     /* DNS_DO */
		{C, 10, 2},    /* DNS_ID */
		{C, 2, V},     /* DNS_NAME */
		{C, 7, V},     /* DNS_RDATA */
		{C2, 111, 2},  /* Flowmon's dnsFlagsCodes: the first message's header flags */
	},
	[SECHO_FEAT_SET_HTTP] = {
		{C2, 20, V},   /* HTTP_USERAGENT */
		{C, 200, V},   /* HTTP_METHOD */
		{C2, 1, V},    /* HTTP_DOMAIN */
		{C2, 3, V},    /* HTTP_REFERER */
		{C2, 2, V},    /* HTTP_URI */
		{C2, 10, V},   /* HTTP_CONTENT_TYPE */
		{C, 201, V},   /* HTTP_SERVER */
		{C2, 12, 2},   /* HTTP_STATUS */
	},
	[SECHO_FEAT_SET_WG] = {
		{C, 1100, 1},  /* WG_CONF_LEVEL */
		{C, 1101, 4},  /* WG_SRC_PEER */
		{C, 1102, 4},  /* WG_DST_PEER */
	},
	[SECHO_FEAT_SET_PSTATS] = {BL, BL, BL, BL}, /* 8057/1013-1016 */
	[SECHO_FEAT_SET_PHISTS] = {BL, BL, BL, BL}, /* 8057/1060, 1062, 1061, 1063 */
	[SECHO_FEAT_SET_BSTATS] = {BL, BL, BL, BL, BL, BL, BL, BL}, /* 8057/1050-1057 */
};
/* clang-format on */

size_t secho_ipfix_feat_fields(uint32_t carried, uint8_t *out, unsigned *nfields)
{
	uint8_t *p = out;
	unsigned n = 0;

	carried &= SECHO_FEAT_ALL;
	while (carried) {
		unsigned s = (unsigned)__builtin_ctz(carried);
		carried &= carried - 1;
		for (const struct ie *e = set_ies[s]; e->id; e++, n++) {
			p = w16(p, (uint16_t)(e->id | (e->pen ? 0x8000 : 0)));
			p = w16(p, e->len);
			if (e->pen)
				p = w32(p, e->pen);
		}
	}
	*nfields = n;
	return (size_t)(p - out);
}

/* ---- each set's data, in its template's order ---- */

static uint8_t *enc_tls(uint8_t *p, const struct secho_feat_tls *s)
{
	static const uint8_t zero[16];
	/* ipfixprobe's TLS_VERSION: the ClientHello's legacy_version, replaced by the
	 * ServerHello's selected version */
	uint16_t v =
	        (s->flags & SECHO_FEAT_TLS_F_SH) ? s->server_version : s->client_legacy_version;
	p = w16(p, v);
	p = str(p, s->sni, (s->flags & SECHO_FEAT_TLS_F_SNI) ? s->sni_len : 0);
	p = str(p, s->alpn, (s->flags & SECHO_FEAT_TLS_F_SALPN) ? s->alpn_len : 0);
	p = str(p, (s->flags & SECHO_FEAT_TLS_F_JA3) ? s->ja3 : zero, 16);
	p = str(p, s->ja4, (s->flags & SECHO_FEAT_TLS_F_JA4) ? SECHO_TLS_JA4_LEN : 0);
	unsigned n = s->n_ext < SECHO_FEAT_TLS_EXTS ? s->n_ext : SECHO_FEAT_TLS_EXTS;
	p = bl_u16(p, 802, s->ext_type, n);
	p = bl_u16(p, 803, s->ext_len, n);
	/* then Flowmon's: the record is carried for its ClientHello, so the client's version
	 * is always there; the server's fields are 0 or empty without their message */
	bool sh = (s->flags & SECHO_FEAT_TLS_F_SH) != 0;
	bool cert = (s->flags & SECHO_FEAT_TLS_F_CERT) != 0;
	bool valid = cert && (s->flags & SECHO_FEAT_TLS_F_VALIDITY);
	p = w16(p, s->client_version);
	p = w16(p, sh ? s->cipher_suite : 0);
	p = str(p, s->issuer_cn, cert ? s->issuer_cn_len : 0);
	p = str(p, s->subject_cn, cert ? s->subject_cn_len : 0);
	p = w64(p, valid ? (uint64_t)s->not_before : 0);
	p = w64(p, valid ? (uint64_t)s->not_after : 0);
	return w16(p, cert ? s->pk_nid : 0);
}

static uint8_t *enc_quic(uint8_t *p, const struct secho_feat_quic *s)
{
	p = str(p, s->sni, (s->hello & SECHO_QUIC_H_SNI) ? s->sni_len : 0);
	p = str(p, s->ua, (s->hello & SECHO_QUIC_H_UA) ? s->ua_len : 0);
	p = w32(p, s->version);
	p = w32(p, s->client_version);
	p = w64(p, s->token_len);
	p = str(p, s->occid, s->occid_len);
	p = str(p, s->oscid, s->oscid_len);
	p = str(p, s->scid, s->server_seen ? s->scid_len : 0);
	p = str(p, s->retry_scid, s->retry_scid_len);
	p = w8(p, s->zero_rtt);
	p = w16(p, s->server_port);
	bool parsed = (s->hello & SECHO_QUIC_H_PARSED) != 0;
	p = w8(p, parsed);
	unsigned n = !parsed ? 0 : s->n_ext < SECHO_QUIC_EXTS ? s->n_ext : SECHO_QUIC_EXTS;
	p = bl_u16(p, 885, s->ext_type, n);
	return bl_u16(p, 884, s->ext_len, n);
}

static uint8_t *enc_dns(uint8_t *p, const struct secho_feat_dns *s)
{
	const struct secho_dns_msg *q = (s->seen & 1) ? &s->msg[0] : NULL;
	const struct secho_dns_msg *r = (s->seen & 2) ? &s->msg[1] : NULL;
	const struct secho_dns_msg *first = q ? q : r;
	const struct secho_dns_msg *qs = q && q->has_question ? q : r && r->has_question ? r : NULL;
	const struct secho_dns_msg *o = q && q->has_opt ? q : r && r->has_opt ? r : NULL;
	const struct secho_dns_rr *rr = r && r->nrr ? &r->rr[0] : NULL;

	p = w16(p, r ? r->ancount : 0);
	p = w8(p, r ? (uint8_t)(r->flags & 0xf) : 0);
	p = w16(p, qs ? qs->qtype : 0);
	p = w16(p, qs ? qs->qclass : 0);
	p = w32(p, rr ? rr->ttl : 0);
	p = w16(p, rr ? rr->data_len : 0);
	p = w16(p, o ? o->psize : 0);
	p = w8(p, o ? o->dnssec_ok : 0);
	p = w16(p, first ? first->id : 0);
	p = str(p, qs ? qs->qname : "", qs ? qs->qname_len : 0);
	p = str(p, rr ? rr->data : "", rr ? rr->data_len : 0);
	/* Flowmon's dnsFlagsCodes, one a record (libfds' flowmon.xml: no reverse form): the
	 * flags of the message DNS_ID comes from, the query's (a uniflow record of the
	 * response: the response's); a biflow's response flags are JSON's rev_dns_flags */
	return w16(p, first ? first->flags : 0);
}

static uint8_t *enc_http(uint8_t *p, const struct secho_feat_http *s)
{
	const struct secho_http_fields *f = &s->f;
	bool rq = f->have_req, rs = f->have_resp;

	p = str(p, f->agent.s, rq ? f->agent.len : 0);
	p = str(p, f->method.s, rq ? f->method.len : 0);
	p = str(p, f->host.s, rq ? f->host.len : 0);
	p = str(p, f->referer.s, rq ? f->referer.len : 0);
	p = str(p, f->url.s, rq ? f->url.len : 0);
	p = str(p, f->ctype.s, rs ? f->ctype.len : 0);
	p = str(p, f->server.s, rs ? f->server.len : 0);
	return w16(p, rs ? f->status : 0);
}

static uint8_t *enc_wg(uint8_t *p, const struct secho_feat_wg *s)
{
	p = w8(p, s->conf);
	p = w32(p, s->src_peer);
	return w32(p, s->dst_peer);
}

static uint8_t *enc_pstats(uint8_t *p, const struct secho_feat_pstats *s)
{
	unsigned n = s->count < SECHO_PSTATS_MAX ? s->count : SECHO_PSTATS_MAX;
	p = bl_hdr(p, 1013, 2, n);
	for (unsigned i = 0; i < n; i++)
		p = w16(p, s->pkt[i].size);
	p = bl_hdr(p, 1014, 8, n);
	for (unsigned i = 0; i < n; i++)
		p = w64(p, secho_pstats_ts(&s->pkt[i]) / 1000000u);
	p = bl_hdr(p, 1015, 1, n);
	for (unsigned i = 0; i < n; i++)
		p = w8(p, s->pkt[i].flags);
	p = bl_hdr(p, 1016, 1, n); /* int8: 1 forward, -1 (0xff) reverse */
	for (unsigned i = 0; i < n; i++)
		p = w8(p, (uint8_t)s->pkt[i].dir);
	return p;
}

static uint8_t *enc_phists(uint8_t *p, const struct secho_feat_phists *s)
{
	/* ipfixprobe's order: both size histograms, then both inter-packet time ones */
	p = bl_u32(p, 1060, s->d[0].size, SECHO_PHISTS_BINS);
	p = bl_u32(p, 1062, s->d[1].size, SECHO_PHISTS_BINS);
	p = bl_u32(p, 1061, s->d[0].ipt, SECHO_PHISTS_BINS);
	return bl_u32(p, 1063, s->d[1].ipt, SECHO_PHISTS_BINS);
}

static uint8_t *enc_bstats(uint8_t *p, const struct secho_feat_bstats *s)
{
	for (unsigned dir = 0; dir < 2; dir++) {
		const struct secho_bstats_dir *d = &s->d[dir];
		unsigned n = secho_feat_bstats_count(s, dir);
		uint16_t id = (uint16_t)(dir ? 1054 : 1050);
		p = bl_u32(p, id, d->pkts, n);
		p = bl_u32(p, (uint16_t)(id + 1), d->bytes, n);
		p = bl_ms(p, (uint16_t)(id + 2), d->start_ns, n);
		p = bl_ms(p, (uint16_t)(id + 3), d->stop_ns, n);
	}
	return p;
}

size_t secho_ipfix_feat_set_encode(unsigned set, const void *state, uint8_t *out)
{
	uint8_t *p = out;

	switch (set) {
	case SECHO_FEAT_SET_TLS:
		p = enc_tls(p, state);
		break;
	case SECHO_FEAT_SET_QUIC:
		p = enc_quic(p, state);
		break;
	case SECHO_FEAT_SET_DNS:
		p = enc_dns(p, state);
		break;
	case SECHO_FEAT_SET_HTTP:
		p = enc_http(p, state);
		break;
	case SECHO_FEAT_SET_WG:
		p = enc_wg(p, state);
		break;
	case SECHO_FEAT_SET_PSTATS:
		p = enc_pstats(p, state);
		break;
	case SECHO_FEAT_SET_PHISTS:
		p = enc_phists(p, state);
		break;
	case SECHO_FEAT_SET_BSTATS:
		p = enc_bstats(p, state);
		break;
	default:
		break;
	}
	return (size_t)(p - out);
}

/* ---- per record ---- */

/* The set's state in r: its section when the set is live in r, else the zero state (a set
 * that found nothing: not carried, or carried with empty lists by the statistics sets' rule,
 * as today for a flow they saw nothing of). */
static const void *state_of(const struct secho_flow_rec *r, unsigned set)
{
	return secho_feat_sets_state(r->feat_layout, r->feat_sec, r->feat_live, set);
}

uint32_t secho_ipfix_feat_carried(const struct secho_flow_rec *r)
{
	if (!r->feat_layout)
		return 0;
	uint32_t sets = r->feat_layout->sets & SECHO_FEAT_ALL, out = 0;
	uint64_t packets = r->fwd.packets + r->rev.packets;
	uint8_t flags = (uint8_t)(r->fwd.tcp_flags | r->rev.tcp_flags);

	while (sets) {
		unsigned i = (unsigned)__builtin_ctz(sets);
		const void *st = state_of(r, i);
		bool on = false;
		sets &= sets - 1;
		switch (i) {
		case SECHO_FEAT_SET_TLS: /* ipfixprobe: a parsed ClientHello adds the record */
			on = (((const struct secho_feat_tls *)st)->flags & SECHO_FEAT_TLS_F_CH) !=
			     0;
			break;
		case SECHO_FEAT_SET_QUIC:
			on = ((const struct secho_feat_quic *)st)->quic != 0;
			break;
		case SECHO_FEAT_SET_DNS:
			on = ((const struct secho_feat_dns *)st)->seen != 0;
			break;
		case SECHO_FEAT_SET_HTTP: {
			const struct secho_feat_http *h = st;
			on = h->f.have_req || h->f.have_resp;
			break;
		}
		case SECHO_FEAT_SET_WG:
			on = ((const struct secho_feat_wg *)st)->seen != 0;
			break;
		case SECHO_FEAT_SET_PSTATS:
			on = secho_feat_pstats_keep(packets, flags);
			break;
		case SECHO_FEAT_SET_PHISTS:
			on = secho_feat_phists_keep(packets, flags);
			break;
		case SECHO_FEAT_SET_BSTATS:
			on = secho_feat_bstats_keep(packets);
			break;
		default:
			break;
		}
		if (on)
			out |= 1u << i;
	}
	return out;
}

size_t secho_ipfix_feat_encode(const struct secho_flow_rec *r, uint32_t carried, uint8_t *out)
{
	uint8_t *p = out;

	if (!r->feat_layout)
		return 0;
	carried &= r->feat_layout->sets & SECHO_FEAT_ALL;
	while (carried) {
		unsigned i = (unsigned)__builtin_ctz(carried);
		carried &= carried - 1;
		p += secho_ipfix_feat_set_encode(i, state_of(r, i), p);
	}
	return (size_t)(p - out);
}
