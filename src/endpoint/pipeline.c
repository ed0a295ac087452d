/*
 * src/endpoint/pipeline.c - one data-path worker: a burst through every stage.
 *
 * Stage by stage for one RX burst (at most SECHO_IO_BURST frames):
 *  1. parse/validate each frame (src/wire/parse.c); rejects are counted by verdict and
 *     never answered (ARP only with --arp); requests from a source port that would answer
 *     back are dropped (secho_src_port_refused, counted src_port). Steer by port class:
 *       streaming -> take a sequence number, lay the response headers out where the
 *                    response will be built, queue a message for the batch engine;
 *       offload   -> copy the payload into a staging buffer, post a job (engine thread);
 *       counters  -> rate limit, build and encrypt the JSON report, send.
 *  2. streaming engine: one secho_gcm_seal_batch() call for the burst's messages.
 *  3. rebuild/TX: UDP checksum over the ciphertext, hand each response to the TX ring.
 * Then one TX kick for the burst and the RX buffers go back.
 *
 * Where a streaming response is built: with an in-place backend (AF_XDP, AF_PACKET with
 * sendmmsg) directly over the request, starting 16 bytes before it (the headroom), so the
 * plaintext already sits where the ciphertext goes (offset 58) and GCM runs in place with
 * no copy at all. With AF_PACKET's TX ring, in the TX ring slot it will be sent from
 * (secho_io_tx_slot_ahead(): slot k of the burst for its k-th streaming response),
 * encrypting straight from the RX buffer. Otherwise (no free slot ahead, pcap) in a
 * per-worker scratch buffer, then one copy into the TX slot. Counters reports and ARP
 * replies of a burst go out after its streaming responses, so that nothing is committed
 * between the look-ahead and the streaming commits.
 *
 * Offload completions are sent by secho_worker_completions(), called every loop turn.
 *
 * With busy-polling, a burst that leaves the ring empty is followed by a warm-up (a canned
 * request through parse, engine and checksum under a throwaway key, nothing sent): see
 * secho_worker_warm_setup() in pipeline.h.
 *
 * Timing: one TSC read per burst at RX dequeue, one per response at TX enqueue; the
 * difference goes into the engine's histogram. Data-path cycles per engine: the parse
 * stage is shared in proportion to the packets of each engine, stages 2-3 are streaming
 * only; the offload side adds its completion handling.
 */
#include "endpoint/pipeline.h"

#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "endpoint/report.h"
#include "secho/tsc.h"

int secho_worker_init(struct secho_worker *w, unsigned offload_ring, unsigned mtu)
{
	/* A scratch frame holds the longest frame of the MTU: IP MTU + Ethernet + a VLAN tag. */
	w->frame_cap = (SECHO_ETH_HLEN + 4 + (mtu ? mtu : SECHO_WIRE_DEFAULT_MTU) + 63) & ~63u;
	w->pending = calloc(offload_ring ? offload_ring : 1, sizeof(*w->pending));
	w->scratch = aligned_alloc(64, (size_t)(SECHO_IO_BURST + 1) * w->frame_cap);
	if (!w->pending || !w->scratch) {
		secho_worker_fini(w);
		return -ENOMEM;
	}
	memset(&w->ctr, 0, sizeof(w->ctr));
	return 0;
}

static void warm_free(struct secho_worker *w)
{
	if (w->warm_key)
		secho_gcm_key_wipe(w->warm_key);
	free(w->warm_key);
	free(w->warm_frame);
	w->warm_key = NULL;
	w->warm_frame = NULL;
}

void secho_worker_fini(struct secho_worker *w)
{
	warm_free(w);
	free(w->pending);
	if (w->scratch)
		secho_wipe(w->scratch, (size_t)(SECHO_IO_BURST + 1) * w->frame_cap);
	free(w->scratch);
	w->pending = NULL;
	w->scratch = NULL;
}

bool secho_src_port_refused(const struct secho_wire_cfg *cfg, uint16_t port)
{
	static const uint16_t reflectors[] = {1900, 3283, 3702, 5353, 5683, 11211};
	if (port < 1024 || port == cfg->port_stream || port == cfg->port_offload ||
	    port == cfg->port_counters || port == SECHO_PORT_STREAM_DEFAULT ||
	    port == SECHO_PORT_OFFLOAD_DEFAULT || port == SECHO_PORT_COUNTERS_DEFAULT)
		return true;
	for (size_t i = 0; i < sizeof(reflectors) / sizeof(reflectors[0]); i++)
		if (port == reflectors[i])
			return true;
	return false;
}

/* Warm-up request: 64 bytes of payload to the streaming port, from an address that is
 * never used on any wire (02:00:00:00:00:01, 198.51.100.1, RFC 5737). */
#define WARM_PAYLOAD 64u

int secho_worker_warm_setup(struct secho_worker *w)
{
	uint8_t key[32];
	w->warm_key = aligned_alloc(64, sizeof(*w->warm_key));
	w->warm_frame = aligned_alloc(64, w->frame_cap);
	if (w->warm_key)
		memset(w->warm_key, 0, sizeof(*w->warm_key)); /* warm_free may wipe it */
	if (!w->warm_key || !w->warm_frame ||
	    getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key) ||
	    secho_gcm_key_init(w->warm_key, key, sizeof(key), secho_gcm_key_impl(w->gk)) != 0) {
		secho_wipe(key, sizeof(key));
		warm_free(w);
		return -ENOMEM;
	}
	secho_wipe(key, sizeof(key));
	/* A request is a response with the roles swapped: rebuild one "from" the peer to us,
	 * its secure header + 32 bytes + tag space being the request's 64-byte payload. */
	struct secho_wire_cfg peer = *w->wire;
	static const uint8_t peer_mac[SECHO_ETH_ALEN] = {0x02, 0, 0, 0, 0, 0x01};
	memcpy(peer.mac, peer_mac, sizeof(peer_mac));
	peer.ip = htonl(0xc6336401u);
	struct secho_wire_req to_us = {.src_ip = w->wire->ip,
	                               .src_port = w->wire->port_stream,
	                               .dst_port = 40000, /* its source port: an ephemeral one */
	                               .payload_len = WARM_PAYLOAD - SECHO_RESP_OVERHEAD};
	memcpy(to_us.src_mac, w->wire->mac, SECHO_ETH_ALEN);
	uint8_t shdr[SECHO_SHDR_LEN] = {0};
	memset(w->warm_frame, 0, w->frame_cap);
	size_t n = secho_wire_rebuild(&peer, &to_us, NULL, shdr, 1, w->warm_frame, w->frame_cap);
	secho_wire_finalize(w->warm_frame, n);
	struct secho_wire_req r;
	if (!n || secho_wire_parse(w->wire, w->warm_frame, n, &r) != SECHO_WIRE_OK ||
	    r.cls != SECHO_PORT_STREAM || r.payload_len != WARM_PAYLOAD ||
	    secho_src_port_refused(w->wire, r.src_port)) {
		warm_free(w);
		return -EINVAL;
	}
	w->warm_len = (uint32_t)n;
	return 0;
}

/* Next sequence number from the lease, refilling it from the durable allocator (which never
 * waits for the disk). 0, or -1 with the drop counted. */
static int take_seq(struct secho_worker *w, uint64_t *seq)
{
	if (w->lease.next >= w->lease.end) {
		int rc = w->refill ? w->refill(w) : -ENOSPC;
		if (rc) {
			secho_ctr_add(&w->ctr.drop[rc == -EAGAIN ? SECHO_DROP_SEQ_PENDING
			                                         : SECHO_DROP_SEQ_EXHAUSTED],
			              1);
			return -1;
		}
	}
	*seq = w->lease.next++;
	return 0;
}

/* Send a response already built (checksummed) at buf, answering rx (may be NULL). */
static int send_built(struct secho_worker *w, struct secho_io_pkt *rx, const uint8_t *buf,
                      uint32_t rlen)
{
	uint8_t *out = secho_io_tx_slot(w->io, rx, rlen, 0);
	if (!out) {
		secho_ctr_add(&w->ctr.drop[SECHO_DROP_TX_FULL], 1);
		return -1;
	}
	if (out != buf)
		memmove(out, buf, rlen);
	secho_io_tx_commit(w->io, rx, rlen);
	secho_ctr_add(&w->ctr.tx_frames, 1);
	return 0;
}

/* --- VLANs ---------------------------------------------------------------------------
 * Without --vlan only untagged frames are served. With --vlan ID only frames of that one
 * 802.1Q VLAN are, and every answer carries the request's tag (TCI echoed). A tag reaches
 * us in two ways: in the frame's bytes (AF_XDP, pcap), or taken off by the kernel and
 * reported beside the frame (AF_PACKET: secho_io_pkt.vlan). Either way the parser then sees
 * the untagged frame, and the answer is built untagged 4 bytes into its buffer and tagged
 * afterwards (vlan_tag: the MACs move 4 bytes down, the tag goes after them): the
 * ciphertext stays where it was, so in place stays in place. */

#define VLAN_TPID 0x8100u

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The frame as the parser must see it (untagged), its length in *len and, with --vlan, the
 * TCI to answer with in *tci; NULL when the frame's VLAN is not the one served (the caller
 * counts the `vlan` verdict). A served tag in the frame's bytes is removed in place: the
 * MACs move 4 bytes up over it, and the view starts 4 bytes into the frame. */
static uint8_t *vlan_view(const struct secho_worker *w, struct secho_io_pkt *p, uint32_t *len,
                          uint16_t *tci)
{
	*tci = 0;
	*len = p->len;
	if (p->vlan) { /* the kernel took a tag off */
		if (!w->vlan_id || p->vlan >> 16 != VLAN_TPID || (p->vlan & 0xfff) != w->vlan_id)
			return NULL;
		*tci = (uint16_t)p->vlan;
		return p->data;
	}
	if (!w->vlan_id)
		return p->data; /* a tag in the bytes: the parser's vlan verdict */
	if (p->len < SECHO_ETH_HLEN + 4 || rd16(p->data + 12) != VLAN_TPID ||
	    (rd16(p->data + 14) & 0xfff) != w->vlan_id)
		return NULL;
	*tci = rd16(p->data + 14);
	memmove(p->data + 4, p->data, 2 * SECHO_ETH_ALEN);
	*len = p->len - 4;
	return p->data + 4;
}

/* An untagged frame built at out + 4 becomes a tagged one at out (see above). Can't fail. */
static void vlan_tag(uint8_t *out, uint16_t tci)
{
	memmove(out, out + 4, 2 * SECHO_ETH_ALEN);
	out[12] = (uint8_t)(VLAN_TPID >> 8);
	out[13] = (uint8_t)VLAN_TPID;
	out[14] = (uint8_t)(tci >> 8);
	out[15] = (uint8_t)tci;
}

/* Bytes the answers' VLAN tag adds: 4 with --vlan, else 0. */
static inline uint32_t l2_extra(const struct secho_worker *w)
{
	return w->vlan_id ? 4 : 0;
}

/* A dropped frame is counted; an ARP request (the view f of flen bytes, with the TCI of
 * its tag) is answered when --arp is on. */
static void reject(struct secho_worker *w, struct secho_io_pkt *p, const uint8_t *f, uint32_t flen,
                   uint16_t tci, enum secho_wire_verdict v)
{
	if (v == SECHO_WIRE_ARP) {
		uint8_t reply[64 + 4];
		uint32_t l2 = l2_extra(w);
		size_t n = w->arp ? secho_wire_arp_reply(w->wire, f, flen, reply + l2, 64) : 0;
		if (n) {
			if (l2)
				vlan_tag(reply, tci);
			send_built(w, p, reply, (uint32_t)n + l2);
			secho_ctr_add(&w->ctr.verdict[SECHO_WIRE_ARP],
			              1); /* answered, but still counted by kind */
		} else {
			secho_ctr_add(&w->ctr.drop[SECHO_DROP_ARP_IGNORED], 1);
		}
		return;
	}
	secho_ctr_add(&w->ctr.verdict[v], 1);
}

/* Post the request (view f) to the offload engine. */
static void post_offload(struct secho_worker *w, const uint8_t *f, const struct secho_wire_req *req,
                         uint16_t tci, uint64_t t_rx)
{
	int slot = secho_offload_slot_get(w->offq);
	if (slot < 0) {
		secho_ctr_add(&w->ctr.drop[SECHO_DROP_OFFLOAD_BUSY], 1);
		return;
	}
	uint64_t seq;
	if (take_seq(w, &seq)) {
		secho_offload_slot_put(w->offq, (uint32_t)slot);
		return;
	}
	struct secho_offload_job j = {.slot = (uint32_t)slot, .len = req->payload_len};
	secho_shdr_build(j.hdr, SECHO_SHDR_F_OFFLOAD | w->shdr_flags, w->key_id, w->salt, seq);
	memcpy(secho_offload_staging(w->offq, j.slot), f + req->payload_off, j.len);
	struct secho_pending *pd = &w->pending[slot];
	pd->req = *req;
	pd->t_rx = t_rx;
	pd->tci = tci;
	if (secho_offload_post(w->offq, &j) != 0) {
		secho_offload_slot_put(w->offq, (uint32_t)slot);
		secho_ctr_add(&w->ctr.drop[SECHO_DROP_OFFLOAD_BUSY], 1);
	}
}

static void send_report(struct secho_worker *w, struct secho_io_pkt *p,
                        const struct secho_wire_req *req, uint16_t tci, uint64_t now)
{
	if (!secho_report_allow(w->report, req->src_ip, now)) {
		secho_ctr_add(&w->ctr.drop[SECHO_DROP_REPORT_RATE], 1);
		return;
	}
	uint32_t l2 = l2_extra(w);
	uint8_t *start = w->scratch + (size_t)SECHO_IO_BURST * w->frame_cap, *buf = start + l2;
	size_t cap = SECHO_WIRE_MAX_PAYLOAD(w->wire->mtu);
	size_t n = secho_report_json(w->report, (char *)buf + SECHO_RESP_PAYLOAD_OFF, cap + 1);
	if (!n || n > cap) {
		secho_ctr_add(&w->ctr.drop[SECHO_DROP_REPORT_TOO_BIG], 1);
		return;
	}
	uint64_t seq;
	if (take_seq(w, &seq))
		return;
	struct secho_wire_req r = *req;
	r.payload_len = (uint16_t)n;
	uint8_t shdr[SECHO_SHDR_LEN];
	secho_shdr_build(shdr, SECHO_SHDR_F_COUNTERS | w->shdr_flags, w->key_id, w->salt, seq);
	size_t rlen =
	        secho_wire_rebuild(w->wire, &r, NULL, shdr, w->ip_id++, buf, w->frame_cap - l2);
	uint8_t *ct = buf + SECHO_RESP_PAYLOAD_OFF;
	if (!rlen || secho_gcm_seal(w->gk, shdr + 4, 12, shdr, 16, ct, ct, n, ct + n, 16) != 0) {
		secho_ctr_add(&w->ctr.drop[SECHO_DROP_CRYPTO_ERROR], 1);
		return;
	}
	secho_wire_finalize(buf, rlen);
	if (l2)
		vlan_tag(start, tci);
	if (send_built(w, p, start, (uint32_t)(rlen + l2)) == 0)
		secho_ctr_add(&w->ctr.reports, 1);
}

/* The idle warm-up (see secho_worker_warm_setup): the same calls as a real packet. */
static void warm(struct secho_worker *w)
{
	struct secho_wire_req req;
	if (secho_wire_parse(w->wire, w->warm_frame, w->warm_len, &req) != SECHO_WIRE_OK ||
	    secho_src_port_refused(w->wire, req.src_port))
		return;
	uint8_t *buf = w->scratch + (size_t)SECHO_IO_BURST * w->frame_cap;
	uint8_t shdr[SECHO_SHDR_LEN] = {0};
	size_t rlen = secho_wire_rebuild(w->wire, &req, NULL, shdr, 0, buf, w->frame_cap);
	secho_gcm_msg m = {.iv = buf + SECHO_RESP_SHDR_OFF + 4,
	                   .aad = buf + SECHO_RESP_SHDR_OFF,
	                   .aad_len = SECHO_SHDR_LEN,
	                   .in = w->warm_frame + req.payload_off,
	                   .out = buf + SECHO_RESP_PAYLOAD_OFF,
	                   .len = req.payload_len,
	                   .tag = buf + SECHO_RESP_TAG_OFF(req.payload_len)};
	if (rlen && secho_gcm_seal_batch(w->warm_key, &m, 1) == SECHO_OK)
		secho_wire_finalize(buf, rlen);
	for (size_t off = 0; off < sizeof(*w->gk); off += 64)
		__builtin_prefetch((const uint8_t *)w->gk + off, 0, 3);
	/* The TX ring slot the next response will be built in, for writing: the receiver
	 * read the previous frame from it on the other CPU, and building a response in lines
	 * the other CPU holds stalls on every first write. From the line holding the byte
	 * before the data (AF_PACKET: the slot's header, 32 bytes before it) to an MTU-sized
	 * frame. */
	uint8_t *nx = secho_io_tx_slot_ahead(w->io, 0, SECHO_RESP_LEN(WARM_PAYLOAD));
	if (nx) {
		uintptr_t a = ((uintptr_t)nx - 1) & ~(uintptr_t)63;
		for (uintptr_t end = (uintptr_t)nx + 1536; a < end; a += 64)
			__builtin_prefetch((const void *)a, 1, 3);
	}
}

unsigned secho_worker_rx(struct secho_worker *w)
{
	struct secho_io_pkt pkts[SECHO_IO_BURST];
	unsigned n = secho_io_rx_burst(w->io, pkts, SECHO_IO_BURST);
	if (!n)
		return 0;
	uint64_t t_rx = secho_rdtsc();
	secho_ctr_add(&w->ctr.rx_frames, n);

	/* Stage 1: parse and steer. */
	struct {
		uint8_t *base;  /* where the untagged response is built (a tag goes before it) */
		uint32_t rlen;  /* its length (untagged) */
		uint32_t front; /* for an in-place backend: the response starts this far before
		                 * the request */
		uint16_t pkt;   /* index into pkts */
		uint16_t tci;
	} sm[SECHO_IO_BURST];
	secho_gcm_msg msgs[SECHO_IO_BURST];
	unsigned ns = 0, no = 0, nl = 0;
	bool in_place = secho_io_tx_in_place(w->io), ahead = !in_place;
	uint32_t l2 = l2_extra(w);
	struct {
		uint16_t pkt;
		uint16_t tci;
		bool report;      /* else an ARP request */
		const uint8_t *f; /* the request's view, and its length */
		uint32_t flen;
		struct secho_wire_req req;
	} later[SECHO_IO_BURST]; /* answered after the streaming responses */

	for (unsigned i = 0; i < n; i++) {
		struct secho_wire_req req;
		struct secho_io_pkt *p = &pkts[i];
		if (p->flags & SECHO_IO_PKT_TRUNCATED) { /* longer than the MTU's buffers */
			secho_ctr_add(&w->ctr.drop[SECHO_DROP_RX_TRUNCATED], 1);
			continue;
		}
		uint32_t flen;
		uint16_t tci;
		uint8_t *f = vlan_view(w, p, &flen, &tci);
		if (!f) {
			secho_ctr_add(&w->ctr.verdict[SECHO_WIRE_VLAN], 1);
			continue;
		}
		enum secho_wire_verdict v = secho_wire_parse(w->wire, f, flen, &req);
		if (v == SECHO_WIRE_ARP && w->arp) {
			later[nl].pkt = (uint16_t)i;
			later[nl].tci = tci;
			later[nl].f = f;
			later[nl].flen = flen;
			later[nl++].report = false;
			continue;
		}
		if (v != SECHO_WIRE_OK) {
			reject(w, p, f, flen, tci, v);
			continue;
		}
		if (secho_src_port_refused(w->wire, req.src_port)) {
			secho_ctr_add(&w->ctr.drop[SECHO_DROP_SRC_PORT], 1);
			continue;
		}
		if (req.cls == SECHO_PORT_OFFLOAD) {
			post_offload(w, f, &req, tci, t_rx);
			no++;
			continue;
		}
		if (req.cls == SECHO_PORT_COUNTERS) {
			later[nl].pkt = (uint16_t)i;
			later[nl].tci = tci;
			later[nl].report = true;
			later[nl++].req = req;
			continue;
		}
		uint64_t seq;
		if (take_seq(w, &seq))
			continue;
		uint32_t len = req.payload_len;
		uint8_t *base = NULL;
		const uint8_t *in = f + req.payload_off;
		size_t cap = w->frame_cap - l2;
		/* In place: the untagged response 16 bytes before the view (the plaintext is
		 * then already at base + 58), its tag (if any) before that. */
		uint32_t front = (uint32_t)(p->data - (f - SECHO_SHDR_LEN - l2));
		if (in_place && front <= p->headroom &&
		    SECHO_RESP_LEN(len) + l2 <= (size_t)front + p->len + p->tailroom) {
			base = f - SECHO_SHDR_LEN;
			in = base + SECHO_RESP_PAYLOAD_OFF;
			cap = SECHO_RESP_LEN(len); /* it fits: checked just above */
		} else if (ahead) {
			cap = SECHO_RESP_LEN(len);
			base = secho_io_tx_slot_ahead(w->io, ns, (uint32_t)(cap + l2));
			ahead = base != NULL; /* the slots after a busy one are not used either */
			if (base)
				base += l2;
		}
		if (!base) {
			base = w->scratch + (size_t)ns * w->frame_cap + l2;
			cap = w->frame_cap - l2;
		}
		uint8_t shdr[SECHO_SHDR_LEN];
		secho_shdr_build(shdr, w->shdr_flags, w->key_id, w->salt, seq);
		size_t rlen = secho_wire_rebuild(w->wire, &req, NULL, shdr, w->ip_id++, base, cap);
		if (!rlen) { /* cannot happen: parse bounds the payload by the MTU */
			secho_ctr_add(&w->ctr.drop[SECHO_DROP_CRYPTO_ERROR], 1);
			continue;
		}
		secho_gcm_msg *m = &msgs[ns];
		m->iv = base + SECHO_RESP_SHDR_OFF + 4;
		m->aad = base + SECHO_RESP_SHDR_OFF;
		m->aad_len = SECHO_SHDR_LEN;
		m->in = in;
		m->out = base + SECHO_RESP_PAYLOAD_OFF;
		m->len = len;
		m->tag = base + SECHO_RESP_TAG_OFF(len);
		m->status = 0;
		sm[ns].base = base;
		sm[ns].rlen = (uint32_t)rlen;
		sm[ns].front = front;
		sm[ns].pkt = (uint16_t)i;
		sm[ns].tci = tci;
		ns++;
	}
	uint64_t t_parsed = secho_rdtsc();

	/* Stage 2: the streaming engine, once for the burst. */
	if (ns)
		secho_gcm_seal_batch(w->gk, msgs, ns);

	/* Stage 3: rebuild (checksum) and TX. */
	struct secho_engine_counters *es = &w->ctr.eng[SECHO_ENG_STREAM];
	for (unsigned k = 0; k < ns; k++) {
		if (msgs[k].status != SECHO_OK) {
			secho_ctr_add(&w->ctr.drop[SECHO_DROP_CRYPTO_ERROR], 1);
			continue;
		}
		struct secho_io_pkt *p = &pkts[sm[k].pkt];
		uint8_t *start = sm[k].base - l2;
		uint32_t flen = sm[k].rlen + l2;
		secho_wire_finalize(sm[k].base, sm[k].rlen);
		if (l2)
			vlan_tag(start, sm[k].tci);
		uint8_t *out = secho_io_tx_slot(w->io, p, flen, sm[k].front);
		if (!out) {
			secho_ctr_add(&w->ctr.drop[SECHO_DROP_TX_FULL], 1);
			continue;
		}
		if (out != start)
			memcpy(out, start, flen);
		secho_io_tx_commit(w->io, p, flen);
		uint64_t t_tx = secho_rdtsc();
		secho_lat_record(&es->lat, t_tx - t_rx);
		secho_ctr_add(&es->packets, 1);
		secho_ctr_add(&es->bytes, msgs[k].len);
		secho_ctr_add(&w->ctr.tx_frames, 1);
	}
	for (unsigned k = 0; k < nl; k++) {
		struct secho_io_pkt *p = &pkts[later[k].pkt];
		if (later[k].report)
			send_report(w, p, &later[k].req, later[k].tci, t_rx);
		else
			reject(w, p, later[k].f, later[k].flen, later[k].tci, SECHO_WIRE_ARP);
	}
	secho_io_tx_flush(w->io);
	secho_io_rx_release(w->io, pkts, n);
	uint64_t t_end = secho_rdtsc();

	uint64_t parse = t_parsed - t_rx;
	secho_ctr_add(&es->dp_cycles, parse * ns / n + (t_end - t_parsed));
	secho_ctr_add(&w->ctr.eng[SECHO_ENG_OFFLOAD].dp_cycles, parse * no / n);
	if (w->warm_frame && secho_io_wait(w->io, 0) == 0)
		warm(w);
	return n;
}

unsigned secho_worker_completions(struct secho_worker *w)
{
	if (!w->offq || !secho_offload_inflight(w->offq))
		return 0;
	struct secho_offload_job jobs[SECHO_IO_BURST];
	unsigned n = secho_offload_poll(w->offq, jobs, SECHO_IO_BURST);
	if (!n)
		return 0;
	uint64_t t0 = secho_rdtsc();
	struct secho_engine_counters *eo = &w->ctr.eng[SECHO_ENG_OFFLOAD];
	unsigned sent = 0;
	for (unsigned i = 0; i < n; i++) {
		struct secho_offload_job *j = &jobs[i];
		struct secho_pending *pd = &w->pending[j->slot];
		if (j->status != 0) {
			secho_ctr_add(&w->ctr.drop[SECHO_DROP_OFFLOAD_ERROR], 1);
			secho_offload_slot_put(w->offq, j->slot);
			continue;
		}
		uint32_t rlen = (uint32_t)SECHO_RESP_LEN(j->len), l2 = l2_extra(w);
		uint8_t *start = secho_io_tx_slot(w->io, NULL, rlen + l2, 0);
		if (!start) {
			secho_ctr_add(&w->ctr.drop[SECHO_DROP_TX_FULL], 1);
			secho_offload_slot_put(w->offq, j->slot);
			continue;
		}
		/* The transaction's read-back: ciphertext and tag out of the staging buffer. */
		uint8_t *out = start + l2;
		secho_wire_rebuild(w->wire, &pd->req, NULL, j->hdr, w->ip_id++, out, rlen);
		memcpy(out + SECHO_RESP_PAYLOAD_OFF, secho_offload_staging(w->offq, j->slot),
		       j->len);
		memcpy(out + SECHO_RESP_TAG_OFF(j->len), j->tag, SECHO_TAG_LEN);
		secho_wire_finalize(out, rlen);
		if (l2)
			vlan_tag(start, pd->tci);
		secho_io_tx_commit(w->io, NULL, rlen + l2);
		uint64_t t_tx = secho_rdtsc();
		secho_lat_record(&eo->lat, t_tx - pd->t_rx);
		secho_ctr_add(&eo->packets, 1);
		secho_ctr_add(&eo->bytes, j->len);
		secho_ctr_add(&w->ctr.tx_frames, 1);
		secho_offload_slot_put(w->offq, j->slot);
		sent++;
	}
	secho_io_tx_flush(w->io);
	secho_ctr_add(&eo->dp_cycles, secho_rdtsc() - t0);
	return sent;
}

int secho_worker_loop(struct secho_worker *w, const _Atomic int *stop)
{
	int rc = 0;
	/* Waiting for completions with nothing else to do: spin (an answer takes about 2 us)
	 * but, after 20 us, yield the CPU each turn: the engine thread may be waiting for this
	 * very CPU (with a worker on every CPU it shares one with a worker, and a spinning
	 * worker would hold it off until the scheduler's next tick). Not sooner: on a busy
	 * machine a yield hands the CPU to whatever else runs. */
	uint64_t yield_after = (uint64_t)(20e-6 * secho_tsc_hz()), waiting = 0;
	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		unsigned got = secho_worker_rx(w);
		unsigned sent = secho_worker_completions(w);
		if (got || sent)
			waiting = 0;
		if (got)
			continue;
		if (w->offq && secho_offload_inflight(w->offq)) {
			if (secho_io_wait(w->io, 0) == 0) {
				uint64_t now = secho_rdtsc();
				if (!waiting)
					waiting = now;
				else if (now - waiting > yield_after)
					sched_yield();
			}
			continue;
		}
		waiting = 0;
		if (secho_io_eof(w->io))
			break;
		int wr = secho_io_wait(w->io, 100);
		if (wr < 0 && wr != -EINTR) {
			rc = wr;
			break;
		}
	}
	/* Drain: every posted job completes and is sent. */
	uint64_t until = secho_rdtsc() + (uint64_t)(2 * secho_tsc_hz());
	while (w->offq && secho_offload_inflight(w->offq) && secho_rdtsc() < until)
		secho_worker_completions(w);
	secho_io_tx_flush(w->io);
	return rc;
}
