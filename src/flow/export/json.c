/*
 * src/flow/export/json.c - the JSON lines exporter (src/flow/export/json.h).
 *
 * Records are formatted into a 64 KiB buffer by hand (integers and addresses only, nothing
 * to escape) and written with write(2) when the buffer fills, at every tick (so a reader
 * of a live run sees records within a second) and at close. A failed write (a closed
 * pipe, a full disk) counts the records of that chunk as not sent and the exporter stops
 * writing; the meter goes on and says so in its summary.
 */
#include "flow/export/json.h"
#include "flow/feature/sets.h"
#include "secho/dissect.h"
#include "secho/fileio.h"
#include "sys/names.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JSON_BUF (64u * 1024u)

struct secho_flow_json {
	int fd;
	bool own_fd;
	bool uniflow;
	bool failed;
	size_t used;
	uint64_t pending; /* records in buf */
	struct secho_flow_sink_stats st;
	char buf[JSON_BUF];
};

static const char *const end_names[] = {"unknown", "idle", "active", "eof", "forced", "resource"};

const char *secho_flow_end_name(unsigned reason)
{
	return SECHO_NAME_AT(end_names, reason, "unknown");
}

/* Append helpers: each returns the new position, or NULL when out of room. */
static char *put_str(char *p, char *end, const char *s)
{
	size_t n = strlen(s);
	if (!p || (size_t)(end - p) < n)
		return NULL;
	while (*s) /* the line is counted, not terminated */
		*p++ = *s++;
	return p;
}

static char *put_u64(char *p, char *end, uint64_t v)
{
	char tmp[24];
	int n = 0;
	if (!p)
		return NULL;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (end - p < n)
		return NULL;
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_kv(char *p, char *end, const char *key, uint64_t v)
{
	return put_u64(put_str(p, end, key), end, v);
}

static char *put_addr(char *p, char *end, const char *key, int ipv, const uint8_t *a)
{
	char s[INET6_ADDRSTRLEN];
	if (!inet_ntop(ipv == 6 ? AF_INET6 : AF_INET, a, s, sizeof(s)))
		s[0] = 0;
	p = put_str(p, end, key);
	p = put_str(p, end, s);
	return put_str(p, end, "\"");
}

static char *put_mac(char *p, char *end, const char *key, const uint8_t *m)
{
	static const char hex[] = "0123456789abcdef";
	char s[18];

	for (unsigned i = 0; i < 6; i++) {
		s[3 * i] = hex[m[i] >> 4];
		s[3 * i + 1] = hex[m[i] & 15];
		s[3 * i + 2] = i < 5 ? ':' : 0;
	}
	p = put_str(p, end, key);
	p = put_str(p, end, s);
	return put_str(p, end, "\"");
}

/* "mpls_label_1":L,... (prefix "" or "rev_"): each entry's label (its top 20 bits), as
 * FlowTest names them. */
static char *put_mpls(char *p, char *end, const char *prefix, const uint8_t (*e)[3], unsigned n)
{
	for (unsigned i = 0; i < n && i < SECHO_FLOW_MPLS_MAX; i++) {
		p = put_str(p, end, ",\"");
		p = put_str(p, end, prefix);
		p = put_kv(p, end, "mpls_label_", i + 1);
		p = put_kv(p, end,
		           "\":", (uint32_t)e[i][0] << 12 | (uint32_t)e[i][1] << 4 | e[i][2] >> 4);
	}
	return p;
}

/* The record's L2-L4 fields (record.h, struct secho_flow_extra; docs/FLOW.md): the TCP ones
 * for TCP flows, the label stacks with labels, the tunnel's with a tunnel. */
static char *put_extra(char *p, char *end, const struct secho_flow_rec *r, bool uniflow)
{
	const struct secho_flow_extra *x = &r->x;
	bool tcp = r->key.proto == 6;

	p = put_mac(p, end, ",\"src_mac\":\"", x->src_mac);
	p = put_mac(p, end, ",\"dst_mac\":\"", x->dst_mac);
	p = put_kv(p, end, ",\"ttl_min\":", x->ttl_min[0]);
	p = put_kv(p, end, ",\"ttl_max\":", x->ttl_max[0]);
	p = put_kv(p, end, ",\"tos\":", x->tos[0]);
	p = put_kv(p, end, ",\"ip_flags\":", x->ip_flags[0]);
	if (tcp) {
		p = put_kv(p, end, ",\"tcp_options\":", x->tcp_options[0]);
		p = put_kv(p, end, ",\"tcp_win\":", x->tcp_win[0]);
		p = put_kv(p, end, ",\"tcp_mss\":", x->tcp_mss[0]);
		p = put_kv(p, end, ",\"tcp_syn_size\":", x->syn_size);
	}
	p = put_mpls(p, end, "", x->mpls[0], x->nmpls[0]);
	if (!uniflow) {
		p = put_kv(p, end, ",\"rev_ttl_min\":", x->ttl_min[1]);
		p = put_kv(p, end, ",\"rev_ttl_max\":", x->ttl_max[1]);
		p = put_kv(p, end, ",\"rev_tos\":", x->tos[1]);
		p = put_kv(p, end, ",\"rev_ip_flags\":", x->ip_flags[1]);
		if (tcp) {
			p = put_kv(p, end, ",\"rev_tcp_options\":", x->tcp_options[1]);
			p = put_kv(p, end, ",\"rev_tcp_win\":", x->tcp_win[1]);
			p = put_kv(p, end, ",\"rev_tcp_mss\":", x->tcp_mss[1]);
		}
		p = put_mpls(p, end, "rev_", x->mpls[1], x->nmpls[1]);
	}
	if (!r->key.tun_type) /* tunnel_type, tunnel_id: with the key */
		return p;
	if (r->key.tun_type == SECHO_TUN_VXLAN)
		p = put_kv(p, end, ",\"vxlan_id\":", r->key.tun_id);
	if (x->outer_ip_version == 4 || x->outer_ip_version == 6) {
		p = put_addr(p, end, ",\"outer_src\":\"", x->outer_ip_version, x->outer_src);
		p = put_addr(p, end, ",\"outer_dst\":\"", x->outer_ip_version, x->outer_dst);
	}
	p = put_kv(p, end, ",\"bytes_outer\":", x->bytes_outer[0]);
	if (!uniflow)
		p = put_kv(p, end, ",\"rev_bytes_outer\":", x->bytes_outer[1]);
	return p;
}

size_t secho_flow_json_format(const struct secho_flow_rec *r, bool uniflow, char *buf, size_t cap)
{
	char *p = buf, *end = buf + cap;
	const struct secho_flow_key *k = &r->key;

	p = put_kv(p, end, "{\"vlan\":", k->vlan);
	p = put_kv(p, end, ",\"vlan_inner\":", k->vlan_inner);
	p = put_kv(p, end, ",\"ip_version\":", k->ip_version);
	p = put_kv(p, end, ",\"proto\":", k->proto);
	p = put_addr(p, end, ",\"src\":\"", k->ip_version, k->src);
	p = put_addr(p, end, ",\"dst\":\"", k->ip_version, k->dst);
	p = put_kv(p, end, ",\"sport\":", k->sport);
	p = put_kv(p, end, ",\"dport\":", k->dport);
	p = put_kv(p, end, ",\"icmp_type\":", k->icmp_type_code >> 8);
	p = put_kv(p, end, ",\"icmp_code\":", k->icmp_type_code & 0xff);
	if (k->tun_type) {
		p = put_str(p, end, ",\"tunnel_type\":\"");
		p = put_str(p, end, secho_tun_name(k->tun_type));
		p = put_kv(p, end, "\",\"tunnel_id\":", k->tun_id);
	}
	p = put_kv(p, end, ",\"packets\":", r->fwd.packets);
	p = put_kv(p, end, ",\"octets\":", r->fwd.octets);
	p = put_kv(p, end, ",\"first_ns\":", r->fwd.first_ns);
	p = put_kv(p, end, ",\"last_ns\":", r->fwd.last_ns);
	p = put_kv(p, end, ",\"tcp_flags\":", r->fwd.tcp_flags);
	if (!uniflow) {
		p = put_kv(p, end, ",\"rev_packets\":", r->rev.packets);
		p = put_kv(p, end, ",\"rev_octets\":", r->rev.octets);
		p = put_kv(p, end, ",\"rev_first_ns\":", r->rev.first_ns);
		p = put_kv(p, end, ",\"rev_last_ns\":", r->rev.last_ns);
		p = put_kv(p, end, ",\"rev_tcp_flags\":", r->rev.tcp_flags);
		uint16_t ri = secho_flow_rec_rev_icmp(r);
		p = put_kv(p, end, ",\"rev_icmp_type\":", ri >> 8);
		p = put_kv(p, end, ",\"rev_icmp_code\":", ri & 0xff);
	}
	p = put_extra(p, end, r, uniflow);
	/* the feature sets' members (src/flow/feature/sets.h): a set not live in the record
	 * writes what a set that found nothing writes */
	if (r->feat_layout && p) {
		int n = secho_feat_sets_json(
		        r->feat_layout, r->feat_sec, r->feat_live, r->fwd.packets + r->rev.packets,
		        (uint8_t)(r->fwd.tcp_flags | r->rev.tcp_flags), p, (size_t)(end - p));
		p = n < 0 ? NULL : p + n;
	}
	p = put_kv(p, end, ",\"end_reason\":", r->end_reason);
	p = put_str(p, end, ",\"end\":\"");
	p = put_str(p, end, secho_flow_end_name(r->end_reason));
	p = put_str(p, end, "\"}");
	return p ? (size_t)(p - buf) : 0;
}

static int json_flush(struct secho_flow_json *j)
{
	if (!j->used)
		return 0;
	int r = j->failed ? -EIO : secho_write_all(j->fd, j->buf, j->used);
	if (r) {
		if (!j->failed)
			j->st.errors++;
		j->failed = true;
		j->st.not_delivered += j->pending;
	} else {
		j->st.messages++;
	}
	j->used = 0;
	j->pending = 0;
	return r;
}

static int json_record(void *ctx, const struct secho_flow_rec *rec, uint64_t now_ns)
{
	struct secho_flow_json *j = ctx;
	(void)now_ns;
	size_t room = rec->feat_layout ? SECHO_FLOW_JSON_FEAT_MAX : SECHO_FLOW_JSON_MAX;
	if (JSON_BUF - j->used < room)
		json_flush(j);
	size_t n =
	        secho_flow_json_format(rec, j->uniflow, j->buf + j->used, JSON_BUF - j->used - 1);
	if (!n && rec->feat_layout) { /* its feature members did not fit: the record without them */
		struct secho_flow_rec bare = *rec;
		bare.feat_layout = NULL;
		n = secho_flow_json_format(&bare, j->uniflow, j->buf + j->used,
		                           JSON_BUF - j->used - 1);
	}
	j->buf[j->used + n] = '\n';
	j->used += n + 1;
	j->pending++;
	j->st.records++;
	return j->failed ? -EIO : 0;
}

static void json_tick(void *ctx, uint64_t now_ns, const struct secho_flow_totals *tot)
{
	(void)now_ns;
	(void)tot;
	json_flush(ctx);
}

static int json_close(void *ctx, uint64_t now_ns, const struct secho_flow_totals *tot,
                      int timeout_ms)
{
	struct secho_flow_json *j = ctx;
	(void)now_ns;
	(void)tot;
	(void)timeout_ms;
	int r = json_flush(j);
	if (j->own_fd && close(j->fd) && !r) {
		r = -errno;
		j->st.errors++;
	}
	return j->failed ? -EIO : r;
}

static unsigned json_stats(void *ctx, struct secho_flow_sink_stats *rows, unsigned max)
{
	const struct secho_flow_json *j = ctx;
	if (!max)
		return 0;
	rows[0] = j->st;
	return 1;
}

static const struct secho_flow_sink_ops json_ops = {
        .record = json_record,
        .tick = json_tick,
        .close = json_close,
        .stats = json_stats,
};

struct secho_flow_json *secho_flow_json_open(const char *path, bool uniflow,
                                             struct secho_flow_sink *sink, char *err, size_t errlen)
{
	struct secho_flow_json *j = calloc(1, sizeof(*j));
	if (!j) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (!strcmp(path, "-")) {
		j->fd = STDOUT_FILENO;
	} else {
		j->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (j->fd < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			free(j);
			return NULL;
		}
		j->own_fd = true;
	}
	j->uniflow = uniflow;
	sink->ops = &json_ops;
	sink->ctx = j;
	snprintf(j->st.name, sizeof(j->st.name), "json:%s", path);
	snprintf(sink->name, sizeof(sink->name), "%s", j->st.name);
	return j;
}

void secho_flow_json_free(struct secho_flow_json *j)
{
	free(j);
}
