/*
 * tests/unit/test_flow_meter.c - the flow meter offline with several workers
 * (src/flow/meter/offline.c): each worker walks the whole capture and meters its share of
 * the frames (the symmetric address hash), and the records of 2, 3 and 5 workers must be
 * those of one worker: the same multiset of records (key, both directions' counters and
 * times, end reason, the L2-L4 fields), on light traffic, on the same in VXLAN, on the
 * conformance profile (every dissector case, fragments, malformed frames), and on a capture
 * cut inside its last record (the same records before the cut, the same error). Built with
 * ThreadSanitizer too (make tsan): the record rings, the statistics read while the workers
 * count, race-free.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flow/meter/meter.h"
#include "traffic/gen.h"

/* A sink that keeps a digest of every record. Called by the thread that drains the rings
 * (the calling thread, worker 0). */
struct digests {
	uint64_t *h;
	size_t n, cap;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static int dg_record(void *ctx, const struct secho_flow_rec *r, uint64_t now_ns)
{
	struct digests *d = ctx;
	(void)now_ns;
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 4096;
		uint64_t *h = realloc(d->h, cap * sizeof(*h));
		if (!h)
			return -1;
		d->h = h;
		d->cap = cap;
	}
	uint64_t h = fnv(0xcbf29ce484222325ull, &r->key, sizeof(r->key));
	h = fnv(h, &r->fwd, sizeof(r->fwd));
	h = fnv(h, &r->rev, sizeof(r->rev));
	h = fnv(h, &r->end_reason, 1);
	h = fnv(h, &r->x, sizeof(r->x));
	d->h[d->n++] = h;
	return 0;
}

static void dg_tick(void *ctx, uint64_t now_ns, const struct secho_flow_totals *tot)
{
	(void)ctx, (void)now_ns, (void)tot;
}

static int dg_close(void *ctx, uint64_t now_ns, const struct secho_flow_totals *tot, int timeout_ms)
{
	(void)ctx, (void)now_ns, (void)tot, (void)timeout_ms;
	return 0;
}

static unsigned dg_stats(void *ctx, struct secho_flow_sink_stats *rows, unsigned max)
{
	(void)ctx, (void)rows, (void)max;
	return 0;
}

static const struct secho_flow_sink_ops dg_ops = {
        .record = dg_record, .tick = dg_tick, .close = dg_close, .stats = dg_stats};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Meter path with n workers into *d (sorted digests); res: the meter's result. */
static int run(const char *path, unsigned n, struct digests *d, struct secho_flow_meter_result *res)
{
	struct secho_flow_sink sink = {.ops = &dg_ops, .ctx = d, .name = "digests"};
	struct secho_flow_meter_cfg cfg = {
	        .table = {.flows = 1u << 18, .hash = SECHO_FLOW_HASH_DEFAULT},
	        .workers = n,
	        .pcap = path,
	        .sinks = &sink,
	        .nsinks = 1,
	        .quiet = true,
	        .report = NULL,
	};
	char err[256];
	FILE *devnull = fopen("/dev/null", "w");
	cfg.report = devnull;
	memset(d, 0, sizeof(*d));
	int r = secho_flow_meter_run(&cfg, res, err, sizeof(err));
	if (devnull)
		fclose(devnull);
	T_CHECK(r == 0, "%u workers: %s", n, err);
	if (d->n)
		qsort(d->h, d->n, sizeof(d->h[0]), cmp_u64);
	return r;
}

/* One capture: 2, 3 and 5 workers against one. */
static void same_as_one(const char *what, const char *path)
{
	struct digests one, many;
	struct secho_flow_meter_result r1, rn;

	if (run(path, 1, &one, &r1))
		return;
	T_CHECK(one.n > 100, "%s: %zu records with one worker", what, one.n);
	static const unsigned workers[] = {2, 3, 5};
	for (unsigned i = 0; i < sizeof(workers) / sizeof(workers[0]); i++) {
		if (run(path, workers[i], &many, &rn) == 0) {
			T_CHECK(many.n == one.n && !memcmp(many.h, one.h, one.n * sizeof(one.h[0])),
			        "%s, %u workers: %zu records, %zu with one; the same: %s", what,
			        workers[i], many.n, one.n,
			        many.n == one.n && !memcmp(many.h, one.h, one.n * sizeof(one.h[0]))
			                ? "yes"
			                : "no");
			T_CHECK(rn.frames_read == r1.frames_read &&
			                rn.cnt.c[SECHO_FLOW_CNT_PACKETS] ==
			                        r1.cnt.c[SECHO_FLOW_CNT_PACKETS] &&
			                !strcmp(rn.input_error, r1.input_error) &&
			                rn.interrupted == r1.interrupted,
			        "%s, %u workers: %llu frames, %llu packets, error '%s' (one: %llu, "
			        "%llu, '%s')",
			        what, workers[i], (unsigned long long)rn.frames_read,
			        (unsigned long long)rn.cnt.c[SECHO_FLOW_CNT_PACKETS],
			        rn.input_error, (unsigned long long)r1.frames_read,
			        (unsigned long long)r1.cnt.c[SECHO_FLOW_CNT_PACKETS],
			        r1.input_error);
		}
		free(many.h);
	}
	free(one.h);
}

static int gen(const char *profile, const char *encap, uint64_t packets, const char *path,
               const char *truth)
{
	struct secho_gen_cfg gc = {
	        .profile = profile, .packets = packets, .seed = 7, .encap = encap};
	struct secho_gen_totals tot;
	char err[256];
	int r = secho_gen_write(&gc, path, truth, &tot, err, sizeof(err));
	T_CHECK(r == 0, "gen %s: %s", profile, err);
	return r;
}

static void test_workers_share(void)
{
	t_begin("flow meter: 2, 3 and 5 workers give one worker's records");
	char dir[] = "/tmp/secho-flow-meter-XXXXXX", path[64], truth[64];
	if (!mkdtemp(dir)) {
		t_unavailable("mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/c.pcap", dir);
	snprintf(truth, sizeof(truth), "%s/c.truth", dir);
	/* light: a few MB, several of the meter's 1 MiB blocks */
	if (gen("light", NULL, 40000, path, truth) == 0)
		same_as_one("light", path);
	if (gen("light", "vxlan:7", 20000, path, truth) == 0)
		same_as_one("light in VXLAN", path);
	if (gen("conformance", NULL, 5000, path, truth) == 0)
		same_as_one("conformance", path);
	/* cut inside the last record: the records before it, then the same error */
	if (gen("light", NULL, 40000, path, truth) == 0) {
		FILE *f = fopen(path, "r");
		long size = -1;
		if (f && fseek(f, 0, SEEK_END) == 0)
			size = ftell(f);
		if (f)
			fclose(f);
		if (T_CHECK(size > 100 && truncate(path, size - 7) == 0, "cut the capture")) {
			struct digests d;
			struct secho_flow_meter_result r;
			if (run(path, 2, &d, &r) == 0)
				T_CHECK(strstr(r.input_error, "truncated record") != NULL,
				        "cut: '%s'", r.input_error);
			free(d.h);
			same_as_one("light, cut", path);
		}
	}
	unlink(path);
	unlink(truth);
	rmdir(dir);
	t_end();
}

int main(void)
{
	t_seed_init("test_flow_meter");
	test_workers_share();
	return t_exit();
}
