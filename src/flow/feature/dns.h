/*
 * src/flow/feature/dns.h - the dns feature set: what a flow's first DNS query and first DNS
 * response say (RFC 1035 section 4; EDNS(0) OPT, RFC 6891), over UDP and over TCP with its
 * 2-byte length prefix (RFC 1035 4.2.2, RFC 7766), the TCP stream reassembled within a
 * fixed bound. docs/FLOW.md "Features: dns".
 *
 * Fields (JSON name as FlowTest's conf/fields.yml; IPFIX element as ipfixprobe's dns plugin
 * exports it, PEN:ID; "-" = no element, JSON only):
 *
 *   JSON                 IPFIX       type     from / bound
 *   dns_id               8057:10     u16      the query's ID (the response's if no query)
 *   dns_flags            -           u16      the query's header flags (QR..RCODE, 16 bits)
 *   rev_dns_flags        -           u16      the response's header flags
 *   dns_req_query_name   8057:2      string   the first question's name, dotted, cut at
 *                                             SECHO_DNS_NAME_MAX bytes (dns_qname_cut)
 *   dns_req_query_type   8057:3      u16      the first question's QTYPE
 *   dns_req_query_class  8057:4      u16      the first question's QCLASS
 *   dns_resp_rcode       8057:1      u8       the response's RCODE (4 header bits)
 *   dns_answers          8057:14     u16      the response's ANCOUNT (as the header says)
 *   dns_resp_rr          -           list     the response's answers, the first
 *                                             SECHO_DNS_RR_MAX: {name, type, class, ttl,
 *                                             data} (data as text, see secho_dns_rdata;
 *                                             hex data also has data_hex and rdlength)
 *   dns_rr_ttl           8057:5      u32      the first answer's TTL
 *   dns_rlength          8057:6      u16      the first answer's data text length
 *   dns_rdata            8057:7      string   the first answer's data text
 *   dns_psize            8057:8      u16      the query's EDNS UDP payload size (OPT CLASS)
 *   dns_do               8057:9      u8       the query's EDNS DO bit
 *   dns_truncated        -           bool     a message ended before its counts said, or a
 *                                             TCP message was longer than the bound
 *
 * Refused (counted, nothing kept): payloads shorter than the 12-byte header, a question
 * that does not parse, a TCP stream with a gap. Names: labels of at most 63 bytes,
 * compression pointers only backwards (to bytes before the pointer itself) and at most
 * SECHO_DNS_MAX_HOPS of them, at most 255 bytes of wire name (RFC 1035 2.3.4); a name that
 * breaks a rule ends its message's parse (what came before is kept).
 */
#ifndef SECHO_FLOW_FEATURE_DNS_H
#define SECHO_FLOW_FEATURE_DNS_H

#include "flow/feature/feature.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SECHO_DNS_PORT        53
#define SECHO_DNS_HDR_LEN     12
#define SECHO_DNS_NAME_MAX    128  /* bytes of a question's name text kept */
#define SECHO_DNS_RR_MAX      4    /* answers kept per response */
#define SECHO_DNS_RR_NAME_MAX 64   /* bytes of an answer's name text kept */
#define SECHO_DNS_RDATA_MAX   80   /* bytes of an answer's data text kept */
#define SECHO_DNS_TCP_BUF     1024 /* bytes of a TCP message reassembled (prefix included) */
#define SECHO_DNS_MAX_HOPS    32   /* compression pointers followed per name */
#define SECHO_DNS_REFUSE_MAX  4    /* payloads refused before a flow is given up */

/* Header flags (RFC 1035 4.1.1) */
#define SECHO_DNS_F_QR 0x8000
#define SECHO_DNS_F_TC 0x0200

/* Types whose data is written as text (others as hex) */
#define SECHO_DNS_T_A     1
#define SECHO_DNS_T_NS    2
#define SECHO_DNS_T_CNAME 5
#define SECHO_DNS_T_SOA   6
#define SECHO_DNS_T_PTR   12
#define SECHO_DNS_T_MX    15
#define SECHO_DNS_T_TXT   16
#define SECHO_DNS_T_AAAA  28
#define SECHO_DNS_T_SRV   33
#define SECHO_DNS_T_OPT   41

/* secho_dns_rr.flags */
#define SECHO_DNS_RR_NAME_CUT 0x01 /* name text longer than its bound */
#define SECHO_DNS_RR_DATA_CUT 0x02 /* data text longer than its bound */
#define SECHO_DNS_RR_DATA_HEX 0x04 /* data written as hex (type not decoded, or malformed) */

struct secho_dns_rr {
	uint16_t type;
	uint16_t rclass;
	uint32_t ttl;
	uint16_t rdlength; /* on the wire */
	uint8_t name_len;
	uint8_t data_len;
	uint8_t flags; /* SECHO_DNS_RR_* */
	char name[SECHO_DNS_RR_NAME_MAX];
	char data[SECHO_DNS_RDATA_MAX];
};

/* What one DNS message says. */
struct secho_dns_msg {
	uint16_t id, flags;
	uint16_t qdcount, ancount, nscount, arcount;
	uint16_t qtype, qclass;
	uint16_t psize;    /* OPT's UDP payload size (has_opt) */
	uint8_t dnssec_ok; /* OPT's DO bit (has_opt) */
	uint8_t has_opt;
	uint8_t has_question;
	uint8_t qname_len;
	uint8_t qname_cut;
	uint8_t nrr;       /* answers kept in rr[] */
	uint8_t truncated; /* the message ended (or a name broke a rule) before its counts did */
	char qname[SECHO_DNS_NAME_MAX];
	struct secho_dns_rr rr[SECHO_DNS_RR_MAX];
};

/* One direction's TCP stream: the first message, length prefix included. */
struct secho_dns_tcp {
	uint32_t next_seq; /* the sequence number of the byte after buf[have-1] */
	uint16_t have;
	uint8_t started;
	uint8_t state; /* 0 collecting, 1 parsed, 2 given up (gap) */
	uint8_t buf[SECHO_DNS_TCP_BUF];
};

/* The per-flow state: made ready by secho_feat_dns_init when the set becomes live for a
 * record (sets.h, "Live sets"). */
struct secho_feat_dns {
	struct secho_dns_msg msg[2]; /* [0] the first query (QR 0), [1] the first response */
	uint8_t seen;                /* bit 0: msg[0] filled; bit 1: msg[1] */
	uint8_t done;                /* nothing more wanted: stop feeding this flow */
	uint16_t pad;
	uint32_t messages; /* DNS messages parsed */
	uint32_t refused;  /* payloads that were not DNS */
	uint32_t extra;    /* messages after the first of their kind (not kept) */
	/* last: the TCP streams' buffers, which no exporter reads (a done state may be kept
	 * without them: src/flow/feature/sets.h, "Done states") */
	struct secho_dns_tcp tcp[2]; /* per direction (SECHO_FEAT_FWD, _REV) */
};
#define SECHO_FEAT_DNS_SIZE 3672
_Static_assert(sizeof(struct secho_feat_dns) == SECHO_FEAT_DNS_SIZE, "dns state size");

/*
 * Decode the name at msg[off..) of the message msg[0..len) into out[0..cap) as dotted text
 * (the root is ""), following compression pointers. *outlen gets the text's bytes (at most
 * cap), *cut whether the text was longer, *next the offset after the name where it starts
 * (after its first pointer, if any). Returns 0, or -EBADMSG: past the message's end, a label
 * type other than 00 or 11, a pointer not backwards, more than SECHO_DNS_MAX_HOPS pointers,
 * more than 255 bytes of name. Never reads outside msg[0..len).
 */
int secho_dns_name(const uint8_t *msg, size_t len, size_t off, char *out, size_t cap,
                   size_t *outlen, bool *cut, size_t *next);

/*
 * Write the data of a record of type type at msg[off..off+rdlen) as text into out[0..cap):
 * A and AAAA as addresses, NS/CNAME/PTR as names, MX as "preference name", TXT as its
 * strings joined by a space, SRV as "priority weight port target", SOA as "mname rname
 * serial refresh retry expire minimum" (FlowTest's forms); other types, and data whose
 * length does not fit its type (a name must end exactly where the data does), as
 * lowercase hex. Returns the text's length (<= cap), sets *flags' DATA_CUT and DATA_HEX.
 */
size_t secho_dns_rdata(const uint8_t *msg, size_t len, size_t off, uint16_t type, uint16_t rdlen,
                       char *out, size_t cap, uint8_t *flags);

/*
 * Parse one DNS message msg[0..len) (no TCP prefix) into *m (zeroed first). Returns 0 when
 * its header (and its first question, if it has one) parsed, -EBADMSG otherwise. Records
 * after a malformed one are not read; m->truncated says so.
 */
int secho_dns_parse(const uint8_t *msg, size_t len, struct secho_dns_msg *m);

/* Whether a packet is one the dns feature set looks at: UDP or TCP with port 53 at
 * either end. */
bool secho_feat_dns_wants(const struct secho_feat_pkt *p);

/* Make s ready for a record: the flags, counters and the TCP streams' positions zeroed;
 * the messages (read under their seen bit, zeroed by the parse that fills them) and the TCP
 * buffers (read within have) are not. Can't fail. */
void secho_feat_dns_init(struct secho_feat_dns *s);

/* One packet of the flow (UDP: a message per datagram; TCP: the stream, reassembled). */
void secho_feat_dns_packet(struct secho_feat_dns *s, const struct secho_feat_pkt *p);

/* The fields seen, as JSON members (",\"dns_id\":..."): bytes written, or -ENOSPC. */
int secho_feat_dns_json(const struct secho_feat_dns *s, char *buf, size_t cap);

#endif
