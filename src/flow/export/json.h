/*
 * src/flow/export/json.h - the JSON lines exporter: one JSON object per flow record, one record
 * per line (docs/FLOW.md, "JSON records"), for people and scripts.
 *
 *   {"vlan":0,"vlan_inner":0,"ip_version":4,"proto":6,"src":"198.18.0.1",
 *    "dst":"198.18.0.2","sport":40000,"dport":443,"icmp_type":0,"icmp_code":0,
 *    "packets":12,"octets":4711,"first_ns":...,"last_ns":...,"tcp_flags":27,
 *    "rev_packets":10,"rev_octets":9000,"rev_first_ns":...,"rev_last_ns":...,
 *    "rev_tcp_flags":27,"rev_icmp_type":0,"rev_icmp_code":0,
 *    "src_mac":"02:00:00:00:00:01","dst_mac":"02:00:00:00:00:02","ttl_min":64,"ttl_max":64,
 *    "tos":0,"ip_flags":64,"tcp_options":...,"tcp_win":64240,"tcp_mss":1460,
 *    "tcp_syn_size":60,"rev_ttl_min":...,"end_reason":3,"end":"eof"}
 * The rev_* members are left out in uniflow mode; the tcp_* ones for flows that are not TCP;
 * mpls_label_N (rev_mpls_label_N) are there for the labels the first packet carried;
 * tunnel, tun_id, vxlan_id, outer_src, outer_dst, bytes_outer (rev_bytes_outer) for
 * tunnelled flows (docs/FLOW.md, "JSON records"). Lines are written in 64 KiB chunks.
 */
#ifndef SECHO_FLOW_JSON_H
#define SECHO_FLOW_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "flow/export/sink.h"

struct secho_flow_json;

/*
 * Open path for writing ("-" is standard output) and fill *sink with its operations.
 * Returns the exporter, or NULL with a one-line reason in err. The sink's close() flushes
 * and closes the file; secho_flow_json_free() releases the exporter after that.
 */
struct secho_flow_json *secho_flow_json_open(const char *path, bool uniflow,
                                             struct secho_flow_sink *sink, char *err,
                                             size_t errlen);
void secho_flow_json_free(struct secho_flow_json *j);

/* Format one record as a JSON object (no newline) into buf; returns its length, or 0 when
 * cap is too small (SECHO_FLOW_JSON_MAX bytes always suffice). Can't fail otherwise. */
#define SECHO_FLOW_JSON_MAX 2048
/* A record with feature sets' members (--features): room made for it in the buffer; a
 * record whose members do not fit goes out without them. */
#define SECHO_FLOW_JSON_FEAT_MAX (48u * 1024u)
size_t secho_flow_json_format(const struct secho_flow_rec *rec, bool uniflow, char *buf,
                              size_t cap);

/* "idle", "active", "eof", "forced", "resource"; "unknown" otherwise. */
const char *secho_flow_end_name(unsigned reason);

#endif
