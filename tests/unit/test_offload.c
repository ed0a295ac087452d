/*
 * tests/unit/test_offload.c - the offload engine: every backend, through the rings and the
 * engine thread, gives the same bytes as an independent OpenSSL one-shot computation and
 * as the streaming engine's secho_gcm_seal(); several producer threads, each on its own
 * queue pair, at once (every job answered once, on its own queue, in order, with the right
 * bytes: run under ThreadSanitizer too, `make tsan`); slot and ring accounting; pinning
 * the engine thread; latency histogram.
 */
#include <linux/if_alg.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "secho/cpu.h"
#include "secho/engine.h"
#include "secho/gcm.h"
#include "sys/clock.h"
#include "sys/latency.h"

static bool quick(void)
{
	return getenv("SECHO_TEST_QUICK") != NULL;
}

/* An engine with `queues` queue pairs of `ring` jobs, spin 20 us, payloads up to max_len. */
static struct secho_offload *engine(enum secho_offload_backend b, const uint8_t key[32],
                                    unsigned queues, unsigned ring, uint32_t max_len, char *err,
                                    size_t errlen)
{
	struct secho_offload_cfg oc = {.backend = b,
	                               .queues = queues,
	                               .ring_size = ring,
	                               .spin_us = 20,
	                               .max_len = max_len};
	return secho_offload_create(&oc, key, err, errlen);
}

static void ref_seal(const uint8_t key[32], const uint8_t hdr[16], const uint8_t *in, size_t len,
                     uint8_t *out, uint8_t tag[16])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l;
	EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, NULL, NULL);
	EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL);
	EVP_EncryptInit_ex(c, NULL, NULL, key, hdr + 4);
	EVP_EncryptUpdate(c, NULL, &l, hdr, 16);
	if (len)
		EVP_EncryptUpdate(c, out, &l, in, (int)len);
	EVP_EncryptFinal_ex(c, out + len, &l);
	EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(c);
}

/* Does the kernel offer AF_ALG "gcm(aes)"? Asked here directly, not through the backend
 * under test: a probe that wrongly says no must fail the test, not skip it. */
static bool kernel_has_afalg_gcm(void)
{
	struct sockaddr_alg sa = {
	        .salg_family = AF_ALG, .salg_type = "aead", .salg_name = "gcm(aes)"};
	int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;

	if (fd >= 0)
		close(fd);
	return ok;
}

static void test_backend(enum secho_offload_backend b)
{
	char why[256];
	t_begin("offload %s: 2000 jobs through the rings match OpenSSL and secho_gcm_seal",
	        secho_offload_backend_name(b));
	bool avail = secho_offload_backend_probe(b, why, sizeof(why));
	if (b == SECHO_OFFLOAD_AFALG && !avail && !kernel_has_afalg_gcm()) {
		t_unavailable("%s", why);
		return;
	}
	/* OpenSSL and ipsec-mb are linked in; AF_ALG is here when the kernel has it. */
	if (!T_CHECK(avail, "backend probe refused although the machine has it: %s", why)) {
		t_end();
		return;
	}
	uint8_t key[32];
	t_randbytes(key, sizeof(key));
	struct secho_offload *o =
	        engine(b, key, 1, 64, SECHO_OFFLOAD_STAGING - 16, why, sizeof(why));
	if (!T_CHECK(o != NULL, "create: %s", why)) {
		t_end();
		return;
	}
	struct secho_offload_queue *q = secho_offload_queue(o, 0);
	T_CHECK(secho_offload_queue(o, 1) == NULL, "one queue pair only");
	secho_gcm_key gk;
	int have_gcm = T_CHECK(secho_gcm_key_init(&gk, key, 32, SECHO_IMPL_AUTO) == SECHO_OK,
	                       "streaming engine key set-up");

	enum { N = 2000 };
	static uint8_t plain[64][1440], hdrs[64][16];
	static size_t lens[64];
	unsigned posted = 0, done = 0;
	uint64_t seq = 1;
	while (done < N) {
		while (posted < N) {
			int slot = secho_offload_slot_get(q);
			if (slot < 0)
				break;
			struct secho_offload_job j = {0};
			j.slot = (uint32_t)slot;
			j.len = (uint32_t)t_randrange(0, 1440);
			lens[slot] = j.len;
			hdrs[slot][0] = 1;
			hdrs[slot][1] = 1;
			for (int i = 0; i < 8; i++)
				hdrs[slot][8 + i] = (uint8_t)(seq >> (56 - 8 * i));
			seq++;
			memcpy(j.hdr, hdrs[slot], 16);
			t_randbytes(plain[slot], j.len);
			memcpy(secho_offload_staging(q, j.slot), plain[slot], j.len);
			j.cookie = posted;
			T_CHECK(secho_offload_post(q, &j) == 0, "post %u", posted);
			posted++;
		}
		struct secho_offload_job c[32];
		unsigned n = secho_offload_poll(q, c, 32);
		for (unsigned i = 0; i < n; i++) {
			uint8_t exp[1440 + 16], tag[16];
			size_t len = c[i].len;
			ref_seal(key, c[i].hdr, plain[c[i].slot], len, exp, tag);
			T_CHECK(c[i].status == 0, "job %llu status %d",
			        (unsigned long long)c[i].cookie, c[i].status);
			T_CHECK(len == lens[c[i].slot], "length carried");
			T_CHECK(memcmp(secho_offload_staging(q, c[i].slot), exp, len) == 0,
			        "job %llu ciphertext differs from OpenSSL",
			        (unsigned long long)c[i].cookie);
			T_CHECK(memcmp(c[i].tag, tag, 16) == 0, "job %llu tag differs from OpenSSL",
			        (unsigned long long)c[i].cookie);
			if (have_gcm) {
				uint8_t ours[1440], otag[16];
				secho_gcm_seal(&gk, c[i].hdr + 4, 12, c[i].hdr, 16, ours,
				               plain[c[i].slot], len, otag, 16);
				T_CHECK(memcmp(ours, exp, len) == 0 && memcmp(otag, tag, 16) == 0,
				        "streaming engine (secho_gcm_seal) differs from offload");
			}
			secho_offload_slot_put(q, c[i].slot);
			done++;
		}
	}
	T_CHECK(secho_offload_inflight(q) == 0, "nothing left in flight");
	struct secho_offload_stats st;
	secho_offload_stats(o, &st);
	T_CHECK(st.jobs == N, "engine counted %llu jobs", (unsigned long long)st.jobs);
	T_CHECK(st.errors == 0, "engine errors %llu", (unsigned long long)st.errors);
	T_CHECK(st.busy_cycles >= st.crypto_cycles, "busy >= crypto cycles");
	printf("# %s: engine %.0f cycles/job busy, %.0f in the backend, %llu wake-ups\n",
	       secho_offload_backend_name(b), (double)st.busy_cycles / (double)st.jobs,
	       (double)st.crypto_cycles / (double)st.jobs, (unsigned long long)st.wakeups);
	if (!have_gcm)
		printf("# streaming-engine comparison not run: no secho GCM implementation "
		       "linked\n");
	secho_offload_destroy(o);
	secho_gcm_key_wipe(&gk);
	t_end();
}

static void test_slots(void)
{
	char why[256];
	t_begin("offload: slots bounded, full ring refused, destroy drains");
	uint8_t key[32] = {0};
	struct secho_offload_cfg oc = {.backend = SECHO_OFFLOAD_OPENSSL,
	                               .queues = 1,
	                               .ring_size = 8,
	                               .max_len = SECHO_OFFLOAD_STAGING - 16};
	struct secho_offload *o = secho_offload_create(&oc, key, why, sizeof(why));
	if (!T_CHECK(o != NULL, "create: %s", why)) {
		t_end();
		return;
	}
	struct secho_offload_queue *q = secho_offload_queue(o, 0);
	int got = 0;
	while (secho_offload_slot_get(q) >= 0)
		got++;
	T_CHECK(got == 8, "8 slots, got %d", got);
	struct secho_offload_job j = {.slot = 0, .len = 16};
	for (int i = 0; i < 8; i++)
		T_CHECK(secho_offload_post(q, &j) == 0, "post %d", i);
	/* The ring holds 8; the 9th post is refused until the engine drains some. It may
	 * already have, so only check the bounded-slot and bad-argument paths strictly. */
	struct secho_offload_job bad = {.slot = 8, .len = 16};
	T_CHECK(secho_offload_post(q, &bad) == -1, "slot out of range refused");
	bad.slot = 0;
	bad.len = SECHO_OFFLOAD_STAGING;
	T_CHECK(secho_offload_post(q, &bad) == -1, "oversize job refused");
	oc.ring_size = 3;
	T_CHECK(secho_offload_create(&oc, key, why, sizeof(why)) == NULL, "ring size 3 refused");
	oc.ring_size = 8;
	oc.queues = 0;
	T_CHECK(secho_offload_create(&oc, key, why, sizeof(why)) == NULL, "0 queue pairs refused");
	oc.queues = SECHO_OFFLOAD_MAX_QUEUES + 1;
	T_CHECK(secho_offload_create(&oc, key, why, sizeof(why)) == NULL, "%u queue pairs refused",
	        SECHO_OFFLOAD_MAX_QUEUES + 1);
	secho_offload_destroy(o); /* must join with 8 jobs possibly pending */
	t_end();
}

/* ---- several producers, one queue pair each ---- */

struct producer {
	struct secho_offload_queue *q;
	const secho_gcm_key *gk;
	unsigned id, jobs;
	unsigned done, bad_bytes, bad_order, foreign, bad_status, posted;
	bool stalled; /* nothing completed for 10 s: given up */
};

/* Job cookie: the producer's id in the top 16 bits, its job number below. */
static void *producer_main(void *arg)
{
	struct producer *p = arg;
	static _Thread_local uint8_t plain[256][512];
	static _Thread_local uint32_t lens[256];
	uint64_t next_done = 0, seed = 0x9e3779b97f4a7c15ull * (p->id + 1);
	double progress = secho_mono_s();
	while (p->done < p->jobs) {
		while (p->posted < p->jobs) {
			int slot = secho_offload_slot_get(p->q);
			if (slot < 0)
				break;
			struct secho_offload_job j = {.slot = (uint32_t)slot};
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			j.len = (uint32_t)(seed >> 33) % 512;
			lens[slot] = j.len;
			j.hdr[0] = 1;
			j.hdr[1] = 1;
			j.hdr[2] = (uint8_t)p->id;
			for (int i = 0; i < 8; i++)
				j.hdr[8 + i] = (uint8_t)((uint64_t)p->posted >> (56 - 8 * i));
			for (uint32_t i = 0; i < j.len; i++)
				plain[slot][i] = (uint8_t)(seed >> (i % 56));
			memcpy(secho_offload_staging(p->q, j.slot), plain[slot], j.len);
			j.cookie = (uint64_t)p->id << 48 | p->posted;
			if (secho_offload_post(p->q, &j) != 0) {
				secho_offload_slot_put(p->q, j.slot);
				p->bad_status++;
				break;
			}
			p->posted++;
		}
		struct secho_offload_job c[32];
		unsigned n = secho_offload_poll(p->q, c, 32);
		for (unsigned i = 0; i < n; i++) {
			uint8_t ct[512], tag[16];
			if (c[i].cookie >> 48 != p->id) {
				p->foreign++;
			} else {
				p->bad_order += (c[i].cookie & 0xffffffffffffull) != next_done;
				next_done = (c[i].cookie & 0xffffffffffffull) + 1;
				secho_gcm_seal(p->gk, c[i].hdr + 4, 12, c[i].hdr, 16, ct,
				               plain[c[i].slot], lens[c[i].slot], tag, 16);
				p->bad_bytes += c[i].len != lens[c[i].slot] ||
				                memcmp(secho_offload_staging(p->q, c[i].slot), ct,
				                       c[i].len) != 0 ||
				                memcmp(c[i].tag, tag, 16) != 0;
				p->bad_status += c[i].status != 0;
			}
			secho_offload_slot_put(p->q, c[i].slot);
			p->done++;
		}
		if (n) {
			progress = secho_mono_s();
		} else if (secho_mono_s() - progress > 10) {
			p->stalled = true; /* a job lost (or answered on another queue) */
			break;
		} else {
			sched_yield(); /* two CPUs, five threads: let the engine run */
		}
	}
	return NULL;
}

static void test_queues(void)
{
	enum { P = 4 };
	unsigned per = quick() ? 3000 : 20000;
	char why[256];
	t_begin("offload: %d producer threads, a queue pair each, %u jobs each: every job answered "
	        "once, on its own queue, in order, bytes right",
	        P, per);
	uint8_t key[32];
	t_randbytes(key, sizeof(key));
	secho_gcm_key gk;
	struct secho_offload *o = engine(SECHO_OFFLOAD_OPENSSL, key, P, 16, 512, why, sizeof(why));
	if (!T_CHECK(o != NULL && secho_gcm_key_init(&gk, key, 32, SECHO_IMPL_AUTO) == SECHO_OK,
	             "create: %s", why)) {
		secho_offload_destroy(o);
		t_end();
		return;
	}
	struct producer p[P];
	pthread_t th[P];
	for (unsigned i = 0; i < P; i++) {
		p[i] = (struct producer){
		        .q = secho_offload_queue(o, i), .gk = &gk, .id = i + 1, .jobs = per};
		T_CHECK(pthread_create(&th[i], NULL, producer_main, &p[i]) == 0, "thread %u", i);
	}
	unsigned done = 0;
	for (unsigned i = 0; i < P; i++) {
		pthread_join(th[i], NULL);
		done += p[i].done;
		T_CHECK(!p[i].stalled, "producer %u: %u of %u jobs completed, then none for 10 s",
		        i, p[i].done, per);
		T_CHECK(p[i].foreign == 0, "producer %u: %u completions of another queue", i,
		        p[i].foreign);
		T_CHECK(p[i].bad_order == 0, "producer %u: %u completions out of order", i,
		        p[i].bad_order);
		T_CHECK(p[i].bad_bytes == 0, "producer %u: %u jobs with wrong bytes", i,
		        p[i].bad_bytes);
		T_CHECK(p[i].bad_status == 0, "producer %u: %u failed posts or jobs", i,
		        p[i].bad_status);
		T_CHECK(secho_offload_inflight(p[i].q) == 0, "producer %u: nothing in flight", i);
	}
	struct secho_offload_stats st;
	secho_offload_stats(o, &st);
	T_CHECK(st.jobs == (uint64_t)P * per && done == P * per, "engine: %llu jobs, %u completed",
	        (unsigned long long)st.jobs, done);
	secho_offload_destroy(o);
	secho_gcm_key_wipe(&gk);
	t_end();
}

/* The engine thread pinned (--offload-cpu): to a CPU this process may use, and refused for
 * one it may not, with the reason. */
static void test_pin(void)
{
	char why[256];
	t_begin("offload: engine thread pinned to a usable CPU; an unusable one refused");
	uint8_t key[32] = {1};
	unsigned cpu = 0;
	while (cpu < SECHO_CPU_MAX && !secho_cpu_usable(cpu))
		cpu++;
	struct secho_offload_cfg oc = {.backend = SECHO_OFFLOAD_OPENSSL,
	                               .queues = 2,
	                               .ring_size = 8,
	                               .max_len = 1440,
	                               .pin = true,
	                               .cpu = cpu};
	struct secho_offload *o = secho_offload_create(&oc, key, why, sizeof(why));
	T_CHECK(o != NULL, "pinned to CPU %u: %s", cpu, o ? "" : why);
	secho_offload_destroy(o);
	oc.cpu = SECHO_CPU_MAX;
	o = secho_offload_create(&oc, key, why, sizeof(why));
	T_CHECK(o == NULL && strstr(why, "not available"), "CPU %u refused: %s", oc.cpu,
	        o ? "(created)" : why);
	secho_offload_destroy(o);
	t_end();
}

static void test_latency(void)
{
	t_begin("latency histogram: quantiles within 1/32 of exact");
	static struct secho_lat h; /* zero: empty */
	enum { N = 100000 };
	static uint64_t v[N];
	for (int i = 0; i < N; i++) {
		v[i] = 1 + t_rand64() % (1u << (t_rand64() % 24));
		secho_lat_record(&h, v[i]);
	}
	/* exact quantiles by counting */
	for (int qi = 1; qi <= 9; qi++) {
		double q = qi / 10.0;
		double est = secho_lat_quantile(&h, q);
		uint64_t below = 0, below_eq = 0;
		for (int i = 0; i < N; i++) {
			below += v[i] < (uint64_t)(est * (1 - 1.0 / 32) - 1);
			below_eq += v[i] <= (uint64_t)(est * (1 + 1.0 / 32) + 1);
		}
		T_CHECK((double)below <= q * N && (double)below_eq >= q * N,
		        "q=%.1f est %.0f: %llu below, %llu at or below", q, est,
		        (unsigned long long)below, (unsigned long long)below_eq);
	}
	struct secho_lat_summary s;
	secho_lat_summary(&h, &s);
	uint64_t mn = v[0], mx = v[0], sum = 0;
	for (int i = 0; i < N; i++) {
		mn = v[i] < mn ? v[i] : mn;
		mx = v[i] > mx ? v[i] : mx;
		sum += v[i];
	}
	T_CHECK(s.min == (double)mn && s.max == (double)mx, "exact min/max");
	T_CHECK(s.mean == (double)sum / N, "exact mean");
	for (unsigned b = 0; b < SECHO_LAT_BUCKETS; b++) {
		uint64_t lo, w;
		secho_lat_bucket_range(b, &lo, &w);
		if (!T_CHECK(secho_lat_bucket(lo) == b && secho_lat_bucket(lo + w - 1) == b,
		             "bucket %u range [%llu, +%llu)", b, (unsigned long long)lo,
		             (unsigned long long)w))
			break;
	}
	t_end();
}

/* The backends' key state from locked memory (as the endpoint runs them): set first, before
 * anything here uses OpenSSL; then every backend test below runs with it, and engines are
 * created and destroyed again and again (the pool's blocks wiped, freed and reused). */
static void test_protect(void)
{
	t_begin("offload key state in locked memory: OpenSSL allocator hooks set, pool reused");
	bool locked = false;
	int rc = secho_offload_protect_keys(&locked);
	T_CHECK(rc == 0, "secho_offload_protect_keys: %d", rc);
	T_CHECK(secho_offload_protect_keys(&locked) == 0, "a second call is harmless");
	uint8_t key[32];
	char why[256];
	t_randbytes(key, sizeof(key));
	unsigned made = 0;
	for (int i = 0; i < 200; i++) {
		struct secho_offload *o =
		        engine(SECHO_OFFLOAD_OPENSSL, key, 1 + i % 4, 2, 1440, why, sizeof(why));
		made += o != NULL;
		secho_offload_destroy(o);
	}
	T_CHECK(made == 200, "%u of 200 engines created and destroyed (%s)", made, why);
	t_end();
}

int main(void)
{
	t_seed_init("test_offload");
	test_protect();
	test_backend(SECHO_OFFLOAD_OPENSSL);
	test_backend(SECHO_OFFLOAD_IPSECMB);
	test_backend(SECHO_OFFLOAD_AFALG);
	test_queues();
	test_pin();
	test_slots();
	test_latency();
	return t_exit();
}
