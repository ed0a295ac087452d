/*
 * tests/tools/flow_truth_check.c - recount a generated capture and compare it with its
 * truth, independently of the generator: the frames are read with libpcap and parsed here
 * from scratch (none of src/flow's code), flows are rebuilt the way docs/FLOW.md says a
 * meter must see them, and the result must equal the truth file line for line (as sets),
 * with the totals of its comment lines.
 *
 * Also checks the generator's contract: timestamps strictly increase and are whole
 * microseconds; no flow spans more than 240 s nor has a gap above 20 s; a key comes back
 * only after a FIN/RST with a SYN, or after at least 45 s of silence; no packet follows a
 * FIN/RST in its key otherwise; a flow and its reverse together span at most 240 s.
 *
 * A truth written with --app has two more columns (app, features): they are left out.
 *
 * usage: flow_truth_check FILE.pcap FILE.pcap.truth.csv
 * Prints "ok: ..." and exits 0, or prints the differences and exits 1 (2: bad usage).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct key {
	uint16_t vlan, vlan_inner;
	uint8_t ipv, proto;
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint8_t itype, icode;
};

struct flow {
	struct key k;
	uint64_t packets, octets, first, last, max_gap;
	uint8_t flags;
	bool ended; /* FIN or RST seen */
	bool closed;
};

/* fragment id -> flow index: (src, dst, proto, id) */
struct frag {
	uint8_t src[16], dst[16];
	uint8_t proto;
	uint32_t id;
	size_t flow;
};

static struct flow *flows;
static size_t nflows, capflows;
static struct frag *frags;
static size_t nfrags, capfrags;
static size_t *open_idx; /* hash table: key -> index of the latest flow + 1 */
static struct key *open_keys;
static size_t open_cap = 1 << 16;
static unsigned errors;

#define ERR(...)                                                                                   \
	do {                                                                                       \
		if (++errors <= 20)                                                                \
			fprintf(stderr, __VA_ARGS__);                                              \
	} while (0)

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static size_t khash(const struct key *k)
{
	const uint8_t *b = (const uint8_t *)k;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return (size_t)h;
}

static size_t *slot_of(const struct key *k)
{
	size_t i = khash(k) & (open_cap - 1);
	while (open_idx[i] && memcmp(&open_keys[i], k, sizeof(*k)) != 0)
		i = (i + 1) & (open_cap - 1);
	if (!open_idx[i])
		open_keys[i] = *k;
	return &open_idx[i];
}

static void grow_open(void)
{
	size_t oc = open_cap;
	size_t *oi = open_idx;
	struct key *ok = open_keys;
	open_cap = open_cap ? open_cap * 2 : 1 << 16;
	open_idx = calloc(open_cap, sizeof(*open_idx));
	open_keys = calloc(open_cap, sizeof(*open_keys));
	if (!open_idx || !open_keys) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	for (size_t i = 0; i < oc; i++)
		if (oi[i])
			*slot_of(&ok[i]) = oi[i];
	free(oi);
	free(ok);
}

static size_t new_flow(const struct key *k, uint64_t t)
{
	if (nflows == capflows) {
		capflows = capflows ? capflows * 2 : 4096;
		flows = realloc(flows, capflows * sizeof(*flows));
		if (!flows) {
			fprintf(stderr, "out of memory\n");
			exit(2);
		}
	}
	if (nflows * 2 >= open_cap)
		grow_open();
	memset(&flows[nflows], 0, sizeof(flows[0]));
	flows[nflows].k = *k;
	flows[nflows].first = t;
	*slot_of(k) = nflows + 1;
	return nflows++;
}

/* Account one packet of key k; returns the flow index. */
static size_t account(const struct key *k, uint64_t t, uint32_t octets, uint8_t tflags)
{
	size_t *s = slot_of(k), fi;
	if (*s) {
		struct flow *f = &flows[*s - 1];
		uint64_t gap = t - f->last;
		if (f->ended && (tflags & 0x02)) {
			fi = new_flow(k, t); /* a new connection on the key after FIN/RST */
		} else if (gap > 30000000000ull) {
			if (gap < 45000000000ull)
				ERR("key reused after %.1f s (contract: at least 45 s)\n",
				    (double)gap / 1e9);
			fi = new_flow(k, t);
		} else {
			if (f->ended)
				ERR("packet after FIN/RST without SYN at %" PRIu64 "\n", t);
			if (gap > f->max_gap)
				f->max_gap = gap;
			fi = *s - 1;
		}
	} else {
		fi = new_flow(k, t);
	}
	struct flow *f = &flows[fi];
	f->packets++;
	f->octets += octets;
	f->last = t;
	f->flags |= tflags;
	if (tflags & 0x05)
		f->ended = true;
	return fi;
}

static void add_frag(const uint8_t *src, const uint8_t *dst, uint8_t proto, uint32_t id, size_t fl)
{
	if (nfrags == capfrags) {
		capfrags = capfrags ? capfrags * 2 : 256;
		frags = realloc(frags, capfrags * sizeof(*frags));
		if (!frags)
			exit(2);
	}
	struct frag *r = &frags[nfrags++];
	memcpy(r->src, src, 16);
	memcpy(r->dst, dst, 16);
	r->proto = proto;
	r->id = id;
	r->flow = fl;
}

static bool find_frag(const uint8_t *src, const uint8_t *dst, uint8_t proto, uint32_t id,
                      size_t *fl)
{
	for (size_t i = nfrags; i-- > 0;) {
		const struct frag *r = &frags[i];
		if (r->id == id && r->proto == proto && memcmp(r->src, src, 16) == 0 &&
		    memcmp(r->dst, dst, 16) == 0) {
			*fl = r->flow;
			return true;
		}
	}
	return false;
}

static uint64_t n_malformed, n_nonip, n_orphan, n_packets, n_flowpkts;

/* L4 of a first fragment or whole packet: fill ports/type; false when cut off. */
static bool parse_l4(struct key *k, const uint8_t *l4, size_t avail, uint8_t *tflags)
{
	*tflags = 0;
	switch (k->proto) {
	case 6:
		if (avail < 20 || (l4[12] >> 4) < 5 || (size_t)(l4[12] >> 4) * 4 > avail)
			return false;
		k->sport = rd16(l4);
		k->dport = rd16(l4 + 2);
		*tflags = l4[13];
		return true;
	case 17:
		if (avail < 8)
			return false;
		k->sport = rd16(l4);
		k->dport = rd16(l4 + 2);
		return true;
	case 1:
	case 58:
		if (avail < 2)
			return false;
		k->itype = l4[0];
		k->icode = l4[1];
		return true;
	default:
		return true;
	}
}

static void frame(const uint8_t *p, uint32_t caplen, uint32_t len, uint64_t t)
{
	struct key k;
	memset(&k, 0, sizeof(k));
	if (caplen < 14) {
		n_malformed++;
		return;
	}
	size_t off = 12;
	uint16_t et = rd16(p + off);
	int tags = 0;
	while (et == 0x8100 || et == 0x88a8) {
		if (caplen < off + 6 || tags == 2) {
			n_malformed++;
			return;
		}
		uint16_t vid = rd16(p + off + 2) & 0xfff;
		if (tags++ == 0)
			k.vlan = vid;
		else
			k.vlan_inner = vid;
		off += 4;
		et = rd16(p + off);
	}
	off += 2;
	const uint8_t *ip = p + off;
	size_t cap = caplen - off, wire = len - off;
	uint8_t tf = 0;
	if (et == 0x0800) {
		if (cap < 20 || (ip[0] >> 4) != 4) {
			n_malformed++;
			return;
		}
		size_t ihl = (size_t)(ip[0] & 15) * 4, tot = rd16(ip + 2);
		if (ihl < 20 || tot < ihl || tot > wire || ihl > cap) {
			n_malformed++;
			return;
		}
		k.ipv = 4;
		k.proto = ip[9];
		memcpy(k.src, ip + 12, 4);
		memcpy(k.dst, ip + 16, 4);
		uint16_t fr = rd16(ip + 6), id = rd16(ip + 4);
		size_t fo = (size_t)(fr & 0x1fff) * 8;
		bool mf = fr & 0x2000;
		if (fo) {
			size_t fl;
			if (find_frag(k.src, k.dst, k.proto, id, &fl)) {
				struct flow *f = &flows[fl];
				uint64_t gap = t - f->last;
				if (gap > f->max_gap)
					f->max_gap = gap;
				f->packets++;
				f->octets += tot;
				f->last = t;
				n_flowpkts++;
			} else {
				n_orphan++;
			}
			return;
		}
		size_t avail = (cap < tot ? cap : tot) - ihl;
		if (!parse_l4(&k, ip + ihl, avail, &tf) || (k.proto == 6 && tot - ihl < 20)) {
			n_malformed++;
			return;
		}
		size_t fl = account(&k, t, (uint32_t)tot, tf);
		n_flowpkts++;
		if (mf)
			add_frag(k.src, k.dst, k.proto, id, fl);
		return;
	}
	if (et == 0x86dd) {
		if (cap < 40 || (ip[0] >> 4) != 6) {
			n_malformed++;
			return;
		}
		size_t plen = rd16(ip + 4);
		if (40 + plen > wire) {
			n_malformed++;
			return;
		}
		k.ipv = 6;
		memcpy(k.src, ip + 8, 16);
		memcpy(k.dst, ip + 24, 16);
		uint8_t nh = ip[6];
		size_t o = 40, end = 40 + plen;
		bool frag = false, more = false;
		size_t fo = 0;
		uint32_t fid = 0;
		while (nh == 0 || nh == 43 || nh == 60 || nh == 44 || nh == 51) {
			if (o + 8 > end || o + 8 > cap) {
				n_malformed++;
				return;
			}
			size_t hl = nh == 44   ? 8
			            : nh == 51 ? ((size_t)ip[o + 1] + 2) * 4
			                       : ((size_t)ip[o + 1] + 1) * 8;
			if (o + hl > end) {
				n_malformed++;
				return;
			}
			if (nh == 44) {
				uint16_t w = rd16(ip + o + 2);
				fo = (size_t)(w >> 3) * 8;
				more = w & 1;
				fid = rd32(ip + o + 4);
				frag = fo || more;
			}
			nh = ip[o];
			o += hl;
		}
		k.proto = nh;
		if (frag && fo) {
			size_t fl;
			if (find_frag(k.src, k.dst, nh, fid, &fl)) {
				struct flow *f = &flows[fl];
				uint64_t gap = t - f->last;
				if (gap > f->max_gap)
					f->max_gap = gap;
				f->packets++;
				f->octets += 40 + plen;
				f->last = t;
				n_flowpkts++;
			} else {
				n_orphan++;
			}
			return;
		}
		size_t lim = cap < end ? cap : end;
		if (o > lim || !parse_l4(&k, ip + o, lim - o, &tf)) {
			n_malformed++;
			return;
		}
		size_t fl = account(&k, t, (uint32_t)(40 + plen), tf);
		n_flowpkts++;
		if (frag)
			add_frag(k.src, k.dst, nh, fid, fl);
		return;
	}
	n_nonip++;
}

static char *line_of(const struct flow *f, char *buf, size_t n)
{
	char s[64], d[64];
	int fam = f->k.ipv == 4 ? AF_INET : AF_INET6;
	inet_ntop(fam, f->k.src, s, sizeof(s));
	inet_ntop(fam, f->k.dst, d, sizeof(d));
	snprintf(buf, n,
	         "%u,%u,%u,%u,%s,%s,%u,%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u",
	         f->k.vlan, f->k.vlan_inner, f->k.ipv, f->k.proto, s, d, f->k.sport, f->k.dport,
	         f->k.itype, f->k.icode, f->packets, f->octets, f->first, f->last, f->flags);
	return buf;
}

static int scmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: flow_truth_check FILE.pcap FILE.pcap.truth.csv\n");
		return 2;
	}
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(argv[1], eb);
	if (!pc) {
		fprintf(stderr, "flow_truth_check: %s\n", eb);
		return 2;
	}
	open_idx = calloc(open_cap, sizeof(*open_idx));
	open_keys = calloc(open_cap, sizeof(*open_keys));
	struct pcap_pkthdr *h;
	const u_char *d;
	uint64_t last = 0;
	while (pcap_next_ex(pc, &h, &d) == 1) {
		uint64_t t =
		        (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec * 1000;
		if (n_packets && t <= last)
			ERR("timestamps do not strictly increase at frame %" PRIu64 "\n",
			    n_packets + 1);
		last = t;
		n_packets++;
		frame(d, h->caplen, h->len, t);
	}
	pcap_close(pc);

	/* Contract checks per flow, and a flow with its reverse. */
	for (size_t i = 0; i < nflows; i++) {
		const struct flow *f = &flows[i];
		if (f->last - f->first > 240000000000ull)
			ERR("flow %zu spans %.1f s (contract: at most 240 s)\n", i,
			    (double)(f->last - f->first) / 1e9);
		if (f->max_gap > 20000000000ull)
			ERR("flow %zu has a %.1f s gap (contract: at most 20 s)\n", i,
			    (double)f->max_gap / 1e9);
		struct key rk = f->k;
		memcpy(rk.src, f->k.dst, 16);
		memcpy(rk.dst, f->k.src, 16);
		rk.sport = f->k.dport;
		rk.dport = f->k.sport;
		if (nflows <= 20000) { /* a quadratic pass: small files only */
			for (size_t j = 0; j < nflows; j++) {
				const struct flow *g = &flows[j];
				if (g->k.proto != rk.proto || memcmp(g->k.src, rk.src, 16) != 0 ||
				    memcmp(g->k.dst, rk.dst, 16) != 0 || g->k.sport != rk.sport ||
				    g->k.dport != rk.dport || g->k.vlan != rk.vlan ||
				    g->k.vlan_inner != rk.vlan_inner)
					continue;
				if (g->first > f->last + 30000000000ull ||
				    f->first > g->last + 30000000000ull)
					continue;
				uint64_t a = f->first < g->first ? f->first : g->first;
				uint64_t b = f->last > g->last ? f->last : g->last;
				if (b - a > 240000000000ull)
					ERR("flow %zu with its reverse spans %.1f s\n", i,
					    (double)(b - a) / 1e9);
			}
		}
	}

	/* The truth. */
	FILE *tf = fopen(argv[2], "r");
	if (!tf) {
		perror(argv[2]);
		return 2;
	}
	char *line = NULL;
	size_t lcap = 0, nt = 0, tcap = 0;
	char **tl = NULL;
	uint64_t c_packets = UINT64_MAX, c_malformed = UINT64_MAX, c_nonip = UINT64_MAX,
	         c_orphan = UINT64_MAX, c_flows = UINT64_MAX, c_flowpkts = UINT64_MAX;
	bool header = false, app = false;
	while (getline(&line, &lcap, tf) > 0) {
		line[strcspn(line, "\r\n")] = 0;
		if (!header) {
			header = true;
			if (strncmp(line, "vlan,vlan_inner,ip_version,proto,src,dst,", 41) != 0)
				ERR("truth header: '%s'\n", line);
			/* --app: the app and features columns (the capture's payloads are not
			 * recounted here; tests/sh/test_flow_gen_app.sh holds them to the meter
			 * and to tshark) */
			size_t hl = strlen(line);
			app = hl > 13 && !strcmp(line + hl - 13, ",app,features");
			continue;
		}
		if (app && line[0] != '#') {
			char *c = line;
			for (int i = 0; i < 15 && c; i++)
				c = strchr(c + (i ? 1 : 0), ',');
			if (c)
				*c = 0; /* the 15 columns of a capture without tunnels */
		}
		if (line[0] == '#') {
			uint64_t v;
			char name[64];
			if (sscanf(line, "# %63[a-z_0-9]=%" SCNu64, name, &v) == 2) {
				if (!strcmp(name, "packets"))
					c_packets = v;
				else if (!strcmp(name, "malformed"))
					c_malformed = v;
				else if (!strcmp(name, "non_ip"))
					c_nonip = v;
				else if (!strcmp(name, "orphan_fragments"))
					c_orphan = v;
				else if (!strcmp(name, "flows"))
					c_flows = v;
				else if (!strcmp(name, "flow_packets"))
					c_flowpkts = v;
			}
			continue;
		}
		if (nt == tcap) {
			tcap = tcap ? tcap * 2 : 1024;
			char **ntl = realloc(tl, tcap * sizeof(*tl));
			if (!ntl) {
				fprintf(stderr, "out of memory\n");
				return 2;
			}
			tl = ntl;
		}
		tl[nt++] = strdup(line);
	}
	fclose(tf);
	free(line);
	char **ml = calloc(nflows + 1, sizeof(*ml));
	char buf[256];
	for (size_t i = 0; i < nflows; i++)
		ml[i] = strdup(line_of(&flows[i], buf, sizeof(buf)));
	if (nt)
		qsort(tl, nt, sizeof(*tl), scmp);
	if (nflows)
		qsort(ml, nflows, sizeof(*ml), scmp);
	size_t i = 0, j = 0;
	while (i < nt || j < nflows) {
		int c = i == nt ? 1 : j == nflows ? -1 : strcmp(tl[i], ml[j]);
		if (c == 0) {
			i++;
			j++;
		} else if (c < 0) {
			ERR("in the truth, not in the capture: %s\n", tl[i]);
			i++;
		} else {
			ERR("in the capture, not in the truth: %s\n", ml[j]);
			j++;
		}
	}
#define CMP(name, have, want)                                                                      \
	if ((have) != (want))                                                                      \
		ERR("%s: truth says %" PRIu64 ", the capture has %" PRIu64 "\n", name,             \
		    (uint64_t)(want), (uint64_t)(have));
	CMP("packets", n_packets, c_packets);
	CMP("flows", nflows, c_flows);
	CMP("flow_packets", n_flowpkts, c_flowpkts);
	CMP("malformed", n_malformed, c_malformed);
	CMP("non_ip", n_nonip, c_nonip);
	CMP("orphan_fragments", n_orphan, c_orphan);
	for (size_t m = 0; m < nflows; m++)
		free(ml[m]);
	free(ml);
	if (errors) {
		fprintf(stderr, "flow_truth_check: %u problems\n", errors);
		return 1;
	}
	printf("ok: %" PRIu64 " packets, %zu flows (%" PRIu64 " flow packets), malformed %" PRIu64
	       ", non-IP %" PRIu64 ", orphan fragments %" PRIu64 "\n",
	       n_packets, nflows, n_flowpkts, n_malformed, n_nonip, n_orphan);
	return 0;
}
