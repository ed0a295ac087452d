/*
 * src/flow/export/ipfix.h - the IPFIX exporter: flow records (record.h) to collectors over UDP,
 * TCP or into an IPFIX file (RFC 7011; biflows RFC 5103; docs/FLOW.md, "IPFIX export").
 *
 * Single-threaded: one exporter per metering process, called from the thread that exports
 * records. Every collector gets every record, its own template stream and its own sequence
 * numbers. Nothing blocks in secho_ipfix_record() or secho_ipfix_tick() except a UDP send
 * (a batch of up to 32 messages in one sendmmsg(2); datagram sockets do not block on
 * loopback or a LAN; a full send buffer is an error, counted); TCP is non-blocking with a
 * bounded queue of whole messages.
 *
 * Clocks. Record times (flowStart/EndMilliseconds) come from the record: packet time.
 * Everything the exporter decides by time - the message header's Export Time, the UDP
 * template refresh, the statistics record's period, the flush of a part-filled message,
 * TCP reconnect backoff - runs on now_ns, which the caller passes from CLOCK_REALTIME:
 * Export Time is defined as wall-clock seconds (RFC 7011 section 3.1), and the refresh
 * protects a collector that restarts in real time, so a capture metered offline in two
 * seconds sends its templates once, not once per minute of packet time. Only
 * secho_ipfix_close() waits, on CLOCK_MONOTONIC.
 *
 * Sequence numbers (RFC 7011 section 3.1): the number of Data Records (flow records and
 * statistics records; never template records) sent in this Transport Session for this
 * Observation Domain before this message. A UDP collector has one session for the
 * exporter's life; each TCP connection is a new session and starts at 0.
 */
#ifndef SECHO_FLOW_IPFIX_H
#define SECHO_FLOW_IPFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flow/core/record.h"

#define SECHO_IPFIX_PORT           4739 /* IANA */
#define SECHO_IPFIX_MAX_COLLECTORS 8
#define SECHO_IPFIX_PEN_REVERSE    29305u /* RFC 5103 reverse information elements */

/* Template IDs (RFC 7011: 256 and up). The plain IPv4 and IPv6 templates, one pair per mode,
 * the statistics, then the variants that carry more (TCP fields, MPLS label stacks, the
 * tunnel part: 261-690), and from SECHO_IPFIX_TID_WIDE up all of them with 8-byte counters
 * (docs/FLOW.md, "Templates and elements"). */
#define SECHO_IPFIX_TID_V4      256
#define SECHO_IPFIX_TID_V6      257
#define SECHO_IPFIX_TID_V4_BI   258
#define SECHO_IPFIX_TID_V6_BI   259
#define SECHO_IPFIX_TID_OPTIONS 260

/* A record's shape: IPv6 1 | TCP 2 | tunnel 4 | MPLS depth 0-8 << 3, + 72 * the tunnel shape
 * (0-5: outer IPv4 addresses 1, outer UDP port 2, port and VXLAN VNI 4). Its variant: the
 * shape, with its packet and octet counters in 4 bytes each (reduced-size encoding, RFC 7011
 * section 6.2), or the shape + SECHO_IPFIX_SHAPES when a counter needs 8 (2^32 packets or
 * bytes and more), under template ID SECHO_IPFIX_TID_WIDE + the shape. */
#define SECHO_IPFIX_SHAPES   432
#define SECHO_IPFIX_VARIANTS (2 * SECHO_IPFIX_SHAPES)
#define SECHO_IPFIX_TID_WIDE 2048

/* Data record sizes of the plain templates (fixed-length elements only), and the largest. */
#define SECHO_IPFIX_REC_V4       63 /* 47 of the key and counters, 16 of MACs, TTLs, ToS, flags */
#define SECHO_IPFIX_REC_V6       87
#define SECHO_IPFIX_REC_BI_EXTRA 32 /* the reverse counters, ICMP, TTLs, ToS, flags */
#define SECHO_IPFIX_REC_WIDE     8  /* more with 8-byte counters, per direction */
#define SECHO_IPFIX_REC_OPTIONS  68
#define SECHO_IPFIX_REC_MAX      256

struct secho_ipfix_cfg {
	uint32_t odid; /* Observation Domain ID */
	bool biflow;   /* RFC 5103 records (forward + reverse), else one per direction */
	uint32_t mtu;  /* largest message in bytes: 0 = 1400 (576..65535) */
	uint32_t template_refresh_s; /* UDP: templates again every S seconds; 0 = 60 */
	uint32_t stats_interval_s;   /* statistics record every S seconds; 0 = 60 */
	uint32_t flush_ms;           /* a part-filled message leaves after this; 0 = 500 */
	uint32_t tcp_queue_bytes;    /* TCP: messages kept until acknowledged; 0 = 4 MiB */
	uint32_t backoff_min_ms;     /* TCP reconnect: first wait, doubled up to max; 0 = 100 */
	uint32_t backoff_max_ms;     /* 0 = 10000 */
};

/* Per-collector counters, X(name, help). */
#define SECHO_IPFIX_COUNTERS(X)                                                                    \
	X(records, "flow records sent (handed to the transport)")                                  \
	X(stats_records, "statistics (options) records sent")                                      \
	X(template_records, "template records sent")                                               \
	X(messages, "IPFIX messages sent")                                                         \
	X(bytes, "bytes of IPFIX messages sent")                                                   \
	X(errors, "send, connect and transport errors")                                            \
	X(not_delivered, "flow records dropped: send error, queue full, lost connection")          \
	X(retransmitted, "flow records sent again on a new TCP connection (not acknowledged)")     \
	X(reconnects, "TCP connections established after the first")

struct secho_ipfix_collector_stats {
	char url[96];
	bool connected;        /* TCP: a connection is up; UDP and files: always */
	uint64_t queued_bytes; /* TCP: bytes of messages not yet acknowledged */
#define X(n, h) uint64_t n;
	SECHO_IPFIX_COUNTERS(X)
#undef X
};

struct secho_ipfix_stats {
	unsigned ncollectors;
	struct secho_ipfix_collector_stats c[SECHO_IPFIX_MAX_COLLECTORS];
};

/* What the meter reports about itself in the statistics record (RFC 7011 section 4.1 and
 * the IANA elements named). Totals since start. */
struct secho_ipfix_meter_stats {
	uint64_t observed_flows;  /* observedFlowTotalCount (163) */
	uint64_t ignored_packets; /* ignoredPacketTotalCount (164) */
	uint64_t ignored_octets;  /* ignoredOctetTotalCount (165) */
	uint64_t not_sent_flows;  /* flows the meter itself lost (added to notSentFlowTotalCount) */
};

struct secho_ipfix;

/* Returns 0, -EINVAL (a value out of range), -ENOMEM. */
int secho_ipfix_new(struct secho_ipfix **out, const struct secho_ipfix_cfg *cfg);

/* A collector's URL, parsed: the one grammar of --collector and secho_ipfix_add_collector. */
enum secho_ipfix_transport { SECHO_IPFIX_UDP, SECHO_IPFIX_TCP, SECHO_IPFIX_FILE };
struct secho_ipfix_url {
	enum secho_ipfix_transport transport;
	char host[254];   /* UDP/TCP: a name (letters, digits, '.', '-', '_'; at most 253) or an
	                   * address; an IPv6 address without its brackets */
	char port[6];     /* UDP/TCP: 1-65535, decimal digits; "4739" when omitted */
	const char *path; /* file: the path (points into the URL) */
};

/*
 * Parse "udp://HOST[:PORT]", "tcp://HOST[:PORT]" (HOST a name, an IPv4 address or [IPv6])
 * or "file:PATH" (PATH not empty) into u; nothing is resolved or opened. Returns 0, or
 * -EINVAL with the reason in err (one line that does not repeat the URL, e.g. "the port is
 * not 1-65535").
 */
int secho_ipfix_parse_url(const char *url, struct secho_ipfix_url *u, char *err, size_t errlen);

/*
 * Add a collector: "udp://HOST[:PORT]", "tcp://HOST[:PORT]" (port 4739 when omitted; HOST a
 * name, an IPv4 address or [IPv6]) or "file:PATH" (an IPFIX file, RFC 5655: the messages
 * one after the other; the grammar: secho_ipfix_parse_url). UDP resolves and connects its
 * socket now; TCP starts connecting (a
 * refused connection is retried with backoff, not an error here); a file is created.
 * Returns 0 or -errno with one line in err.
 */
int secho_ipfix_add_collector(struct secho_ipfix *x, const char *url, char *err, size_t errlen);

/* The meter's own counters for the next statistics records. Can't fail. */
void secho_ipfix_set_meter_stats(struct secho_ipfix *x, const struct secho_ipfix_meter_stats *m);

/*
 * Export one flow record to every collector. Templates go first on every stream that has
 * not had them. Returns 0, or -EINVAL for a record that cannot be encoded (ip_version not
 * 4/6). Transport failures are counted per collector, never returned.
 */
int secho_ipfix_record(struct secho_ipfix *x, const struct secho_flow_rec *rec, uint64_t now_ns);

/* Timers and transports: flush part-filled messages older than flush_ms, refresh UDP
 * templates, send statistics when due, send each UDP collector's batch of finished
 * messages (up to 32 wait for it: a message waits at most the interval between ticks),
 * move TCP queues, reconnect. Call it often (at least every flush_ms; the meter: every
 * 100 ms). st (may be NULL) gets the counters. Returns 0. */
int secho_ipfix_tick(struct secho_ipfix *x, uint64_t now_ns, struct secho_ipfix_stats *st);

/* The counters now, without doing anything else (a UDP message still in its batch is
 * counted as sent; whether its send fails is counted when the batch leaves). Can't fail. */
void secho_ipfix_get_stats(const struct secho_ipfix *x, struct secho_ipfix_stats *st);

/*
 * Flush everything, send a last statistics record, and wait, at most timeout_ms: for TCP
 * until the peer has acknowledged every byte (reconnecting if needed), for UDP until the
 * socket has handed every datagram on (its send queue is empty); then close and free.
 * Records still queued at the timeout count as not delivered. final (may be NULL) gets the
 * counters. Returns 0 when every collector got everything, -ETIMEDOUT otherwise.
 */
int secho_ipfix_close(struct secho_ipfix *x, uint64_t now_ns, struct secho_ipfix_stats *final,
                      int timeout_ms);

/* ---- the encoder, for tests and tools ---- */

/* A template set (set ID 2) with the template of variant (0..SECHO_IPFIX_VARIANTS-1; 0 and
 * 1 are the plain IPv4 and IPv6 ones, SECHO_IPFIX_SHAPES and up those with 8-byte counters), or the
 * options template set (set ID 3), into out; returns its length (cap is enough at 512 bytes), 0 for
 * a variant out of range or one no record uses (a tunnel shape without the tunnel bit). */
size_t secho_ipfix_template_set(bool biflow, unsigned variant, uint8_t *out);
size_t secho_ipfix_options_template_set(uint8_t *out);
/* Encode rec's data record for its template (the smallest variant that carries its fields)
 * into out (room for SECHO_IPFIX_REC_MAX bytes): returns the length and sets *tid, or 0 for
 * a record that cannot be encoded. */
size_t secho_ipfix_encode(bool biflow, const struct secho_flow_rec *rec, uint8_t *out,
                          uint16_t *tid);
/* The template set (set ID 2) of rec's variant followed by the elements of the feature sets
 * in carried (src/flow/export/ipfix_feat.h), under template ID tid, into out (room for 1024
 * bytes); returns its length. A record with features goes out as its plain record
 * (secho_ipfix_encode) followed by secho_ipfix_feat_encode()'s bytes, under such a template
 * (IDs from SECHO_IPFIX_TID_FEAT up, one per variant and sets carried, given on first use). */
size_t secho_ipfix_feat_template_set(bool biflow, const struct secho_flow_rec *rec,
                                     uint32_t carried, uint16_t tid, uint8_t *out);

#endif
