/*
 * src/flow/export/ipfix_sink.h - the meter's IPFIX sink (src/flow/export/sink.h): one exporter
 * (src/flow/export/ipfix.h) with every collector of the command line, so that each record is
 * encoded once and each collector gets it with its own template stream and sequence
 * numbers.
 *
 *   record   secho_ipfix_record()
 *   tick     the meter's totals into the exporter's statistics record (observedFlowTotal-
 *            Count, ignoredPacketTotalCount, ignoredOctetTotalCount, notSentFlowTotalCount),
 *            then secho_ipfix_tick()
 *   close    the final totals, then secho_ipfix_close() with its bounded wait (UDP: until
 *            the socket has handed every datagram on; TCP: until the collector has
 *            acknowledged every byte); the final per-collector counters are kept
 *   stats    one row per collector: records, messages, errors, not delivered, reconnects
 *
 * ignoredPacketTotalCount is the frames the meter put in no flow plus the frames the kernel
 * dropped before the meter saw them (live); ignoredOctetTotalCount counts only the former
 * (the kernel does not say how long the frames it dropped were). notSentFlowTotalCount is
 * what each collector's transport could not deliver: the meter itself loses no record
 * between its tables and its sinks (a full ring makes a worker wait).
 */
#ifndef SECHO_FLOW_IPFIX_SINK_H
#define SECHO_FLOW_IPFIX_SINK_H

#include <stddef.h>

#include "flow/export/ipfix.h"
#include "flow/export/sink.h"

struct secho_flow_ipfix;

/*
 * An exporter with cfg and the n collectors urls[] (udp://, tcp://, file:, see
 * secho_ipfix_add_collector), and *sink filled with its operations. Returns 0 with *out
 * set, or -errno with one line in err: -EINVAL for a bad URL or configuration (a host that
 * does not resolve too), else the error of the collector that could not be set up.
 */
int secho_flow_ipfix_open(struct secho_flow_ipfix **out, const struct secho_ipfix_cfg *cfg,
                          const char *const *urls, unsigned n, struct secho_flow_sink *sink,
                          char *err, size_t errlen);

/* Release (closing the exporter without waiting if the sink was never closed). NULL is
 * fine. Can't fail. */
void secho_flow_ipfix_free(struct secho_flow_ipfix *s);

#endif
