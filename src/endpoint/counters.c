/* src/endpoint/counters.c - see counters.h. */
#include "endpoint/counters.h"

static const char *const pipe_names[] = {
#define SECHO_PIPE_X(name, id, text) id,
        SECHO_PIPE_DROPS(SECHO_PIPE_X)
#undef SECHO_PIPE_X
};

const char *secho_pipe_drop_name(enum secho_pipe_drop d)
{
	return (unsigned)d < SECHO_PIPE_DROP_COUNT ? pipe_names[d] : "unknown";
}

void secho_counters_sum(struct secho_counters *into, const struct secho_counters *from)
{
	into->rx_frames += from->rx_frames;
	into->tx_frames += from->tx_frames;
	into->reports += from->reports;
	for (unsigned i = 0; i < SECHO_WIRE_VERDICT_COUNT; i++)
		into->verdict[i] += from->verdict[i];
	for (unsigned i = 0; i < SECHO_PIPE_DROP_COUNT; i++)
		into->drop[i] += from->drop[i];
	for (unsigned e = 0; e < SECHO_ENG_COUNT; e++) {
		into->eng[e].packets += from->eng[e].packets;
		into->eng[e].bytes += from->eng[e].bytes;
		into->eng[e].dp_cycles += from->eng[e].dp_cycles;
		secho_lat_merge(&into->eng[e].lat, &from->eng[e].lat);
	}
}

uint64_t secho_counters_drops(const struct secho_counters *c)
{
	uint64_t d = 0;
	for (unsigned i = 1; i < SECHO_WIRE_VERDICT_COUNT; i++)
		if (i != SECHO_WIRE_ARP) /* ARP frames are answered (or counted arp_ignored) */
			d += c->verdict[i];
	for (unsigned i = 0; i < SECHO_PIPE_DROP_COUNT; i++)
		d += c->drop[i];
	return d;
}
