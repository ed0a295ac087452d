/*
 * src/flow/export/ipfix_sink.c - the meter's IPFIX sink (contract: src/flow/export/ipfix_sink.h).
 */
#include "flow/export/ipfix_sink.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sys/clock.h"

struct secho_flow_ipfix {
	struct secho_ipfix *x;       /* NULL once closed */
	struct secho_ipfix_stats st; /* the final counters, after close */
};

static void meter_stats(struct secho_ipfix *x, const struct secho_flow_totals *tot)
{
	struct secho_ipfix_meter_stats m = {
	        .observed_flows = tot->observed_flows,
	        .ignored_packets = tot->ignored_packets + tot->dropped_packets,
	        .ignored_octets = tot->ignored_octets,
	        .not_sent_flows = 0, /* no record is lost between the tables and the sinks */
	};
	secho_ipfix_set_meter_stats(x, &m);
}

static int ipfix_record(void *ctx, const struct secho_flow_rec *rec, uint64_t now_ns)
{
	struct secho_flow_ipfix *s = ctx;
	return s->x ? secho_ipfix_record(s->x, rec, now_ns) : -EBADF;
}

static void ipfix_tick(void *ctx, uint64_t now_ns, const struct secho_flow_totals *tot)
{
	struct secho_flow_ipfix *s = ctx;
	if (!s->x)
		return;
	meter_stats(s->x, tot);
	secho_ipfix_tick(s->x, now_ns, NULL);
}

static int ipfix_close(void *ctx, uint64_t now_ns, const struct secho_flow_totals *tot,
                       int timeout_ms)
{
	struct secho_flow_ipfix *s = ctx;
	if (!s->x)
		return -EBADF;
	meter_stats(s->x, tot);
	int r = secho_ipfix_close(s->x, now_ns, &s->st, timeout_ms);
	s->x = NULL;
	return r;
}

static unsigned ipfix_stats(void *ctx, struct secho_flow_sink_stats *rows, unsigned max)
{
	struct secho_flow_ipfix *s = ctx;
	struct secho_ipfix_stats live;
	const struct secho_ipfix_stats *st = &s->st;

	if (s->x) {
		secho_ipfix_get_stats(s->x, &live);
		st = &live;
	}
	unsigned n = st->ncollectors < max ? st->ncollectors : max;
	for (unsigned i = 0; i < n; i++) {
		const struct secho_ipfix_collector_stats *c = &st->c[i];
		struct secho_flow_sink_stats *r = &rows[i];
		memset(r, 0, sizeof(*r));
		snprintf(r->name, sizeof(r->name), "ipfix:%s", c->url);
		r->records = c->records;
		r->messages = c->messages;
		r->errors = c->errors;
		r->not_delivered = c->not_delivered;
		r->reconnects = c->reconnects;
		r->delivery_unknown = !strncmp(c->url, "udp://", 6);
	}
	return n;
}

static const struct secho_flow_sink_ops ipfix_ops = {
        .record = ipfix_record,
        .tick = ipfix_tick,
        .close = ipfix_close,
        .stats = ipfix_stats,
};

int secho_flow_ipfix_open(struct secho_flow_ipfix **out, const struct secho_ipfix_cfg *cfg,
                          const char *const *urls, unsigned n, struct secho_flow_sink *sink,
                          char *err, size_t errlen)
{
	*out = NULL;
	if (!n || n > SECHO_IPFIX_MAX_COLLECTORS) {
		snprintf(err, errlen, "1 to %d collectors", SECHO_IPFIX_MAX_COLLECTORS);
		return -EINVAL;
	}
	struct secho_flow_ipfix *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	int r = secho_ipfix_new(&s->x, cfg);
	if (r) {
		snprintf(err, errlen, "%s",
		         r == -EINVAL ? "IPFIX configuration out of range" : strerror(-r));
		free(s);
		return r;
	}
	for (unsigned i = 0; i < n; i++) {
		r = secho_ipfix_add_collector(s->x, urls[i], err, errlen);
		if (r) {
			secho_flow_ipfix_free(s);
			return r;
		}
	}
	sink->ops = &ipfix_ops;
	sink->ctx = s;
	if (n == 1)
		snprintf(sink->name, sizeof(sink->name), "ipfix:%s", urls[0]);
	else
		snprintf(sink->name, sizeof(sink->name), "ipfix: %u collectors", n);
	*out = s;
	return 0;
}

void secho_flow_ipfix_free(struct secho_flow_ipfix *s)
{
	if (!s)
		return;
	if (s->x)
		secho_ipfix_close(s->x, secho_real_ns(), NULL, 0);
	free(s);
}
