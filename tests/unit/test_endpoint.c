/*
 * tests/unit/test_endpoint.c - the whole data path offline, through the pcap backend:
 * valid requests to both engines and the counters port, plus malformed frames, go in
 * through a capture file; every response that comes out is checked independently (its
 * own checksum code, OpenSSL for the cryptography), every malformed frame must be unanswered
 * and counted under its own reason, and rx = answered + dropped.
 */
#include <arpa/inet.h>
#include <openssl/evp.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "endpoint/pipeline.h"
#include "endpoint/report.h"
#include "endpoint/seqlease.h"
#include "eptest.h"
#include "harness.h"
#include "host/verify.h"
#include "secho/keyfile.h"
#include "secho/tsc.h"

#define NREQ 300 /* per engine */

static const uint8_t EP_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
static const uint8_t H_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};

/* An Ethernet/IPv4/UDP request from 192.0.2.1:sport to 192.0.2.2:dport. */
static size_t build_req(uint8_t *f, uint16_t sport, uint16_t dport, const uint8_t *pl, size_t len)
{
	return ept_request(f, EP_MAC, H_MAC, 1, sport, dport, pl, len);
}

struct req_rec {
	uint16_t dport;
	size_t len;
	uint8_t pl[1440];
	int answered;
};

static struct req_rec reqs[3 * NREQ + 8];

static void dump(pcap_dumper_t *d, const uint8_t *f, size_t n)
{
	struct pcap_pkthdr h = {.caplen = (bpf_u_int32)n, .len = (bpf_u_int32)n};
	pcap_dump((u_char *)d, &h, f);
}

static int refill(struct secho_worker *w)
{
	return secho_seqlease_refill(w->refill_arg, &w->lease);
}

/* An offload engine with one queue pair (one worker), OpenSSL backend, 20 us spin. */
static struct secho_offload *offload_1q(const uint8_t key[32], unsigned ring, uint32_t max_len,
                                        char *err, size_t errlen)
{
	struct secho_offload_cfg oc = {.backend = SECHO_OFFLOAD_OPENSSL,
	                               .queues = 1,
	                               .ring_size = ring,
	                               .spin_us = 20,
	                               .max_len = max_len};
	return secho_offload_create(&oc, key, err, errlen);
}

/* Two endpoints sharing one key (each its own instance id), given the very same sequence
 * numbers (two starts in the same microsecond, or one state restored into two places):
 * every response's IV must still be unique, its header must carry the instance, and the
 * host's verifier (nettle) must accept it with the shared key and refuse it without.
 * `instances` false runs the same two endpoints as unshared ones: the control case, whose
 * IVs repeat (it is how main numbered a shared key). Returns the IVs repeated across both. */
#define SHARED_NREQ 40
static uint64_t fixed_next;
static int fixed_refill(struct secho_worker *w)
{
	w->lease.next = fixed_next; /* both endpoints: the same numbers from 5000 on */
	w->lease.end = fixed_next + 256;
	fixed_next += 256;
	return 0;
}

static unsigned run_shared(const char *dir, const uint8_t key[32], const uint8_t salt[4],
                           bool instances)
{
	char in_path[256], out_path[2][256], err[256];
	snprintf(in_path, sizeof(in_path), "%s/shared-in.pcap", dir);
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d = pcap_dump_open(dead, in_path);
	static uint8_t f[2048];
	static struct req_rec rq[SHARED_NREQ + 1];
	for (unsigned i = 0; i <= SHARED_NREQ; i++) {
		rq[i].dport = (uint16_t)(i == SHARED_NREQ ? 4002 : 4000 + i % 2);
		rq[i].len = i == SHARED_NREQ ? 0 : t_randrange(0, 300);
		t_randbytes(rq[i].pl, rq[i].len);
		dump(d, f, build_req(f, (uint16_t)(20000 + i), rq[i].dport, rq[i].pl, rq[i].len));
	}
	pcap_dump_close(d);
	pcap_close(dead);

	struct secho_wire_cfg wc;
	ept_wire_cfg(&wc, EP_MAC);
	secho_gcm_key gk;
	secho_gcm_key_init(&gk, key, 32, SECHO_IMPL_AUTO);
	for (unsigned e = 0; e < 2; e++) {
		uint32_t instance = instances ? 1 + e : 0;
		snprintf(out_path[e], sizeof(out_path[e]), "%s/shared-out%u.pcap", dir, e);
		struct secho_io_cfg ioc = {
		        .kind = SECHO_IO_PCAP, .pcap_in = in_path, .pcap_out = out_path[e]};
		struct secho_io *io = secho_io_open(&ioc, err, sizeof(err));
		struct secho_offload *off = offload_1q(key, 64, 1440, err, sizeof(err));
		static struct secho_worker w;
		static struct secho_report_ctx rep;
		struct secho_counters *ws[1] = {&w.ctr};
		memset(&w, 0, sizeof(w));
		if (!T_CHECK(io && off && secho_worker_init(&w, 64, 1500) == 0, "set-up: %s", err))
			return 0;
		secho_report_init(&rep, 2);
		rep.ctr = ws;
		rep.nworkers = 1;
		w.io = io;
		w.wire = &wc;
		w.gk = &gk;
		w.offq = secho_offload_queue(off, 0);
		w.key_id = 9;
		secho_shdr_fixed(salt, instance, w.salt);
		w.shdr_flags = instance ? SECHO_SHDR_F_INSTANCE : 0;
		w.report = &rep;
		w.refill = fixed_refill;
		fixed_next = 5000;
		uint64_t until = secho_rdtsc() + (uint64_t)(20 * secho_tsc_hz());
		while (secho_rdtsc() < until) {
			unsigned got = secho_worker_rx(&w);
			secho_worker_completions(&w);
			if (!got && secho_io_eof(io) && !secho_offload_inflight(w.offq))
				break;
		}
		secho_io_close(io);
		secho_worker_fini(&w);
		secho_offload_destroy(off);
	}
	secho_gcm_key_wipe(&gk);

	/* Check both outputs; collect every IV. */
	struct secho_host_key hk = {.key_id = 9, .shared = true};
	memcpy(hk.key, key, 32);
	memcpy(hk.salt, salt, 4);
	static struct secho_verifier vs, vu; /* shared, unshared */
	secho_verifier_init(&vs, &hk, 4000, 4001, 4002);
	hk.shared = false;
	secho_verifier_init(&vu, &hk, 4000, 4001, 4002);
	const struct secho_vpath path = {.host_mac = {2, 0, 0, 0, 0, 1},
	                                 .ep_mac = {2, 0, 0, 0, 0, 2},
	                                 .host_ip = {192, 0, 2, 1},
	                                 .ep_ip = {192, 0, 2, 2}};
	static uint8_t ivs[2 * (SHARED_NREQ + 1)][12], report[2048];
	unsigned niv = 0, nresp = 0, bad_hdr = 0, bad_crypto = 0, bad_host = 0, host_unshared = 0;
	for (unsigned e = 0; e < 2; e++) {
		/* the host verifier: one run per endpoint (its repeat check is per run) */
		secho_seqset_free(&vs.seen);
		secho_seqset_init(&vs.seen, 64);
		pcap_t *rp = pcap_open_offline(out_path[e], err);
		struct pcap_pkthdr *h;
		const u_char *fr;
		while (rp && pcap_next_ex(rp, &h, &fr) == 1 && niv < 2 * (SHARED_NREQ + 1)) {
			const uint8_t *u = fr + 34, *hdr = u + 8;
			unsigned idx = (unsigned)(u[2] << 8 | u[3]) - 20000u;
			size_t ctlen = h->caplen - 58 - 16;
			if (idx > SHARED_NREQ || h->caplen < 74)
				continue;
			nresp++;
			uint8_t want[4];
			secho_shdr_fixed(salt, instances ? 1 + e : 0, want);
			bad_hdr += !!(hdr[1] & SECHO_SHDR_F_INSTANCE) != instances ||
			           memcmp(hdr + 4, want, 4) != 0;
			static uint8_t pt[2048];
			bad_crypto +=
			        !ept_gcm_open(key, hdr, hdr + 16, ctlen, hdr + 16 + ctlen, pt);
			struct secho_vreq r = {.payload = rq[idx].pl,
			                       .len = rq[idx].len,
			                       .dport = rq[idx].dport,
			                       .sport = (uint16_t)(20000 + idx)};
			struct secho_vresult res;
			unsigned got = secho_verify_frame(instances ? &vs : &vu, &path, &r, fr,
			                                  h->caplen, report, sizeof(report), &res);
			/* (unshared, the second endpoint's numbers repeat the first's: counted
			 * below as repeated IVs, not here) */
			bad_host += got != SECHO_VF_OK && (instances || e == 0);
			if (instances) /* an unshared verifier refuses the instance's header */
				host_unshared +=
				        secho_verify_frame(&vu, &path, &r, fr, h->caplen, report,
				                           sizeof(report), &res) != SECHO_VF_OK;
			memcpy(ivs[niv++], hdr + 4, 12);
		}
		if (rp)
			pcap_close(rp);
		unlink(out_path[e]);
	}
	unlink(in_path);
	secho_verifier_free(&vs);
	secho_verifier_free(&vu);
	unsigned repeated = 0;
	for (unsigned i = 0; i < niv; i++)
		for (unsigned j = i + 1; j < niv; j++)
			repeated += !memcmp(ivs[i], ivs[j], 12);
	T_CHECK(nresp == 2 * (SHARED_NREQ + 1), "%u responses from the two endpoints", nresp);
	T_CHECK(bad_hdr == 0, "%u headers without the %s", bad_hdr,
	        instances ? "instance flag and fixed field" : "plain salt");
	T_CHECK(bad_crypto == 0, "%u responses do not decrypt (OpenSSL, IV from the header)",
	        bad_crypto);
	T_CHECK(bad_host == 0, "%u responses refused by the host's verifier", bad_host);
	if (instances)
		T_CHECK(host_unshared == nresp, "an unshared key's verifier accepted %u",
		        nresp - host_unshared);
	return repeated;
}

static void test_shared_key(const char *dir)
{
	t_begin("shared key: two endpoints, the same sequence numbers, every IV unique");
	uint8_t key[32], salt[4];
	t_randbytes(key, 32);
	t_randbytes(salt, 4);
	unsigned rep_shared = run_shared(dir, key, salt, true);
	T_CHECK(rep_shared == 0, "%u IVs repeated across two instances of one key", rep_shared);
	/* The control: the same two endpoints without instance ids repeat every IV. */
	unsigned rep_plain = run_shared(dir, key, salt, false);
	T_CHECK(rep_plain == SHARED_NREQ + 1, "control without instances: %u IVs repeated",
	        rep_plain);
	/* The key file: "shared yes" parses, anything else is refused. */
	struct secho_keyfile k;
	char err[200];
	static const char yes[] =
	        "secho-key 1\nkey-id 9\nkey "
	        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
	        "salt a1b2c3d4\nshared yes\n";
	T_CHECK(secho_keyfile_parse(yes, sizeof(yes) - 1, &k, err, sizeof(err)) == 0 && k.shared,
	        "shared yes: %s", err);
	static const char bad[] =
	        "secho-key 1\nkey-id 9\nkey "
	        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
	        "salt a1b2c3d4\nshared maybe\n";
	T_CHECK(secho_keyfile_parse(bad, sizeof(bad) - 1, &k, err, sizeof(err)) != 0 &&
	                strstr(err, "line 5"),
	        "shared maybe refused: %s", err);
	secho_keyfile_wipe(&k);
	t_end();
}

/* Jumbo frames offline: at MTU 9000 every payload size up to 8940 is answered by both
 * engines, with the responses built in place and copied (the pcap backend's two modes: as
 * AF_XDP and as AF_PACKET's TX ring); 8941 is payload_long. Scratch, staging and TX
 * buffers are sized from the MTU (at 2 KiB the streaming engine's answers failed as
 * crypto_error and the offload's as offload_busy). */
static void test_jumbo(const char *dir)
{
	static const size_t sizes[] = {0, 1440, 1900, 1990, 2048, 4000, 8192, 8940, 8941};
	enum { NS = sizeof(sizes) / sizeof(sizes[0]) };
	uint8_t key[32];
	t_randbytes(key, 32);
	for (int copy = 0; copy < 2; copy++) {
		t_begin("MTU 9000 offline (responses %s): payloads up to 8940 answered by both "
		        "engines",
		        copy ? "copied" : "in place");
		char in_path[256], out_path[256], err[256];
		snprintf(in_path, sizeof(in_path), "%s/jumbo-in.pcap", dir);
		snprintf(out_path, sizeof(out_path), "%s/jumbo-out.pcap", dir);
		pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
		pcap_dumper_t *d = pcap_dump_open(dead, in_path);
		static uint8_t f[9100], pl[8941], pt[9100];
		t_randbytes(pl, sizeof(pl));
		for (unsigned i = 0; i < 2 * NS; i++)
			dump(d, f,
			     build_req(f, (uint16_t)(30000 + i), (uint16_t)(4000 + i % 2), pl,
			               sizes[i / 2]));
		pcap_dump_close(d);
		pcap_close(dead);

		struct secho_wire_cfg wc;
		ept_wire_cfg(&wc, EP_MAC);
		wc.mtu = 9000;
		struct secho_io_cfg ioc = {.kind = SECHO_IO_PCAP,
		                           .pcap_in = in_path,
		                           .pcap_out = out_path,
		                           .tx_copy = copy,
		                           .max_frame = 9018};
		struct secho_io *io = secho_io_open(&ioc, err, sizeof(err));
		struct secho_offload *off = offload_1q(
		        key, 64, (uint32_t)SECHO_WIRE_MAX_PAYLOAD(9000), err, sizeof(err));
		static struct secho_worker w;
		static struct secho_report_ctx rep;
		struct secho_counters *ws[1] = {&w.ctr};
		secho_gcm_key gk;
		memset(&w, 0, sizeof(w));
		if (!T_CHECK(io && off && secho_worker_init(&w, 64, 9000) == 0 &&
		                     secho_gcm_key_init(&gk, key, 32, SECHO_IMPL_AUTO) == SECHO_OK,
		             "set-up: %s", err)) {
			t_end();
			return;
		}
		secho_report_init(&rep, 2);
		rep.ctr = ws;
		rep.nworkers = 1;
		w.io = io;
		w.wire = &wc;
		w.gk = &gk;
		w.offq = secho_offload_queue(off, 0);
		w.key_id = 9;
		w.report = &rep;
		w.refill = fixed_refill;
		fixed_next = 1;
		uint64_t until = secho_rdtsc() + (uint64_t)(20 * secho_tsc_hz());
		while (secho_rdtsc() < until) {
			unsigned got = secho_worker_rx(&w);
			secho_worker_completions(&w);
			if (!got && secho_io_eof(io) && !secho_offload_inflight(w.offq))
				break;
		}
		struct secho_counters c;
		secho_report_collect(&rep, &c, NULL);
		secho_io_close(io);
		unsigned answered[2 * NS] = {0}, bad = 0;
		pcap_t *rp = pcap_open_offline(out_path, err);
		struct pcap_pkthdr *h;
		const u_char *fr;
		while (rp && pcap_next_ex(rp, &h, &fr) == 1) {
			const uint8_t *hdr = fr + 42;
			unsigned i = (unsigned)(fr[36] << 8 | fr[37]) - 30000u;
			size_t ctlen = h->caplen - 58 - 16;
			if (i >= 2 * NS || h->caplen < 74) {
				bad++;
				continue;
			}
			answered[i]++;
			bad += ctlen != sizes[i / 2] ||
			       !ept_gcm_open(key, hdr, hdr + 16, ctlen, hdr + 16 + ctlen, pt) ||
			       memcmp(pt, pl, ctlen) != 0;
		}
		if (rp)
			pcap_close(rp);
		for (unsigned i = 0; i < 2 * NS; i++)
			T_CHECK(answered[i] == (sizes[i / 2] <= 8940),
			        "%zu bytes to port %u: answered %u times", sizes[i / 2],
			        4000 + i % 2, answered[i]);
		T_CHECK(bad == 0, "%u responses wrong", bad);
		T_CHECK(c.verdict[SECHO_WIRE_PAYLOAD_LONG] == 2, "payload_long %llu",
		        (unsigned long long)c.verdict[SECHO_WIRE_PAYLOAD_LONG]);
		T_CHECK(c.drop[SECHO_DROP_CRYPTO_ERROR] == 0 &&
		                c.drop[SECHO_DROP_OFFLOAD_BUSY] == 0 &&
		                c.drop[SECHO_DROP_TX_FULL] == 0,
		        "crypto_error %llu, offload_busy %llu, tx_full %llu",
		        (unsigned long long)c.drop[SECHO_DROP_CRYPTO_ERROR],
		        (unsigned long long)c.drop[SECHO_DROP_OFFLOAD_BUSY],
		        (unsigned long long)c.drop[SECHO_DROP_TX_FULL]);
		secho_worker_fini(&w);
		secho_offload_destroy(off);
		secho_gcm_key_wipe(&gk);
		unlink(in_path);
		unlink(out_path);
		t_end();
	}
}

/* The reflection rule itself, at its edges, with other configured ports. */
static void test_src_port_rule(void)
{
	t_begin("reflection guard: which source ports are refused");
	struct secho_wire_cfg wc;
	secho_wire_cfg_defaults(&wc);
	wc.port_stream = 5000;
	wc.port_offload = 5001;
	wc.port_counters = 6002;
	static const uint16_t refused[] = {0,    1,    7,    19,   53,   123,  161,
	                                   1023, 1900, 3283, 3702, 4000, 4001, 4002,
	                                   5000, 5001, 5353, 5683, 6002, 11211};
	static const uint16_t served[] = {1024,  1899,  1901,  3999,  4003,  5002, 6001,
	                                  10001, 11210, 32768, 40000, 60999, 65535};
	for (unsigned i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		T_CHECK(secho_src_port_refused(&wc, refused[i]), "port %u refused", refused[i]);
	for (unsigned i = 0; i < sizeof(served) / sizeof(served[0]); i++)
		T_CHECK(!secho_src_port_refused(&wc, served[i]), "port %u served", served[i]);
	t_end();
}

int main(void)
{
	t_seed_init("test_endpoint");
	test_src_port_rule();
	char dir[] = "/tmp/secho-test-endpoint.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char in_path[256], out_path[256], state_path[256];
	test_shared_key(dir);
	test_jumbo(dir);
	snprintf(in_path, sizeof(in_path), "%s/in.pcap", dir);
	snprintf(out_path, sizeof(out_path), "%s/out.pcap", dir);
	snprintf(state_path, sizeof(state_path), "%s/seq.state", dir);

	uint8_t key[32], salt[4];
	t_randbytes(key, 32);
	t_randbytes(salt, 4);

	/* ---- the input capture ---- */
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *d = pcap_dump_open(dead, in_path);
	static uint8_t f[2048], pl[1440];
	unsigned nr = 0;
	for (unsigned i = 0; i < 2 * NREQ; i++) {
		struct req_rec *r = &reqs[nr];
		r->dport = (uint16_t)(i % 2 ? 4001 : 4000);
		r->len = i < 8 ? i : t_randrange(0, 1440);
		t_randbytes(r->pl, r->len);
		dump(d, f, build_req(f, (uint16_t)(10000 + nr), r->dport, r->pl, r->len));
		nr++;
	}
	/* one counters request */
	reqs[nr].dport = 4002;
	reqs[nr].len = 0;
	dump(d, f, build_req(f, (uint16_t)(10000 + nr), 4002, pl, 0));
	nr++;
	/* malformed frames, each with its expected verdict */
	struct bad_frame {
		enum secho_wire_verdict v;
		unsigned n;
	} bad[16];
	unsigned nbad = 0;
	size_t n;
	n = build_req(f, 9000, 4000, pl, 10);
	f[14 + 10] ^= 1; /* IP checksum */
	dump(d, f, n);
	bad[nbad++] = (struct bad_frame){SECHO_WIRE_IP_CSUM, 1};
	n = build_req(f, 9001, 4000, pl, 10);
	f[14 + 20 + 8] ^= 1; /* payload changed: UDP checksum wrong */
	dump(d, f, n);
	bad[nbad++] = (struct bad_frame){SECHO_WIRE_UDP_CSUM, 1};
	build_req(f, 9002, 4000, pl, 10);
	dump(d, f, 20); /* truncated */
	bad[nbad++] = (struct bad_frame){SECHO_WIRE_IP_SHORT, 1};
	n = build_req(f, 9003, 4003, pl, 10); /* port not served */
	dump(d, f, n);
	bad[nbad++] = (struct bad_frame){SECHO_WIRE_DST_PORT, 1};
	n = build_req(f, 9004, 4000, pl, 10);
	f[0] = 0x04; /* another unicast MAC */
	dump(d, f, n);
	bad[nbad++] = (struct bad_frame){SECHO_WIRE_DST_MAC, 1};
	n = build_req(f, 9005, 4000, pl, 10);
	f[12] = 0x81; /* VLAN */
	dump(d, f, n);
	bad[nbad++] = (struct bad_frame){SECHO_WIRE_VLAN, 1};
	unsigned nmal = nbad;
	/* Requests from source ports that answer back (reflection): never answered, counted
	 * src_port (to every service port). */
	static const uint16_t reflect_from[] = {0,    7,    13,   17,   19,   37,   53,
	                                        123,  161,  1023, 1900, 3283, 3702, 4000,
	                                        4001, 4002, 5353, 5683, 11211};
	unsigned nrefl = 0;
	for (unsigned i = 0; i < sizeof(reflect_from) / sizeof(reflect_from[0]); i++) {
		n = build_req(f, reflect_from[i], (uint16_t)(4000 + i % 3), pl, 10);
		dump(d, f, n);
		nrefl++;
	}
	nmal += nrefl;
	pcap_dump_close(d);
	pcap_close(dead);

	/* ---- the endpoint ---- */
	t_begin("endpoint offline: %u requests per engine + counters + %u malformed via pcap", NREQ,
	        nmal);
	char err[256];
	struct secho_wire_cfg wc;
	ept_wire_cfg(&wc, EP_MAC);
	struct secho_io_cfg ioc = {.kind = SECHO_IO_PCAP, .pcap_in = in_path, .pcap_out = out_path};
	struct secho_io *io = secho_io_open(&ioc, err, sizeof(err));
	T_CHECK(io != NULL, "pcap open: %s", err);
	secho_gcm_key gk;
	T_CHECK(secho_gcm_key_init(&gk, key, 32, SECHO_IMPL_AUTO) == SECHO_OK, "gcm key");
	struct secho_offload *off = offload_1q(key, 512, 1440, err, sizeof(err));
	T_CHECK(off != NULL, "offload: %s", err);
	struct secho_seqlease *seq = secho_seqlease_open(state_path, 7, 0, 0, err, sizeof(err));
	T_CHECK(seq != NULL, "seq: %s", err);
	if (!io || !off || !seq) {
		t_end();
		return t_exit();
	}
	static struct secho_worker w;
	static struct secho_report_ctx rep;
	struct secho_counters *ws[1] = {&w.ctr};
	T_CHECK(secho_worker_init(&w, 512, 1500) == 0, "worker init");
	secho_report_init(&rep, 2);
	rep.ctr = ws;
	rep.nworkers = 1;
	rep.off = off;
	rep.io_desc = secho_io_describe(io);
	rep.offload_backend = "openssl";
	w.io = io;
	w.wire = &wc;
	w.gk = &gk;
	w.offq = secho_offload_queue(off, 0);
	w.key_id = 7;
	memcpy(w.salt, salt, 4);
	w.report = &rep;
	w.refill_arg = seq;
	w.refill = refill; /* leases from the durable allocator, as serve.c does */

	/* Bounded in time, not turns: the engine thread may be descheduled a while. */
	double hz = secho_tsc_hz();
	uint64_t until = secho_rdtsc() + (uint64_t)(20 * hz);
	while (secho_rdtsc() < until) {
		unsigned got = secho_worker_rx(&w);
		secho_worker_completions(&w);
		if (!got && secho_io_eof(io) && !secho_offload_inflight(w.offq))
			break;
	}
	struct secho_counters c;
	secho_report_collect(&rep, &c, NULL);
	secho_io_close(io);

	/* ---- check every response ---- */
	pcap_t *rp = pcap_open_offline(out_path, err);
	T_CHECK(rp != NULL, "open output: %s", err);
	struct pcap_pkthdr *h;
	const u_char *fr;
	unsigned nresp = 0, nreport = 0;
	uint64_t seen_seq[3 * NREQ + 8];
	unsigned nseq = 0;
	while (rp && pcap_next_ex(rp, &h, &fr) == 1) {
		nresp++;
		const uint8_t *ip = fr + 14, *u = ip + 20, *hdr = u + 8;
		T_CHECK(h->caplen >= 58 + 16, "response too short (%u)", h->caplen);
		T_CHECK(memcmp(fr, H_MAC, 6) == 0 && memcmp(fr + 6, EP_MAC, 6) == 0,
		        "MACs swapped");
		T_CHECK(ept_csum(ip, 20, 0) == 0, "IPv4 header checksum");
		T_CHECK(ip[8] == 64 && (ip[6] & 0x40), "TTL 64, DF");
		T_CHECK(ip[12] == 192 && ip[15] == 2 && ip[16] == 192 && ip[19] == 1,
		        "IPs swapped");
		size_t ulen = (size_t)(u[4] << 8 | u[5]);
		T_CHECK(ulen == h->caplen - 34 && (size_t)(ip[2] << 8 | ip[3]) == ulen + 20,
		        "lengths consistent");
		uint32_t sum = 0xc000 + 0x0202 + 0xc000 + 0x0201 + 17 + (uint32_t)ulen;
		T_CHECK(u[6] | u[7], "UDP checksum non-zero");
		T_CHECK(ept_csum(u, ulen, sum) == 0, "UDP checksum valid");
		uint16_t sport = (uint16_t)(u[0] << 8 | u[1]), dport = (uint16_t)(u[2] << 8 | u[3]);
		unsigned idx = dport - 10000u;
		if (!T_CHECK(idx < nr, "response to unknown port %u", dport))
			continue;
		struct req_rec *r = &reqs[idx];
		T_CHECK(sport == r->dport, "ports swapped");
		T_CHECK(hdr[0] == 1, "version 1");
		uint8_t want_flags = r->dport == 4000 ? 0 : r->dport == 4001 ? 1 : 2;
		T_CHECK(hdr[1] == want_flags, "flags %02x for port %u", hdr[1], r->dport);
		T_CHECK(hdr[2] == 0 && hdr[3] == 7, "key id");
		T_CHECK(memcmp(hdr + 4, salt, 4) == 0, "salt");
		uint64_t s = 0;
		for (int i = 0; i < 8; i++)
			s = s << 8 | hdr[8 + i];
		for (unsigned i = 0; i < nseq; i++)
			T_CHECK(seen_seq[i] != s, "sequence %llu repeated", (unsigned long long)s);
		seen_seq[nseq++] = s;
		size_t ctlen = ulen - 8 - 16 - 16;
		static uint8_t pt[2048];
		T_CHECK(ept_gcm_open(key, hdr, hdr + 16, ctlen, hdr + 16 + ctlen, pt),
		        "tag verifies (OpenSSL) for port %u len %zu", r->dport, ctlen);
		if (r->dport == 4002) {
			nreport++;
			pt[ctlen] = 0;
			T_CHECK(strstr((char *)pt, "\"engines\"") != NULL, "report JSON: %.80s",
			        pt);
		} else {
			T_CHECK(ctlen == r->len && memcmp(pt, r->pl, ctlen) == 0,
			        "plaintext round trip (port %u, %zu bytes)", r->dport, r->len);
		}
		r->answered++;
	}
	if (rp)
		pcap_close(rp);
	unsigned unanswered = 0;
	for (unsigned i = 0; i < nr; i++)
		unanswered += reqs[i].answered != 1;
	T_CHECK(unanswered == 0, "%u valid requests not answered exactly once", unanswered);
	T_CHECK(nresp == nr, "responses %u, expected %u (no answer to any malformed frame)", nresp,
	        nr);
	T_CHECK(nreport == 1, "one counters report");
	T_CHECK(c.eng[SECHO_ENG_STREAM].packets == NREQ, "streaming counted %llu",
	        (unsigned long long)c.eng[SECHO_ENG_STREAM].packets);
	T_CHECK(c.eng[SECHO_ENG_OFFLOAD].packets == NREQ, "offload counted %llu",
	        (unsigned long long)c.eng[SECHO_ENG_OFFLOAD].packets);
	T_CHECK(c.drop[SECHO_DROP_SRC_PORT] == nrefl, "src_port drops %llu, expected %u",
	        (unsigned long long)c.drop[SECHO_DROP_SRC_PORT], nrefl);
	for (unsigned i = 0; i < nbad; i++)
		T_CHECK(c.verdict[bad[i].v] == bad[i].n, "verdict %s counted %llu, expected %u",
		        secho_wire_verdict_name(bad[i].v), (unsigned long long)c.verdict[bad[i].v],
		        bad[i].n);
	T_CHECK(c.rx_frames == nr + nmal, "rx %llu", (unsigned long long)c.rx_frames);
	T_CHECK(c.rx_frames == c.tx_frames + secho_counters_drops(&c),
	        "rx %llu = tx %llu + drops %llu", (unsigned long long)c.rx_frames,
	        (unsigned long long)c.tx_frames, (unsigned long long)secho_counters_drops(&c));
	struct secho_lat_summary ls;
	secho_lat_summary(&c.eng[SECHO_ENG_OFFLOAD].lat, &ls);
	T_CHECK(ls.count == NREQ && ls.min > 0 && ls.p50 >= ls.min && ls.p99 >= ls.p50 &&
	                ls.max >= ls.p99,
	        "offload latency summary ordered");
	t_end();

	secho_worker_fini(&w);
	secho_offload_destroy(off);
	secho_seqlease_close(seq, err, sizeof(err));
	secho_gcm_key_wipe(&gk);
	unlink(in_path);
	unlink(out_path);
	unlink(state_path);
	char lock[300];
	snprintf(lock, sizeof(lock), "%s.lock", state_path);
	unlink(lock);
	rmdir(dir);
	return t_exit();
}
