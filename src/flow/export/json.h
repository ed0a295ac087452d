/*
 * src/flow/export/json.h - the JSON lines exporter: one JSON object per flow record, one record
 * per line (docs/FLOW.md, "JSON records"), for people and scripts.
 *
 *   {"vlan":0,"vlan_inner":0,"ip_version":4,"proto":6,"src":"198.18.0.1",
 *    "dst":"198.18.0.2","sport":40000,"dport":443,"icmp_type":0,"icmp_code":0,
 *    "packets":12,"octets":4711,"first_ns":...,"last_ns":...,"tcp_flags":27,
 *    "rev_packets":10,"rev_octets":9000,"rev_first_ns":...,"rev_last_ns":...,
 *    "rev_tcp_flags":27,"end_reason":3,"end":"eof"}
 *
 * The rev_* members are left out in uniflow mode. Lines are written in 64 KiB chunks.
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
 * cap is too small (512 bytes always suffice). Can't fail otherwise. */
size_t secho_flow_json_format(const struct secho_flow_rec *rec, bool uniflow, char *buf,
                              size_t cap);

/* "idle", "active", "eof", "forced", "resource"; "unknown" otherwise. */
const char *secho_flow_end_name(unsigned reason);

#endif
