/* src/endpoint/counters.c - see counters.h. */
#include "endpoint/counters.h"
#include "sys/names.h"

static const char *const pipe_names[] = {SECHO_PIPE_DROPS(SECHO_X_ID)};

const char *secho_pipe_drop_name(enum secho_pipe_drop d)
{
	return SECHO_NAME_AT(pipe_names, d, "unknown");
}

static inline uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void secho_counters_sum(struct secho_counters *into, const struct secho_counters *from,
                        struct secho_counters_brief *brief)
{
	struct secho_counters_brief b = {0};
	b.rx_frames = ld(&from->rx_frames);
	b.tx_frames = ld(&from->tx_frames);
	into->rx_frames += b.rx_frames;
	into->tx_frames += b.tx_frames;
	into->reports += ld(&from->reports);
	for (unsigned i = 0; i < SECHO_WIRE_VERDICT_COUNT; i++) {
		uint64_t v = ld(&from->verdict[i]);
		into->verdict[i] += v;
		if (i != SECHO_WIRE_OK && i != SECHO_WIRE_ARP) /* as secho_counters_drops */
			b.drops += v;
	}
	for (unsigned i = 0; i < SECHO_PIPE_DROP_COUNT; i++) {
		uint64_t v = ld(&from->drop[i]);
		into->drop[i] += v;
		b.drops += v;
	}
	for (unsigned e = 0; e < SECHO_ENG_COUNT; e++) {
		b.packets[e] = ld(&from->eng[e].packets);
		into->eng[e].packets += b.packets[e];
		into->eng[e].bytes += ld(&from->eng[e].bytes);
		into->eng[e].dp_cycles += ld(&from->eng[e].dp_cycles);
		secho_lat_merge(&into->eng[e].lat, &from->eng[e].lat);
	}
	if (brief)
		*brief = b;
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
