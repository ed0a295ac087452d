/*
 * src/host/session.c - the machinery under every `secho host` subcommand. Contract:
 * src/host/session.h.
 */
#include "host/session.h"
#include "sys/err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const secho_path_names[SECHO_NPATH] = {"streaming", "offload", "counters"};

void secho_host_opts_default(struct secho_host_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port_stream = 4000;
	o->port_offload = 4001;
	o->port_counters = 4002;
	o->count = 500;
	o->size = -1;
	o->mtu = SECHO_WIRE_DEFAULT_MTU;
	o->timeout_ms = 200;
	o->deadline_s = 120;
	o->seconds = 5;
	o->path = SECHO_PATH_BOTH;
	o->window = 256;
}

/* splitmix64: a fast, well-mixed stream for payload bytes; not a secret. */
static uint64_t mix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void secho_sess_payload(const struct secho_sess *s, uint64_t id, size_t len, uint8_t *out)
{
	uint64_t st = id ^ s->seed, w = 0;
	size_t i = 0;

	if (len >= 8) {
		for (; i < 8; i++)
			out[i] = (uint8_t)(id >> (56 - 8 * i));
	}
	for (; i < len; i++) {
		if ((i & 7) == 0 || w == 0)
			w = mix64(&st);
		out[i] = (uint8_t)w;
		w >>= 8;
	}
}

size_t secho_sess_size(struct secho_sess *s)
{
	uint64_t st;
	size_t max = s->o->mtu - SECHO_WIRE_OVERHEAD_IP;

	if (s->o->size >= 0)
		return (size_t)s->o->size;
	st = s->seed ^ (s->next_id * 31);
	return (size_t)(mix64(&st) % (max + 1));
}

int secho_sess_open(struct secho_sess *s, const struct secho_host_opts *o, unsigned window,
                    bool keep_rtt, char *errbuf, size_t errlen)
{
	struct secho_xport_cfg cfg = {.iface = o->iface,
	                              .dst_mac = o->dst_mac_set ? o->dst_mac : NULL,
	                              .src_ip = o->src_ip,
	                              .dst_ip = o->dst_ip,
	                              .allow_any_dst = o->allow_any_dst};
	char err[256];
	unsigned w = 1;
	int rc;

	memset(s, 0, sizeof(*s));
	s->x.fd = s->x.claim_fd = -1;
	s->o = o;
	s->keep_rtt = keep_rtt;
	if (o->port_stream == o->port_offload || o->port_stream == o->port_counters ||
	    o->port_offload == o->port_counters) {
		secho_err_add(errbuf, errlen,
		              "the streaming, offload and counters ports must differ "
		              "(each selects an engine)");
		return -EINVAL;
	}
	if (o->mtu < SECHO_WIRE_MIN_MTU || o->mtu > SECHO_WIRE_MAX_MTU) {
		secho_err_add(errbuf, errlen, "--mtu %u outside %d..%d", o->mtu, SECHO_WIRE_MIN_MTU,
		              SECHO_WIRE_MAX_MTU);
		return -EINVAL;
	}
	if (o->size > (int)(o->mtu - SECHO_WIRE_OVERHEAD_IP)) {
		secho_err_add(errbuf, errlen, "--size %d larger than MTU-%d = %u", o->size,
		              SECHO_WIRE_OVERHEAD_IP, o->mtu - SECHO_WIRE_OVERHEAD_IP);
		return -EINVAL;
	}
	if (!o->key_path) {
		secho_err_add(errbuf, errlen, "--key FILE is required");
		return -EINVAL;
	}
	rc = secho_host_key_load(o->key_path, &s->key, err, sizeof(err));
	if (rc < 0) {
		secho_err_add(errbuf, errlen, "key file %s", err);
		return rc;
	}
	s->ports[0] = o->port_stream;
	s->ports[1] = o->port_offload;
	s->ports[2] = o->port_counters;
	while (w < window && w < 65536)
		w <<= 1;
	s->wcap = w;
	s->win = calloc(w, sizeof(*s->win));
	s->v = malloc(sizeof(*s->v));
	s->rxmem = malloc((size_t)SECHO_RXBATCH * (SECHO_WIRE_MAX_MTU + 64));
	if (!s->win || !s->v || !s->rxmem ||
	    secho_verifier_init(s->v, &s->key, o->port_stream, o->port_offload, o->port_counters) <
	            0) {
		free(s->v);
		s->v = NULL;
		secho_err_add(errbuf, errlen, "out of memory");
		secho_sess_close(s);
		return -ENOMEM;
	}
	if (o->seq_log) {
		s->v->seq_log = fopen(o->seq_log, "a");
		if (!s->v->seq_log) {
			rc = -errno;
			secho_err_add(errbuf, errlen, "--seq-log %s: %s", o->seq_log,
			              strerror(-rc));
			secho_sess_close(s);
			return rc;
		}
	}
	/* Receive buffers 64 bytes larger than the largest valid response: a frame that does
	 * not fit is cut by the socket, and then shows bytes after its IP packet (which fails
	 * trailing-bytes, see secho_verify_frame) instead of passing as a shorter one. */
	for (unsigned i = 0; i < SECHO_RXBATCH; i++) {
		s->rx[i].buf = s->rxmem + (size_t)i * (SECHO_WIRE_MAX_MTU + 64);
		s->rx[i].cap = SECHO_WIRE_MAX_MTU + 64;
	}
	rc = secho_xport_open(&s->x, &cfg, err, sizeof(err));
	if (rc < 0) {
		secho_err_add(errbuf, errlen, "%s", err);
		secho_sess_close(s);
		return rc;
	}
	s->seed = o->seed ? o->seed : secho_mono_ns() ^ ((uint64_t)s->x.sport << 48);
	{
		uint64_t st = s->seed;

		/* Random run base: a stale response from an earlier run matches nothing. */
		s->id_base = s->next_id = mix64(&st) & ~UINT64_C(0xffffffff);
	}
	if (s->x.mode == SECHO_X_SOCKET && secho_xport_have_neigh(&s->x) == 0 && o->warn) {
		char ip[16], msg[256];

		snprintf(msg, sizeof(msg),
		         "no neighbour entry for %s yet; the endpoint does not answer "
		         "ARP, so add a static one:\n  ip neigh add %s lladdr MAC dev IF nud "
		         "permanent",
		         secho_ip_str(s->x.path.ep_ip, ip), ip);
		o->warn(msg);
	}
	return 0;
}

int secho_sess_close_log(struct secho_sess *s, char *err, size_t errlen)
{
	FILE *f = s->v ? s->v->seq_log : NULL;
	int e;

	if (!f)
		return 0;
	s->v->seq_log = NULL;
	e = s->v->seq_log_err;
	if (fflush(f) != 0 && !e)
		e = errno ? errno : EIO;
	if (ferror(f) && !e)
		e = EIO;
	if (fclose(f) != 0 && !e)
		e = errno ? errno : EIO;
	if (!e)
		return 0;
	secho_err_add(err, errlen, "--seq-log %s: write failed: %s", s->o->seq_log, strerror(e));
	return -e;
}

void secho_sess_close(struct secho_sess *s)
{
	secho_xport_close(&s->x);
	if (s->v) {
		if (s->v->seq_log)
			fclose(s->v->seq_log);
		secho_verifier_free(s->v);
		free(s->v);
		s->v = NULL;
	}
	secho_host_key_wipe(&s->key);
	for (unsigned p = 0; p < SECHO_NPATH; p++) {
		free(s->ps[p].rtt_us);
		s->ps[p].rtt_us = NULL;
	}
	free(s->win);
	free(s->rxmem);
	s->win = NULL;
	s->rxmem = NULL;
	explicit_bzero(s->report, sizeof(s->report));
}

static void lose(struct secho_sess *s, struct secho_hreq *q)
{
	s->ps[q->path].lost++;
	q->used = false;
	s->outstanding--;
}

/* Reserves the window slot of the next id; an occupant still there is wcap requests old
 * and counted lost. */
static struct secho_hreq *reserve(struct secho_sess *s, unsigned path, size_t len)
{
	struct secho_hreq *q = &s->win[(s->next_id - s->id_base) & (s->wcap - 1)];

	if (q->used)
		lose(s, q);
	q->used = true;
	q->answered = false;
	q->path = (uint8_t)path;
	q->dport = s->ports[path];
	q->len = (uint32_t)len;
	q->id = s->next_id++;
	s->outstanding++;
	return q;
}

static void unreserve(struct secho_sess *s, struct secho_hreq *q)
{
	q->used = false;
	s->outstanding--;
	s->next_id--;
}

int secho_sess_send(struct secho_sess *s, unsigned path, size_t len)
{
	uint8_t p = (uint8_t)path;

	if (path == 2)
		len = 0;
	return secho_sess_send_batch(s, &p, &len, 1) == 1 ? 0 : -EAGAIN;
}

int secho_sess_send_batch(struct secho_sess *s, const uint8_t *paths, const size_t *lens,
                          unsigned n)
{
	static _Thread_local uint8_t pl[SECHO_RXBATCH][SECHO_HOST_MAX_PAYLOAD];
	const uint8_t *pp[SECHO_RXBATCH];
	uint16_t dports[SECHO_RXBATCH];
	size_t ll[SECHO_RXBATCH];
	struct secho_hreq *qs[SECHO_RXBATCH];
	uint64_t t;
	int rc;

	if (n > SECHO_RXBATCH)
		n = SECHO_RXBATCH;
	if (s->outstanding + n > s->wcap)
		n = s->wcap - s->outstanding;
	if (n == 0)
		return -EAGAIN;
	for (unsigned i = 0; i < n; i++) {
		qs[i] = reserve(s, paths[i], lens[i]);
		ll[i] = lens[i];
		dports[i] = qs[i]->dport;
		secho_sess_payload(s, qs[i]->id, lens[i], pl[i]);
		pp[i] = pl[i];
	}
	t = secho_mono_ns();
	rc = secho_xport_send_batch(&s->x, dports, pp, ll, n);
	if (rc > (int)n)
		rc = (int)n; /* cannot happen; keeps the bounds obvious */
	/* Give back the slots of whatever did not go out, newest first. */
	for (int i = (int)n - 1; i >= (rc < 0 ? 0 : rc); i--)
		unreserve(s, qs[i]);
	for (int i = 0; i < rc; i++) {
		qs[i]->t_ns = t;
		s->ps[qs[i]->path].sent++;
	}
	return rc;
}

static void add_rtt(struct secho_pathstats *ps, double us)
{
	if (ps->nrtt == ps->caprtt) {
		size_t nc = ps->caprtt ? ps->caprtt * 2 : 1024;
		double *nr = realloc(ps->rtt_us, nc * sizeof(*nr));

		if (!nr)
			return;
		ps->rtt_us = nr;
		ps->caprtt = nc;
	}
	ps->rtt_us[ps->nrtt++] = us;
}

/* Finds the request a response answers (see the header comment for the rules). NULL
 * when it answers none outstanding: *dup when it is a further answer to a request already
 * answered, else *late when it is for one given up (or corrupt). */
static struct secho_hreq *match(struct secho_sess *s, const struct secho_rxmsg *m, bool *late,
                                bool *dup)
{
	uint8_t idb[8];
	size_t len, got;
	struct secho_hreq *best = NULL;

	*late = *dup = false;
	if (m->sport == s->ports[2] || m->udp_len < SECHO_SHDR_LEN + SECHO_TAG_LEN) {
		len = SIZE_MAX;
	} else {
		len = m->udp_len - SECHO_SHDR_LEN - SECHO_TAG_LEN;
	}
	if (len != SIZE_MAX && len >= 8) {
		got = secho_verify_peek(s->v, m->udp, m->udp_len, idb, 8);
		if (got == 8) {
			uint64_t id = 0;

			for (int i = 0; i < 8; i++)
				id = id << 8 | idb[i];
			if (id - s->id_base < s->next_id - s->id_base) {
				struct secho_hreq *q = &s->win[(id - s->id_base) & (s->wcap - 1)];

				if (q->used && q->id == id)
					return q;
				if (q->answered && q->id == id)
					*dup = true;
				else
					*late = true;
				return NULL;
			}
		}
	}
	/* Oldest outstanding request with the same port and size (counters: same port) whose
	 * payload is what the response decrypts to: when an earlier request of that size was
	 * lost, its successors' answers must not be taken for its own. Payloads of 1..7 bytes
	 * are compared in full; an empty one cannot tell requests apart (any is as good).
	 * When none compares equal, the answer is for a request that has already expired
	 * (late), or it is corrupt: either way it answers none of the outstanding ones, and
	 * the request it was for is counted lost, which fails a paired run (--max-loss). */
	uint8_t mine[8], want[8];
	size_t plen = len != SIZE_MAX && len < 8 ? len : 0;
	if (plen && secho_verify_peek(s->v, m->udp, m->udp_len, mine, plen) != plen)
		plen = 0;
	struct secho_hreq *same = NULL;
	for (unsigned i = 0; i < s->wcap; i++) {
		struct secho_hreq *q = &s->win[i];

		if (!q->used || q->dport != m->sport)
			continue;
		if (q->path != 2 && q->len != len)
			continue;
		if (!best || q->id < best->id)
			best = q;
		if (plen) {
			secho_sess_payload(s, q->id, plen, want);
			if (!memcmp(want, mine, plen) && (!same || q->id < same->id))
				same = q;
		}
	}
	if (plen && !same) {
		*late = best != NULL;
		return NULL;
	}
	return same ? same : best;
}

static void account(struct secho_sess *s, struct secho_hreq *q, const struct secho_rxmsg *m,
                    const struct secho_vresult *res)
{
	struct secho_pathstats *ps = &s->ps[q->path];

	ps->answered++;
	if (res->payload_match)
		ps->payload_ok++;
	if (res->ct_match)
		ps->ct_ok++;
	if (res->tag_match)
		ps->tag_ok++;
	if (res->first == SECHO_VF_OK) {
		ps->verified++;
	} else {
		ps->failed++;
		for (unsigned f = 1; f < SECHO_VF_COUNT; f++)
			if (res->mask >> f & 1)
				ps->fail_by[f]++;
		if (!s->first_fail[0])
			snprintf(s->first_fail, sizeof(s->first_fail),
			         "%s request %u (%u bytes, seq %llu): first failed check %s",
			         secho_path_names[q->path], (unsigned)(q->id - s->id_base),
			         (unsigned)q->len, (unsigned long long)res->seq,
			         secho_vfail_name(res->first));
	}
	if (s->keep_rtt && q->path != 2)
		add_rtt(ps, (double)(m->t_ns - q->t_ns) / 1000.0);
}

/* The path a response came from, by its source port (echo paths by default). */
static unsigned path_of(const struct secho_sess *s, uint16_t sport)
{
	return sport == s->ports[2] ? 2 : sport == s->ports[1] ? 1 : 0;
}

/* A response that answers no outstanding request but repeats an answer: counted failed
 * under "duplicate" on its path. */
static void account_duplicate(struct secho_sess *s, const struct secho_rxmsg *m, uint64_t seq)
{
	struct secho_pathstats *ps = &s->ps[path_of(s, m->sport)];

	ps->failed++;
	ps->fail_by[SECHO_VF_DUPLICATE]++;
	if (!s->first_fail[0])
		snprintf(s->first_fail, sizeof(s->first_fail),
		         "%s response (seq %llu): a further answer to a request already answered: "
		         "failed check duplicate",
		         secho_path_names[path_of(s, m->sport)], (unsigned long long)seq);
}

/* The sequence number in a response's secure header, or false when it has none. */
static bool resp_seq(const struct secho_rxmsg *m, uint64_t *seq)
{
	if (m->udp_len < SECHO_SHDR_LEN)
		return false;
	*seq = 0;
	for (int i = 8; i < 16; i++)
		*seq = *seq << 8 | m->udp[i];
	return true;
}

int secho_sess_poll(struct secho_sess *s, int64_t timeout_us)
{
	int n = secho_xport_recv(&s->x, s->rx, SECHO_RXBATCH, timeout_us);

	for (int i = 0; i < n; i++) {
		struct secho_rxmsg *m = &s->rx[i];
		struct secho_vresult res;
		struct secho_vreq r;
		struct secho_hreq *q;
		bool late, dup, rep;
		uint64_t seq = 0;

		q = match(s, m, &late, &dup);
		if (!q) {
			/* A sequence number a verified response already carried: the same
			 * answer again (whatever request it would otherwise be taken for). */
			if (resp_seq(m, &seq) && secho_seqset_has(&s->v->seen, seq))
				dup = true;
			if (dup)
				account_duplicate(s, m, seq);
			else if (late)
				s->ps[path_of(s, m->sport) == 1 ? 1 : 0].late++;
			else
				s->unmatched++;
			continue;
		}
		rep = q->path == 2;
		secho_sess_payload(s, q->id, q->len, s->payload);
		r.payload = s->payload;
		r.len = q->len;
		r.dport = q->dport;
		r.sport = s->x.sport;
		if (s->x.mode == SECHO_X_RAW)
			secho_verify_frame(s->v, &s->x.path, &r, m->buf, m->len,
			                   rep ? s->report : NULL, sizeof(s->report) - 1, &res);
		else
			secho_verify_dgram(s->v, &s->x.path, &r, m->src_ip, m->sport, m->dport,
			                   m->udp, m->udp_len, rep ? s->report : NULL,
			                   sizeof(s->report) - 1, &res);
		if (rep) {
			s->report_res = res;
			s->report_len = res.report_len;
			s->report[s->report_len] = '\0';
			s->have_report = true;
		}
		account(s, q, m, &res);
		q->used = false;
		q->answered = true;
		s->outstanding--;
	}
	return n;
}

unsigned secho_sess_expire(struct secho_sess *s, uint64_t timeout_ns)
{
	uint64_t now = secho_mono_ns();
	unsigned n = 0;

	if (!s->outstanding)
		return 0;
	for (unsigned i = 0; i < s->wcap; i++) {
		struct secho_hreq *q = &s->win[i];

		if (q->used && now - q->t_ns >= timeout_ns) {
			lose(s, q);
			n++;
		}
	}
	return n;
}

int secho_sess_fetch_counters(struct secho_sess *s)
{
	uint64_t tmo = (uint64_t)s->o->timeout_ms * 1000000u;

	for (int attempt = 0; attempt < 3; attempt++) {
		uint64_t end;

		s->have_report = false;
		if (secho_sess_send(s, 2, 0) < 0)
			continue;
		end = secho_mono_ns() + tmo;
		while (!s->have_report && secho_mono_ns() < end) {
			int64_t left = (int64_t)(end - secho_mono_ns()) / 1000;

			if (secho_sess_poll(s, left > 0 ? left : 0) < 0)
				break;
		}
		secho_sess_expire(s, tmo);
		if (s->have_report)
			return s->report_res.first == SECHO_VF_OK ? 0 : -EBADMSG;
	}
	return -ETIMEDOUT;
}
