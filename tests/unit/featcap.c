/*
 * tests/unit/featcap.c - a capture's flows fed to a feature set (tests/unit/featcap.h).
 */
#include "featcap.h"

#include <secho/capfile.h>
#include <secho/dissect.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct fkey {
	uint8_t ipv, proto;
	uint16_t sport, dport;
	uint8_t src[16], dst[16];
};

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int featcap_run(const char *path, featcap_fn fn, void *arg, char *err, size_t errlen)
{
	static struct fkey keys[FEATCAP_MAX_FLOWS];
	unsigned nflows = 0;
	struct secho_capfile c;
	struct secho_cap_rec r;
	int rc = secho_capfile_open(&c, path, err, errlen);
	if (rc)
		return rc;
	while (secho_capfile_next(&c, &r)) {
		struct secho_dissect d;
		if (secho_dissect_snap(r.data, r.caplen, r.wirelen, &d) != SECHO_DISSECT_OK)
			continue;
		if (!(d.flags & SECHO_DISSECT_F_L4) || (d.proto != 6 && d.proto != 17))
			continue;
		size_t hl = d.proto == 6 ? d.tcp_doff : 8;
		size_t off = (size_t)d.l4_off + hl;
		if (off > r.caplen || hl > d.l4_len)
			continue;
		size_t alen = d.ip_version == 4 ? 4 : 16;
		struct fkey k = {
		        .ipv = d.ip_version, .proto = d.proto, .sport = d.sport, .dport = d.dport};
		memcpy(k.src, r.data + d.addr_off, alen);
		memcpy(k.dst, r.data + d.addr_off + alen, alen);
		unsigned f;
		uint8_t dir = SECHO_FEAT_FWD;
		for (f = 0; f < nflows; f++) {
			const struct fkey *o = &keys[f];
			if (o->ipv != k.ipv || o->proto != k.proto)
				continue;
			if (o->sport == k.sport && o->dport == k.dport &&
			    !memcmp(o->src, k.src, 16) && !memcmp(o->dst, k.dst, 16))
				break;
			if (o->sport == k.dport && o->dport == k.sport &&
			    !memcmp(o->src, k.dst, 16) && !memcmp(o->dst, k.src, 16)) {
				dir = SECHO_FEAT_REV;
				break;
			}
		}
		if (f == nflows) {
			if (nflows == FEATCAP_MAX_FLOWS) {
				snprintf(err, errlen, "%s: more than %d flows", path,
				         FEATCAP_MAX_FLOWS);
				secho_capfile_close(&c);
				return -E2BIG;
			}
			keys[nflows++] = k;
		}
		uint32_t wire = d.l4_len - (uint32_t)hl;
		uint32_t got = (uint32_t)(r.caplen - off);
		struct secho_feat_pkt p = {
		        .payload = r.data + off,
		        .len = got < wire ? got : wire,
		        .wire_len = wire,
		        .ts_ns = r.ts_ns,
		        .ip_len = d.ip_len,
		        .tcp_seq = d.proto == 6 ? rd32(r.data + d.l4_off + 4) : 0,
		        .sport = d.sport,
		        .dport = d.dport,
		        .proto = d.proto,
		        .dir = dir,
		        .tcp_flags = d.proto == 6 ? d.tcp_flags : 0,
		};
		fn(arg, f, &p);
	}
	const char *e = secho_capfile_error(&c);
	if (e && *e) {
		snprintf(err, errlen, "%s", e);
		secho_capfile_close(&c);
		return -EBADMSG;
	}
	secho_capfile_close(&c);
	return (int)nflows;
}

struct print_arg {
	featcap_fn fn;
	struct secho_feat_pkt first[FEATCAP_MAX_FLOWS];
	unsigned pkts[FEATCAP_MAX_FLOWS];
};

static void print_fn(void *arg, unsigned flow, const struct secho_feat_pkt *p)
{
	struct print_arg *a = arg;
	if (!a->pkts[flow]++)
		a->first[flow] = *p;
	a->fn(NULL, flow, p);
}

int featcap_print(const char *path, featcap_fn fn,
                  int (*members)(unsigned flow, char *buf, size_t cap))
{
	static struct print_arg a;
	static char js[1 << 16];
	char err[256];
	memset(&a, 0, sizeof(a));
	a.fn = fn;
	int n = featcap_run(path, print_fn, &a, err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	for (int f = 0; f < n; f++) {
		if (members((unsigned)f, js, sizeof(js)) < 0)
			return 1;
		printf("{\"flow\":%d,\"proto\":%u,\"sport\":%u,\"dport\":%u,\"packets\":%u%s}\n", f,
		       a.first[f].proto, a.first[f].sport, a.first[f].dport, a.pkts[f], js);
	}
	return 0;
}
