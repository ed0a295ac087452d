/*
 * src/traffic/gen.h - the seeded traffic generator: Ethernet frames in time order, and the
 * ground truth a flow meter must report for them (docs/FLOW.md, "The traffic generator").
 *
 * A generator is built from a profile (a built-in name or a FlowTest ft-generator CSV
 * profile) and a seed; secho_gen_next() then hands out one frame at a time, in strictly
 * increasing time, and calls the flow callback each time a unidirectional flow has sent its
 * last packet. The same profile, packet count and seed give the same frames and the same
 * flows, byte for byte, on every machine. Memory is bounded by the connections alive at
 * once (and, for a CSV profile, its rows), never by the number of packets: a replay tool or
 * a benchmark can pull frames straight from it.
 *
 * secho_gen_write() is the file writer on top (`secho flow gen`): a classic libpcap file
 * (microsecond timestamps, Ethernet link type) and OUT.truth.csv.
 *
 * Contract of a flow (what the truth promises a meter with the default timeouts, inactive
 * 30 s and active 300 s, and TCP-end handling): no flow spans more than 240 s, no two of
 * its consecutive packets are more than 20 s apart, no packet follows a FIN or RST in the
 * same key (a SYN then starts a new connection, a new flow), and a key used again after a
 * flow ended (idle reuse) waits at least 45 s. Keys are otherwise unique in the file, also
 * with the direction reversed, so biflow and uniflow meters both see each flow whole.
 */
#ifndef SECHO_FLOW_GEN_H
#define SECHO_FLOW_GEN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flow/core/record.h"

/* The most an encapsulation adds to a frame (--encap: Geneve with an option over IPv6 and
 * the inner Ethernet header, 78 bytes). */
#define SECHO_GEN_MAX_ENCAP 80u
/* The largest frame the generator writes (a 9000-byte IP packet behind two VLAN tags, in
 * an encapsulation). Far below 65535: no outer IP length can overflow. */
#define SECHO_GEN_MAX_FRAME (9022u + SECHO_GEN_MAX_ENCAP)

/* Time of the first packet of every file: 2026-01-01T00:00:00Z, in ns since the epoch. */
#define SECHO_GEN_EPOCH_NS 1767225600000000000ull

/*
 * Counters of what was generated, X(name, help). Every frame is exactly one of: a packet of
 * a truth flow, malformed, non-IP, or an orphan fragment.
 */
#define SECHO_GEN_TOTALS(X)                                                                        \
	X(packets, "frames written")                                                               \
	X(frame_bytes, "bytes of the frames as on the wire (pcap original length)")                \
	X(flows, "unidirectional flows in the truth")                                              \
	X(flow_packets, "frames that belong to a truth flow")                                      \
	X(flow_octets, "sum of the truth flows' octets (IP total lengths)")                        \
	X(connections, "connections (biflows) started")                                            \
	X(fragments, "IP fragments that belong to a flow (first and later)")                       \
	X(orphan_fragments, "later IP fragments whose first fragment never comes: in no flow")     \
	X(malformed, "frames with a broken IP, TCP or VLAN header: in no flow")                    \
	X(non_ip, "frames of other EtherTypes (ARP, unknown): in no flow")                         \
	X(snap_truncated, "flow frames captured shorter than sent (pcap caplen < len)")            \
	X(csv_rows, "FlowTest profile rows read")                                                  \
	X(csv_time_adjusted, "profile rows shortened to fit the timeouts (span, gaps)")            \
	X(csv_bytes_adjusted, "profile rows whose bytes could not be met with their packets")      \
	X(csv_key_adjusted, "profile rows moved to a free source port or later start (key clash)")

/* Why a malformed frame is malformed (the truth's `# malformed_NAME=` lines). */
#define SECHO_GEN_MALFORMED(X)                                                                     \
	X(eth_short, "frame shorter than an Ethernet header")                                      \
	X(vlan_short, "802.1Q tag cut off")                                                        \
	X(ip4_short, "IPv4 header cut off (fewer than 20 bytes)")                                  \
	X(ip4_version, "EtherType IPv4 but IP version 6")                                          \
	X(ip4_ihl, "IPv4 header length below 5 words")                                             \
	X(ip4_ihl_long, "IPv4 header length beyond the total length")                              \
	X(ip4_len_short, "IPv4 total length below the header length")                              \
	X(ip4_len_long, "IPv4 total length beyond the frame")                                      \
	X(ip6_short, "IPv6 header cut off (fewer than 40 bytes)")                                  \
	X(ip6_len_long, "IPv6 payload length beyond the frame")                                    \
	X(ip6_ext_long, "IPv6 extension header chain runs past the payload")                       \
	X(tcp_short, "TCP header cut off")                                                         \
	X(tcp_doff, "TCP data offset below 5 words")                                               \
	X(udp_short, "UDP header cut off")

enum secho_gen_malformed_id {
#define X(n, h) SECHO_GEN_MAL_##n,
	SECHO_GEN_MALFORMED(X)
#undef X
	        SECHO_GEN_MAL_COUNT
};

struct secho_gen_totals {
#define X(n, h) uint64_t n;
	SECHO_GEN_TOTALS(X)
#undef X
	uint64_t malformed_by[SECHO_GEN_MAL_COUNT];
};

/* One unidirectional flow of the truth: its key (record.h) and its counters. */
struct secho_gen_flow {
	struct secho_flow_key key; /* tun_type, tun_id: the tunnel it came in (--encap) */
	struct secho_flow_dir dir;
	uint64_t bytes_outer; /* sum of the outermost IP packets' lengths (dir.octets counts the
	                       * inner ones); 0 when not in an IP tunnel (none, MPLS, PPPoE,
	                       * Ethernet over MPLS) */
	/* --app (cfg.apps): the connection's application (SECHO_GEN_APP_*, gen_app.h) and the
	 * feature fields a meter must report, JSON (secho_gen_app_truth); NULL without --app.
	 * Valid while the callback runs. */
	uint8_t app;
	const char *app_json;
};

/* Called once per flow, after its last packet was handed out (so in order of flow end). */
typedef void (*secho_gen_flow_fn)(void *ctx, const struct secho_gen_flow *flow);

struct secho_gen_cfg {
	const char *profile; /* conformance, heavy, light, geant, nix, short, or a FILE ending in
	                        .csv */
	uint64_t packets;    /* 0: the profile's default (see secho_gen_profiles) */
	uint64_t seed;
	const char *encap; /* KIND[:ID] wrapping every flow frame (secho_gen_encap_check); NULL:
	                      none */
	unsigned apps;     /* --app: 1 << SECHO_GEN_APP_* (gen_app.h) of the applications TCP and
	                      UDP connections carry (secho_gen_app_parse); 0: none, zero payloads */
	secho_gen_flow_fn on_flow; /* may be NULL */
	void *ctx;
	/* secho_gen_write: when it becomes non-zero (a signal handler sets it), the writer
	 * stops, removes its temporary files and returns -EINTR. May be NULL. */
	const volatile sig_atomic_t *stop;
};

/* One frame: data points into the generator, valid until the next secho_gen_next(). */
struct secho_gen_frame {
	uint64_t ts_ns;      /* always a whole microsecond, strictly increasing */
	const uint8_t *data; /* caplen bytes */
	uint32_t caplen;     /* bytes captured */
	uint32_t len;        /* bytes on the wire (larger than caplen for snap-truncated frames) */
};

struct secho_gen;

/* Built-in profiles: name, default packet count, one line of description. */
struct secho_gen_profile_info {
	const char *name;
	uint64_t default_packets;
	const char *help;
};
extern const struct secho_gen_profile_info secho_gen_profiles[];
extern const size_t secho_gen_nprofiles;

/*
 * Build a generator. A CSV profile is read whole here (rows sorted by start time).
 * Returns 0, or -EINVAL (unknown profile; a bad CSV row: err says "FILE:LINE: reason"),
 * -ENOENT etc. (the file), -ENOMEM. err always gets one line on failure.
 */
int secho_gen_new(struct secho_gen **out, const struct secho_gen_cfg *cfg, char *err,
                  size_t errlen);
/* The next frame. Returns 1 (frame filled), 0 at the end (every flow reported). */
int secho_gen_next(struct secho_gen *g, struct secho_gen_frame *f);
/* Totals so far (complete once secho_gen_next returned 0). Can't fail. */
void secho_gen_get_totals(const struct secho_gen *g, struct secho_gen_totals *t);
void secho_gen_free(struct secho_gen *g);

/* Names for the counters (the truth's comment lines). */
const char *secho_gen_malformed_name(unsigned id);

/*
 * Read a FlowTest ft-generator profile from f (name for messages). Used by secho_gen_new;
 * exposed for tests. Rows are kept in *rows (malloc'd, caller frees), sorted by start time
 * (stable), times rebased so the earliest row starts at 0. Returns 0, -EINVAL with
 * "NAME:LINE: reason" in err for the first bad line, -ENOMEM, or -EIO.
 */
struct secho_gen_csv_row {
	int64_t start_us, end_us; /* relative to the earliest row after reading */
	uint64_t packets, bytes, packets_rev, bytes_rev;
	uint16_t sport, dport;
	uint8_t ip_version, proto;
	uint8_t has_src, has_dst; /* addresses given in the row */
	uint8_t src[16], dst[16];
	uint32_t line;
};
int secho_gen_csv_read(FILE *f, const char *name, struct secho_gen_csv_row **rows, size_t *nrows,
                       char *err, size_t errlen);

/*
 * Write the whole output: a pcap file at pcap_path and its truth at truth_path (header,
 * one line per flow, `# key=value` totals). Each target must be new or a regular file
 * (secho_file_check_target: a device node, a link, a FIFO or a directory is refused with
 * -EINVAL). Files are written under temporary names (created new, never through a link)
 * and renamed when complete, so a failed or stopped run (cfg->stop) leaves nothing behind. Returns
 * 0 or -errno with err filled; *totals (may be NULL) gets the totals.
 */
int secho_gen_write(const struct secho_gen_cfg *cfg, const char *pcap_path, const char *truth_path,
                    struct secho_gen_totals *totals, char *err, size_t errlen);

/*
 * Encapsulations (--encap KIND[:ID], docs/FLOW.md "The traffic generator"): mpls and mpls2
 * (one or two labels, ID the top label, default 16), pppoe (session, default 1), gre (ID:
 * the key; none without), erspan (type II, session 0..1023, default 1), vxlan and geneve
 * (VNI, default 100), gtpu (TEID, default 1), ipip (outer version = inner), ipip4 and ipip6
 * (outer IPv4 / IPv6 whatever the inner: 6in4, 4in6), eompls (Ethernet over MPLS with a
 * control word, ID the label). Returns 0, or -EINVAL with the reason in err.
 */
int secho_gen_encap_check(const char *spec, char *err, size_t errlen);

/* Whether the generator's flows come in tunnels (--encap or the encap profile): the truth
 * then has the tunnel columns. */
int secho_gen_has_tunnels(const struct secho_gen *g);

/* The truth file's header line (no newline) and one flow as a line (no newline). With
 * tunnels, three more columns: tunnel_type (secho_tun_name), tunnel_id, bytes_outer. A
 * reader takes a file of 15 columns as one without tunnels. */
int secho_gen_has_apps(const struct secho_gen *g);
/* Parse --app's LIST (tls, quic, dns, http, all; comma-separated) into *apps. 0, or -EINVAL
 * with the reason in err. */
int secho_gen_app_parse(const char *list, unsigned *apps, char *err, size_t errlen);

/* With --app the truth has two more columns, after the tunnel columns when there are
 * any: app (secho_gen_app_name) and features, a JSON object that runs to the end of the
 * line (it holds commas): docs/FLOW.md, "Application payloads". */
extern const char secho_gen_truth_header[];
extern const char secho_gen_truth_header_tun[];
int secho_gen_truth_line(char *buf, size_t n, const struct secho_gen_flow *fl);
int secho_gen_truth_line_tun(char *buf, size_t n, const struct secho_gen_flow *fl);

#endif
