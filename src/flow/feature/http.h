/*
 * src/flow/feature/http.h - the http feature set: a flow's first HTTP/1.x request and first
 * response (RFC 9112: request line, status line, header fields), read from the TCP stream
 * line by line with a fixed line buffer per direction. docs/FLOW.md "Features: http".
 *
 * Fields (JSON name as FlowTest's conf/fields.yml; IPFIX element as ipfixprobe's http
 * plugin exports it, PEN:ID):
 *
 *   JSON               IPFIX       type     from / bound (bytes kept)
 *   http_method        8057:200    string   the request line's method (15)
 *   http_url           39499:2     string   the request line's target (128)
 *   http_host          39499:1     string   the request's Host (64)
 *   http_agent         39499:20    string   the request's User-Agent (128)
 *   http_referer       39499:3     string   the request's Referer (128)
 *   http_status_code   39499:12    u16      the status line's code
 *   http_content_type  39499:10    string   the response's Content-Type (32)
 *   http_server        8057:201    string   the response's Server (128)
 *   http_X_cut         -           bool     that string was longer than its bound (JSON)
 *
 * Header names are matched without regard to case (RFC 9110 5.1); values lose leading and
 * trailing whitespace. A field line longer than SECHO_HTTP_LINE_MAX is read to that length
 * (its value then cut). Refused (the direction given up, counted): a first line that is
 * neither a request line (a method of 1-15 letters A-Z, a target, "HTTP/") nor a status
 * line ("HTTP/1.x" and 3 digits); a TCP gap; a head longer than SECHO_HTTP_HEAD_MAX bytes
 * ends where it was (fields so far kept). Later requests and responses are counted, not read.
 */
#ifndef SECHO_FLOW_FEATURE_HTTP_H
#define SECHO_FLOW_FEATURE_HTTP_H

#include "flow/feature/feature.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SECHO_HTTP_METHOD_MAX  15
#define SECHO_HTTP_URL_MAX     128
#define SECHO_HTTP_HOST_MAX    64
#define SECHO_HTTP_AGENT_MAX   128
#define SECHO_HTTP_REFERER_MAX 128
#define SECHO_HTTP_CTYPE_MAX   32
#define SECHO_HTTP_SERVER_MAX  128
#define SECHO_HTTP_LINE_MAX    256  /* bytes of one line kept while it is read */
#define SECHO_HTTP_HEAD_MAX    8192 /* bytes of a head read at most */

/* A bounded string: its bytes, its length, whether it was longer. */
#define SECHO_HTTP_STR(n)                                                                          \
	struct {                                                                                   \
		uint8_t len;                                                                       \
		uint8_t cut;                                                                       \
		char s[n];                                                                         \
	}

/* The fields, by message (request or response), whichever direction carried them. */
struct secho_http_fields {
	SECHO_HTTP_STR(SECHO_HTTP_METHOD_MAX) method;
	SECHO_HTTP_STR(SECHO_HTTP_URL_MAX) url;
	SECHO_HTTP_STR(SECHO_HTTP_HOST_MAX) host;
	SECHO_HTTP_STR(SECHO_HTTP_AGENT_MAX) agent;
	SECHO_HTTP_STR(SECHO_HTTP_REFERER_MAX) referer;
	SECHO_HTTP_STR(SECHO_HTTP_CTYPE_MAX) ctype;
	SECHO_HTTP_STR(SECHO_HTTP_SERVER_MAX) server;
	uint16_t status;
	uint8_t have_req;  /* a request line was read */
	uint8_t have_resp; /* a status line was read */
};

/* One direction's stream. */
struct secho_http_dir {
	uint32_t next_seq;
	uint16_t head; /* bytes of this head read */
	uint16_t line_len;
	uint8_t started;
	uint8_t state;    /* SECHO_HTTP_S_* */
	uint8_t line_cut; /* the line is longer than the buffer */
	uint8_t pad;
	char line[SECHO_HTTP_LINE_MAX];
};
#define SECHO_HTTP_S_START   0 /* before the first line */
#define SECHO_HTTP_S_REQ     1 /* in a request's header fields */
#define SECHO_HTTP_S_RESP    2 /* in a response's header fields */
#define SECHO_HTTP_S_DONE    3 /* its head was read */
#define SECHO_HTTP_S_REFUSED 4 /* not HTTP, or a gap */

/* The per-flow state: made ready by secho_feat_http_init when the set becomes live for a
 * record (sets.h, "Live sets"). */
struct secho_feat_http {
	struct secho_http_fields f;
	uint8_t done; /* nothing more wanted */
	uint8_t pad[3];
	uint32_t refused; /* directions given up (not HTTP, a gap) */
	uint32_t extra;   /* requests or responses after the first (not read) */
	/* the parser's scratch, last: a done state is kept without it (sets.h, "Done
	 * states") */
	struct secho_http_dir d[2]; /* per direction */
};
#define SECHO_FEAT_HTTP_SIZE 1192
_Static_assert(sizeof(struct secho_feat_http) == SECHO_FEAT_HTTP_SIZE, "http state size");

/*
 * Parse one line (without its CR LF) as the first line of a head: 1 a request line (method
 * and target into f), 2 a status line (status into f), 0 neither. cut: the line was longer
 * than what is given (a request line's version may be missing then).
 */
int secho_http_first_line(struct secho_http_fields *f, const char *line, size_t n, bool cut);

/* Parse one header field line (name ":" value) of a request (req) or a response into f:
 * only the fields above are kept. cut: the line was longer than n. Returns 0, or -EBADMSG
 * when it has no ':' or an empty name. */
int secho_http_field_line(struct secho_http_fields *f, bool req, const char *line, size_t n,
                          bool cut);

/*
 * A head in one buffer (tests and fuzzers): buf[0..len) read as one direction's stream
 * from its start. Returns the direction's final state (SECHO_HTTP_S_*).
 */
int secho_http_parse_head(struct secho_feat_http *s, const uint8_t *buf, size_t len);

/* Whether the http set wants packet p's flow: TCP (sets.h, "Live sets"). */
static inline bool secho_feat_http_wants(const struct secho_feat_pkt *p)
{
	return p->proto == 6;
}

/* Make s ready for a record: every string's length and cut flag, the status, the message
 * flags, the directions' positions and the counters zeroed; the strings' bytes (read within
 * their lengths) and the line buffers (read within line_len) are not. Can't fail. */
void secho_feat_http_init(struct secho_feat_http *s);

/* One packet of the flow (TCP; anything else ends the set's interest). */
void secho_feat_http_packet(struct secho_feat_http *s, const struct secho_feat_pkt *p);

/* The fields seen, as JSON members (",\"http_method\":..."): bytes written, or -ENOSPC. */
int secho_feat_http_json(const struct secho_feat_http *s, char *buf, size_t cap);

#endif
