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
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "secho/tsc.h"

#define SCRATCH_FRAME 2048u

int secho_worker_init(struct secho_worker *w, unsigned offload_ring)
{
	w->pending = calloc(offload_ring ? offload_ring : 1, sizeof(*w->pending));
	w->scratch = aligned_alloc(64, (size_t)(SECHO_IO_BURST + 1) * SCRATCH_FRAME);
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
		secho_wipe(w->scratch, (size_t)(SECHO_IO_BURST + 1) * SCRATCH_FRAME);
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
	w->warm_frame = aligned_alloc(64, SCRATCH_FRAME);
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
	memset(w->warm_frame, 0, SCRATCH_FRAME);
	size_t n = secho_wire_rebuild(&peer, &to_us, NULL, shdr, 1, w->warm_frame, SCRATCH_FRAME);
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
	if (w->seq_next >= w->seq_end) {
		int rc = w->refill ? w->refill(w) : -ENOSPC;
		if (rc) {
			w->ctr.drop[rc == -EAGAIN ? SECHO_DROP_SEQ_PENDING
			                          : SECHO_DROP_SEQ_EXHAUSTED]++;
			return -1;
		}
	}
	*seq = w->seq_next++;
	return 0;
}

/* Send a response already built (checksummed) at buf, answering rx (may be NULL). */
static int send_built(struct secho_worker *w, struct secho_io_pkt *rx, const uint8_t *buf,
                      uint32_t rlen)
{
	uint8_t *out = secho_io_tx_slot(w->io, rx, rlen, 0);
	if (!out) {
		w->ctr.drop[SECHO_DROP_TX_FULL]++;
		return -1;
	}
	if (out != buf)
		memmove(out, buf, rlen);
	secho_io_tx_commit(w->io, rx, rlen);
	w->ctr.tx_frames++;
	return 0;
}

static void reject(struct secho_worker *w, struct secho_io_pkt *p, enum secho_wire_verdict v)
{
	if (v == SECHO_WIRE_ARP) {
		uint8_t reply[64];
		size_t n = w->arp ? secho_wire_arp_reply(w->wire, p->data, p->len, reply,
		                                         sizeof(reply))
		                  : 0;
		if (n) {
			send_built(w, p, reply, (uint32_t)n);
			w->ctr.verdict[SECHO_WIRE_ARP]++; /* answered, but still counted by kind */
		} else {
			w->ctr.drop[SECHO_DROP_ARP_IGNORED]++;
		}
		return;
	}
	w->ctr.verdict[v]++;
}

static void post_offload(struct secho_worker *w, struct secho_io_pkt *p,
                         const struct secho_wire_req *req, uint64_t t_rx)
{
	int slot = secho_offload_slot_get(w->off);
	if (slot < 0) {
		w->ctr.drop[SECHO_DROP_OFFLOAD_BUSY]++;
		return;
	}
	uint64_t seq;
	if (take_seq(w, &seq)) {
		secho_offload_slot_put(w->off, (uint32_t)slot);
		return;
	}
	struct secho_offload_job j = {
	        .slot = (uint32_t)slot, .len = req->payload_len, .cookie = (uint64_t)slot};
	secho_shdr_build(j.hdr, SECHO_SHDR_F_OFFLOAD | w->shdr_flags, w->key_id, w->salt, seq);
	memcpy(secho_offload_staging(w->off, j.slot), p->data + req->payload_off, j.len);
	struct secho_pending *pd = &w->pending[slot];
	pd->req = *req;
	pd->t_rx = t_rx;
	if (secho_offload_post(w->off, &j) != 0) {
		secho_offload_slot_put(w->off, (uint32_t)slot);
		w->ctr.drop[SECHO_DROP_OFFLOAD_BUSY]++;
	}
}

static void send_report(struct secho_worker *w, struct secho_io_pkt *p,
                        const struct secho_wire_req *req, uint64_t now)
{
	if (!secho_report_allow(w->report, req->src_ip, now)) {
		w->ctr.drop[SECHO_DROP_REPORT_RATE]++;
		return;
	}
	uint8_t *buf = w->scratch + (size_t)SECHO_IO_BURST * SCRATCH_FRAME;
	size_t cap = SECHO_WIRE_MAX_PAYLOAD(w->wire->mtu);
	size_t n = secho_report_json(w->report, (char *)buf + SECHO_RESP_PAYLOAD_OFF, cap + 1);
	if (!n || n > cap) {
		w->ctr.drop[SECHO_DROP_REPORT_TOO_BIG]++;
		return;
	}
	uint64_t seq;
	if (take_seq(w, &seq))
		return;
	struct secho_wire_req r = *req;
	r.payload_len = (uint16_t)n;
	uint8_t shdr[SECHO_SHDR_LEN];
	secho_shdr_build(shdr, SECHO_SHDR_F_COUNTERS | w->shdr_flags, w->key_id, w->salt, seq);
	size_t rlen = secho_wire_rebuild(w->wire, &r, NULL, shdr, w->ip_id++, buf, SCRATCH_FRAME);
	uint8_t *ct = buf + SECHO_RESP_PAYLOAD_OFF;
	if (!rlen || secho_gcm_seal(w->gk, shdr + 4, 12, shdr, 16, ct, ct, n, ct + n, 16) != 0) {
		w->ctr.drop[SECHO_DROP_CRYPTO_ERROR]++;
		return;
	}
	secho_wire_finalize(buf, rlen);
	if (send_built(w, p, buf, (uint32_t)rlen) == 0)
		w->ctr.reports++;
}

/* The idle warm-up (see secho_worker_warm_setup): the same calls as a real packet. */
static void warm(struct secho_worker *w)
{
	struct secho_wire_req req;
	if (secho_wire_parse(w->wire, w->warm_frame, w->warm_len, &req) != SECHO_WIRE_OK ||
	    secho_src_port_refused(w->wire, req.src_port))
		return;
	uint8_t *buf = w->scratch + (size_t)SECHO_IO_BURST * SCRATCH_FRAME;
	uint8_t shdr[SECHO_SHDR_LEN] = {0};
	size_t rlen = secho_wire_rebuild(w->wire, &req, NULL, shdr, 0, buf, SCRATCH_FRAME);
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
	w->ctr.rx_frames += n;

	/* Stage 1: parse and steer. */
	struct {
		uint8_t *base; /* where the response is built */
		uint32_t rlen;
		uint16_t pkt; /* index into pkts */
	} sm[SECHO_IO_BURST];
	secho_gcm_msg msgs[SECHO_IO_BURST];
	unsigned ns = 0, no = 0, nl = 0;
	bool in_place = secho_io_tx_in_place(w->io), ahead = !in_place;
	struct {
		uint16_t pkt;
		bool report; /* else an ARP request */
		struct secho_wire_req req;
	} later[SECHO_IO_BURST]; /* answered after the streaming responses */

	for (unsigned i = 0; i < n; i++) {
		struct secho_wire_req req;
		struct secho_io_pkt *p = &pkts[i];
		enum secho_wire_verdict v = secho_wire_parse(w->wire, p->data, p->len, &req);
		if (v == SECHO_WIRE_ARP && w->arp) {
			later[nl].pkt = (uint16_t)i;
			later[nl++].report = false;
			continue;
		}
		if (v != SECHO_WIRE_OK) {
			reject(w, p, v);
			continue;
		}
		if (secho_src_port_refused(w->wire, req.src_port)) {
			w->ctr.drop[SECHO_DROP_SRC_PORT]++;
			continue;
		}
		if (req.cls == SECHO_PORT_OFFLOAD) {
			post_offload(w, p, &req, t_rx);
			no++;
			continue;
		}
		if (req.cls == SECHO_PORT_COUNTERS) {
			later[nl].pkt = (uint16_t)i;
			later[nl].report = true;
			later[nl++].req = req;
			continue;
		}
		uint64_t seq;
		if (take_seq(w, &seq))
			continue;
		uint32_t len = req.payload_len;
		uint8_t *base = NULL;
		const uint8_t *in = p->data + req.payload_off;
		size_t cap = SCRATCH_FRAME;
		if (in_place && p->headroom >= SECHO_SHDR_LEN &&
		    p->tailroom >= SECHO_RESP_OVERHEAD - SECHO_SHDR_LEN) {
			base = p->data - SECHO_SHDR_LEN; /* plaintext already at base + 58 */
			in = base + SECHO_RESP_PAYLOAD_OFF;
		} else if (ahead) {
			cap = SECHO_RESP_LEN(len);
			base = secho_io_tx_slot_ahead(w->io, ns, (uint32_t)cap);
			ahead = base != NULL; /* the slots after a busy one are not used either */
		}
		if (!base) {
			base = w->scratch + (size_t)ns * SCRATCH_FRAME;
			cap = SCRATCH_FRAME;
		}
		uint8_t shdr[SECHO_SHDR_LEN];
		secho_shdr_build(shdr, w->shdr_flags, w->key_id, w->salt, seq);
		size_t rlen = secho_wire_rebuild(w->wire, &req, NULL, shdr, w->ip_id++, base, cap);
		if (!rlen) { /* cannot happen: parse bounds the payload by the MTU */
			w->ctr.drop[SECHO_DROP_CRYPTO_ERROR]++;
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
		sm[ns].pkt = (uint16_t)i;
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
			w->ctr.drop[SECHO_DROP_CRYPTO_ERROR]++;
			continue;
		}
		struct secho_io_pkt *p = &pkts[sm[k].pkt];
		secho_wire_finalize(sm[k].base, sm[k].rlen);
		uint8_t *out = secho_io_tx_slot(w->io, p, sm[k].rlen, SECHO_SHDR_LEN);
		if (!out) {
			w->ctr.drop[SECHO_DROP_TX_FULL]++;
			continue;
		}
		if (out != sm[k].base)
			memcpy(out, sm[k].base, sm[k].rlen);
		secho_io_tx_commit(w->io, p, sm[k].rlen);
		uint64_t t_tx = secho_rdtsc();
		secho_lat_record(&es->lat, t_tx - t_rx);
		es->packets++;
		es->bytes += msgs[k].len;
		w->ctr.tx_frames++;
	}
	for (unsigned k = 0; k < nl; k++) {
		struct secho_io_pkt *p = &pkts[later[k].pkt];
		if (later[k].report)
			send_report(w, p, &later[k].req, t_rx);
		else
			reject(w, p, SECHO_WIRE_ARP);
	}
	secho_io_tx_flush(w->io);
	secho_io_rx_release(w->io, pkts, n);
	uint64_t t_end = secho_rdtsc();

	uint64_t parse = t_parsed - t_rx;
	es->dp_cycles += parse * ns / n + (t_end - t_parsed);
	w->ctr.eng[SECHO_ENG_OFFLOAD].dp_cycles += parse * no / n;
	if (w->warm_frame && secho_io_wait(w->io, 0) == 0)
		warm(w);
	return n;
}

unsigned secho_worker_completions(struct secho_worker *w)
{
	if (!w->off || !secho_offload_inflight(w->off))
		return 0;
	struct secho_offload_job jobs[SECHO_IO_BURST];
	unsigned n = secho_offload_poll(w->off, jobs, SECHO_IO_BURST);
	if (!n)
		return 0;
	uint64_t t0 = secho_rdtsc();
	struct secho_engine_counters *eo = &w->ctr.eng[SECHO_ENG_OFFLOAD];
	unsigned sent = 0;
	for (unsigned i = 0; i < n; i++) {
		struct secho_offload_job *j = &jobs[i];
		struct secho_pending *pd = &w->pending[j->slot];
		if (j->status != 0) {
			w->ctr.drop[SECHO_DROP_OFFLOAD_ERROR]++;
			secho_offload_slot_put(w->off, j->slot);
			continue;
		}
		uint32_t rlen = (uint32_t)SECHO_RESP_LEN(j->len);
		uint8_t *out = secho_io_tx_slot(w->io, NULL, rlen, 0);
		if (!out) {
			w->ctr.drop[SECHO_DROP_TX_FULL]++;
			secho_offload_slot_put(w->off, j->slot);
			continue;
		}
		/* The transaction's read-back: ciphertext and tag out of the staging buffer. */
		secho_wire_rebuild(w->wire, &pd->req, NULL, j->hdr, w->ip_id++, out, rlen);
		memcpy(out + SECHO_RESP_PAYLOAD_OFF, secho_offload_staging(w->off, j->slot),
		       j->len);
		memcpy(out + SECHO_RESP_TAG_OFF(j->len), j->tag, SECHO_TAG_LEN);
		secho_wire_finalize(out, rlen);
		secho_io_tx_commit(w->io, NULL, rlen);
		uint64_t t_tx = secho_rdtsc();
		secho_lat_record(&eo->lat, t_tx - pd->t_rx);
		eo->packets++;
		eo->bytes += j->len;
		w->ctr.tx_frames++;
		secho_offload_slot_put(w->off, j->slot);
		sent++;
	}
	secho_io_tx_flush(w->io);
	eo->dp_cycles += secho_rdtsc() - t0;
	return sent;
}
