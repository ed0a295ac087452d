/*
 * tests/unit/test_flow_offload.c - the XDP offload tier (src/flow/offload/offload.h, the program
 * src/flow/offload/offload_xdp.bpf.c), in a network namespace of this process's own (unshare:
 * it goes away with the process, however the process ends) with a veth pair o0 -- o1:
 *
 *   - the program loads and attaches to o1 in native and in generic mode (a mode the
 *     kernel refuses: UNAVAILABLE with its reason), and is gone after close;
 *   - it keys every frame as the meter does: every frame of the generator's conformance
 *     profile (VLAN, QinQ, IPv4 options, IPv6 extension headers, fragments, ICMP, other
 *     protocols, malformed frames) and of its geant (jumbo frames) and nix profiles is run
 *     through it (BPF_PROG_TEST_RUN) with its key, as src/wire's dissector describes the
 *     frame, in the map: a hit exactly when the meter would count the packet in that flow
 *     (not a fragment, not TCP SYN/FIN/RST), counted in the right direction with the IP
 *     length; a miss without the key; every frame counted under the reason expected;
 *   - counting against the generator's truth: a small meter in this test offloads each
 *     flow after a few packets; its own counts plus the map's equal the truth per key;
 *   - SYN, FIN and RST of an offloaded flow pass, a full map refuses an insert;
 *   - frames sent over the veth: an offloaded flow's frames never reach a packet socket on
 *     o1, the others do, the map's counts and last-seen times are right; with an AF_XDP
 *     socket in the program's XSKMAP, what is not dropped arrives there;
 *   - a start after kill -9: a BPF-link attachment is gone with its process, a netlink one
 *     is removed by the next start, a live owner's program and a program that is not ours
 *     are left alone (the open refuses, naming them).
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "flow/core/key.h"
#include "flow/offload/offload.h"
#include "harness.h"
#include "secho/dissect.h"
#include "secho/io.h"
#include "traffic/gen.h"

#define IF0 "o0" /* the sender's end */
#define IF1 "o1" /* the program's end */

static bool quick;

/* ---- the namespace ---- */

static int sh(const char *cmd)
{
	int r = system(cmd);
	return r == 0 ? 0 : -1;
}

/* Our own network namespace with the veth pair; NULL or why it cannot be had. */
static const char *netns_setup(void)
{
	static char why[200];

	if (geteuid() != 0)
		return "needs root (network namespace, BPF)";
	if (unshare(CLONE_NEWNET)) {
		snprintf(why, sizeof(why), "unshare(CLONE_NEWNET): %s", strerror(errno));
		return why;
	}
	/* No IPv6 (router solicitations, MLD) and nothing else on the wire but our frames;
	 * jumbo MTU so that native XDP takes frames of several buffers. */
	if (sh("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 "
	       "2>/dev/null;"
	       "ip link add " IF0 " numtxqueues 1 numrxqueues 1 type veth peer name " IF1
	       " numtxqueues 1 numrxqueues 1 && ip link set " IF0 " mtu 9100 && ip link set " IF1
	       " mtu 9100 && ip link set " IF0 " up && ip link set " IF1 " up"))
		return "could not create the veth pair (ip link)";
	for (int i = 0; i < 50; i++) {
		if (!sh("ip link show " IF1 " | grep -q LOWER_UP"))
			return NULL;
		usleep(20000);
	}
	return "veth did not come up";
}

/* Program ids on ifname per mode. */
static void xdp_ids(const char *ifname, uint32_t *drv, uint32_t *skb)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	*drv = *skb = 0;
	if (!bpf_xdp_query((int)if_nametoindex(ifname), 0, &q)) {
		*drv = q.drv_prog_id;
		*skb = q.skb_prog_id;
	}
}

static void prog_name(uint32_t id, char *name, size_t n)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);

	snprintf(name, n, "?");
	if (fd < 0)
		return;
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		snprintf(name, n, "%s", info.name);
	close(fd);
}

/* ---- the meter's key ----
 *
 * What is checked here is that the program keys a frame exactly as the meter does, so the
 * meter's own code gives the key (src/flow/core/key.h), not a copy of its rule: a copy
 * would agree with a fault in what it copies. Whether the meter's keys are right is
 * checked against the generator's truth (test_flow_table, test_flow.sh) and here by the
 * small meter's counts against the truth (test_truth). */

static void ref_key(const uint8_t *f, const struct secho_dissect *d, bool biflow,
                    struct secho_flow_key *k, int *dir)
{
	struct secho_flow_key own;

	secho_flow_key_from(f, d, &own);
	*dir = biflow ? secho_flow_key_canon(&own, k) : 0;
	if (!biflow)
		*k = own;
}

/* What the program must do with a frame the dissector described as (r, d). */
struct expect {
	bool keyed; /* a hit when its key is offloaded */
	unsigned why[3];
	unsigned nwhy; /* reasons accepted when not keyed */
};

/* A packet the program must pass as tunnelled: the meter followed a tunnel, or the
 * packet is on a tunnel's protocol or port (the meter may have metered it as the outer
 * flow when the tunnel header did not hold). */
static bool on_tunnel(const struct secho_dissect *d)
{
	if (d->flags & SECHO_DISSECT_F_TUNNEL)
		return true;
	if (d->proto == 47 || d->proto == 4 || d->proto == 41)
		return true;
	return d->proto == SECHO_IPPROTO_UDP && (d->flags & SECHO_DISSECT_F_L4) &&
	       (d->dport == 4789 || d->dport == 6081 || d->dport == 2152);
}

static void expect_of(enum secho_dissect_reason r, const struct secho_dissect *d, struct expect *e)
{
	memset(e, 0, sizeof(*e));
	if (r != SECHO_DISSECT_OK) {
		/* refused by the meter: passed, as malformed (or, for a fragment, as one; or
		 * inside a tunnel the program does not look into) */
		e->why[0] = SECHO_OFFLOAD_CNT_PASS_MALFORMED;
		e->why[1] = SECHO_OFFLOAD_CNT_PASS_FRAG;
		e->why[2] = SECHO_OFFLOAD_CNT_PASS_TUNNEL;
		e->nwhy = 3;
	} else if (d->flags & SECHO_DISSECT_F_TUNNEL) {
		/* never offloaded: passed as tunnelled (an outer IPv6 atomic fragment: as a
		 * fragment; Ethernet over MPLS: the program sees no IP after the labels, or one
		 * the meter's rule took for Ethernet) */
		e->why[0] = SECHO_OFFLOAD_CNT_PASS_TUNNEL;
		e->why[1] = SECHO_OFFLOAD_CNT_PASS_FRAG;
		e->why[2] = SECHO_OFFLOAD_CNT_PASS_MALFORMED;
		e->nwhy = d->tun_type == SECHO_TUN_EOMPLS ? 3 : 2;
	} else if (on_tunnel(d) && d->frag == SECHO_FRAG_NONE &&
	           !(d->flags & SECHO_DISSECT_F_ATOMIC)) {
		e->why[0] = SECHO_OFFLOAD_CNT_PASS_TUNNEL;
		e->nwhy = 1;
	} else if (!d->ip_version) {
		e->why[0] = SECHO_OFFLOAD_CNT_PASS_NOT_IP;
		e->why[1] = SECHO_OFFLOAD_CNT_PASS_TUNNEL; /* after MPLS: maybe Ethernet */
		e->nwhy = (d->flags & SECHO_DISSECT_F_MPLS) ? 2 : 1;
	} else if (d->frag != SECHO_FRAG_NONE || (d->flags & SECHO_DISSECT_F_ATOMIC)) {
		e->why[0] = SECHO_OFFLOAD_CNT_PASS_FRAG;
		e->nwhy = 1;
	} else if (d->proto == SECHO_IPPROTO_TCP && (d->flags & SECHO_DISSECT_F_L4) &&
	           (d->tcp_flags & 0x07)) {
		e->why[0] = SECHO_OFFLOAD_CNT_PASS_TCP_CTL;
		e->nwhy = 1;
	} else {
		e->keyed = true;
	}
}

static int counters(struct secho_flow_offload *o, uint64_t c[SECHO_OFFLOAD_CNT_COUNT])
{
	return secho_flow_offload_read_counters(o, c);
}

/* Run frame[0..len) through the program once; the XDP action, or -errno. */
static int test_run(struct secho_flow_offload *o, int prog_fd, const uint8_t *frame, size_t len)
{
	(void)o;
	LIBBPF_OPTS(bpf_test_run_opts, ro, .data_in = frame, .data_size_in = (uint32_t)len,
	            .repeat = 1);
	if (bpf_prog_test_run_opts(prog_fd, &ro))
		return -errno;
	return (int)ro.retval;
}

static int prog_fd_of(struct secho_flow_offload *o)
{
	return bpf_prog_get_fd_by_id(secho_flow_offload_prog_id(o));
}

/* ---- attach ---- */

/* Why a mode cannot be had here ("" when it can), as the attach test found. */
static char mode_why[2][300];

/* Open with cfg for a test case: when cfg's mode was refused by the kernel in the attach
 * test, the case is UNAVAILABLE with that reason; any other failure fails it. */
static struct secho_flow_offload *open_for_case(const struct secho_flow_offload_cfg *cfg)
{
	struct secho_flow_offload *o = NULL;
	char err[300];
	const char *refused = mode_why[cfg->mode == SECHO_IO_XDP_SKB ? 1 : 0];

	if (refused[0]) {
		t_unavailable("%s", refused);
		return NULL;
	}
	int r = secho_flow_offload_open(&o, cfg, err, sizeof(err));
	T_CHECK(r == 0, "open: %s", err);
	if (r)
		t_end();
	return r ? NULL : o;
}

static void test_attach(void)
{
	static const struct {
		enum secho_io_xdp_mode mode;
		const char *name;
	} modes[] = {{SECHO_IO_XDP_NATIVE, "native"}, {SECHO_IO_XDP_SKB, "generic"}};

	for (size_t m = 0; m < 2; m++) {
		t_begin("offload: loads and attaches in %s mode, detached at close", modes[m].name);
		struct secho_flow_offload *o;
		char err[300];
		struct secho_flow_offload_cfg cfg = {.ifname = IF1, .mode = modes[m].mode};
		int r = secho_flow_offload_open(&o, &cfg, err, sizeof(err));
		if (r && (r == -EOPNOTSUPP || r == -EINVAL || r == -EPERM || r == -ENOTSUP)) {
			/* the kernel refuses this mode here: every case using it is skipped */
			snprintf(mode_why[m], sizeof(mode_why[m]), "%s", err);
			t_unavailable("%s", err);
			continue;
		}
		T_CHECK(r == 0, "open: %s", err);
		if (r) {
			t_end();
			continue;
		}
		uint32_t drv, skb;
		char name[32];
		xdp_ids(IF1, &drv, &skb);
		uint32_t id = m == 0 ? drv : skb;
		T_CHECK(id && id == secho_flow_offload_prog_id(o), "attached id %u, ours %u", id,
		        secho_flow_offload_prog_id(o));
		T_CHECK((m == 0 ? skb : drv) == 0, "attached in the other mode too");
		T_CHECK(secho_flow_offload_native(o) == (m == 0), "mode reported");
		prog_name(id, name, sizeof(name));
		T_CHECK(!strcmp(name, SECHO_OFFLOAD_PROG_NAME), "program name %s", name);
		T_CHECK(strstr(secho_flow_offload_describe(o), modes[m].name) != NULL,
		        "describe: %s", secho_flow_offload_describe(o));
		printf("  %s\n", secho_flow_offload_describe(o));
		secho_flow_offload_close(o);
		xdp_ids(IF1, &drv, &skb);
		T_CHECK(drv == 0 && skb == 0, "still attached after close: %u %u", drv, skb);
		t_end();
	}
}

/* ---- keys: every frame of the generator, through BPF_PROG_TEST_RUN ---- */

struct key_stats {
	uint64_t frames, keyed, hits, passes;
};

static void check_frame(struct secho_flow_offload *o, int pfd, const uint8_t *frame, size_t len,
                        bool biflow, struct key_stats *ks)
{
	struct secho_dissect d;
	enum secho_dissect_reason r = secho_dissect(frame, len, &d);
	struct expect e;
	uint64_t c0[SECHO_OFFLOAD_CNT_COUNT], c1[SECHO_OFFLOAD_CNT_COUNT];

	if (len < 14)
		return; /* the kernel's test run takes no frame shorter than Ethernet's header */
	expect_of(r, &d, &e);
	ks->frames++;
	if (counters(o, c0))
		return;
	struct secho_flow_key k;
	int dir = 0;
	if (e.keyed) {
		ks->keyed++;
		ref_key(frame, &d, biflow, &k, &dir);
		int ir = secho_flow_offload_insert(o, &k);
		T_CHECK(ir == 0, "frame %llu: insert %d", (unsigned long long)ks->frames, ir);
		int act = test_run(o, pfd, frame, len);
		T_CHECK(act == XDP_DROP, "frame %llu (len %zu, proto %u): action %d, want drop",
		        (unsigned long long)ks->frames, len, d.proto, act);
		struct secho_flow_offload_counts fc;
		int rr = secho_flow_offload_remove(o, &k, &fc);
		uint8_t fl = d.proto == SECHO_IPPROTO_TCP ? d.tcp_flags : 0;
		T_CHECK(rr == 0 && fc.d[dir].packets == 1 && fc.d[dir].octets == d.ip_len &&
		                fc.d[dir].tcp_flags == fl && fc.d[!dir].packets == 0,
		        "frame %llu: counted dir %d: %llu pkts %llu octets (want %u) flags %x/%x, "
		        "other %llu",
		        (unsigned long long)ks->frames, dir, (unsigned long long)fc.d[dir].packets,
		        (unsigned long long)fc.d[dir].octets, d.ip_len, fc.d[dir].tcp_flags, fl,
		        (unsigned long long)fc.d[!dir].packets);
		if (act == XDP_DROP)
			ks->hits++;
		/* without the key: a miss */
		act = test_run(o, pfd, frame, len);
		T_CHECK(act == XDP_PASS, "frame %llu: not offloaded, action %d",
		        (unsigned long long)ks->frames, act);
		if (counters(o, c1))
			return;
		T_CHECK(c1[SECHO_OFFLOAD_CNT_HIT] == c0[SECHO_OFFLOAD_CNT_HIT] + 1 &&
		                c1[SECHO_OFFLOAD_CNT_HIT_OCTETS] ==
		                        c0[SECHO_OFFLOAD_CNT_HIT_OCTETS] + d.ip_len &&
		                c1[SECHO_OFFLOAD_CNT_MISS] == c0[SECHO_OFFLOAD_CNT_MISS] + 1,
		        "frame %llu: hit/miss counters", (unsigned long long)ks->frames);
		return;
	}
	/* Not keyed: passed whatever the map holds; offload the key it would have had (if
	 * it has addresses) to show that the map does not matter. */
	bool has_key = r == SECHO_DISSECT_OK && d.ip_version;
	if (has_key) {
		ref_key(frame, &d, biflow, &k, &dir);
		has_key = secho_flow_offload_insert(o, &k) == 0;
	}
	int act = test_run(o, pfd, frame, len);
	T_CHECK(act == XDP_PASS, "frame %llu (dissect %s, frag %u, flags %x): action %d, want pass",
	        (unsigned long long)ks->frames, secho_dissect_reason_name(r), d.frag, d.tcp_flags,
	        act);
	if (act == XDP_PASS)
		ks->passes++;
	if (has_key) {
		struct secho_flow_offload_counts fc;
		secho_flow_offload_remove(o, &k, &fc);
		T_CHECK(fc.d[0].packets == 0 && fc.d[1].packets == 0, "frame %llu counted",
		        (unsigned long long)ks->frames);
	}
	if (counters(o, c1))
		return;
	unsigned got = SECHO_OFFLOAD_CNT_COUNT;
	for (unsigned i = 0; i < SECHO_OFFLOAD_CNT_COUNT; i++)
		if (i != SECHO_OFFLOAD_CNT_XSK && c1[i] != c0[i])
			got = got == SECHO_OFFLOAD_CNT_COUNT ? i : SECHO_OFFLOAD_CNT_COUNT + 1;
	bool ok = false;
	for (unsigned i = 0; i < e.nwhy; i++)
		ok |= got == e.why[i] && c1[got] == c0[got] + 1;
	T_CHECK(ok, "frame %llu (dissect %s): counted as %s, want %s",
	        (unsigned long long)ks->frames, secho_dissect_reason_name(r),
	        got < SECHO_OFFLOAD_CNT_COUNT ? secho_flow_offload_counter_name(got) : "?",
	        secho_flow_offload_counter_name(e.why[0]));
}

static void test_keys(void)
{
	static const struct {
		const char *profile;
		uint64_t packets, quick_packets;
		bool biflow;
	} runs[] = {{"conformance", 0, 0, true},
	            {"conformance", 0, 0, false},
	            {"geant", 3000, 600, true},
	            {"nix", 3000, 600, true}};

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		t_begin("offload: %s frames keyed as the meter keys them (%s)", runs[i].profile,
		        runs[i].biflow ? "biflows" : "uniflows");
		struct secho_flow_offload *o;
		char err[300];
		struct secho_flow_offload_cfg cfg = {
		        .ifname = IF1, .mode = SECHO_IO_XDP_SKB, .uniflow = !runs[i].biflow};
		if (!(o = open_for_case(&cfg)))
			continue;
		int r = 0;
		int pfd = prog_fd_of(o);
		struct secho_gen *g;
		struct secho_gen_cfg gc = {.profile = runs[i].profile,
		                           .packets =
		                                   quick ? runs[i].quick_packets : runs[i].packets,
		                           .seed = 7};
		r = secho_gen_new(&g, &gc, err, sizeof(err));
		T_CHECK(r == 0 && pfd >= 0, "generator %d: %s; prog fd %d", r, err, pfd);
		struct key_stats ks = {0};
		static uint8_t buf[SECHO_GEN_MAX_FRAME];
		struct secho_gen_frame f;
		while (r == 0 && secho_gen_next(g, &f) == 1) {
			/* The whole frame as it was on the wire (snapped ones padded). */
			memset(buf, 0, f.len);
			memcpy(buf, f.data, f.caplen);
			check_frame(o, pfd, buf, f.len, runs[i].biflow, &ks);
			if (t_case_failures() > 20)
				break;
		}
		if (!r)
			secho_gen_free(g);
		printf("  %llu frames: %llu keyed (all hits: %llu), %llu passed\n",
		       (unsigned long long)ks.frames, (unsigned long long)ks.keyed,
		       (unsigned long long)ks.hits, (unsigned long long)ks.passes);
		T_CHECK(ks.keyed > 0 && ks.hits == ks.keyed && ks.keyed + ks.passes == ks.frames,
		        "frames %llu keyed %llu hits %llu passes %llu",
		        (unsigned long long)ks.frames, (unsigned long long)ks.keyed,
		        (unsigned long long)ks.hits, (unsigned long long)ks.passes);
		if (pfd >= 0)
			close(pfd);
		secho_flow_offload_close(o);
		t_end();
	}
}

/* ---- keys: the dissector's own test frames, whole and cut at every length ----
 *
 * tests/fuzz/corpus-dissect holds the frames test_dissect builds by hand (test_dissect
 * --write-seeds): a case for every header the dissector follows (the encapsulations and
 * IPv6 extension headers the generator does not write among them) and for every reason it
 * refuses a frame. Each runs through the program whole and cut short at every length, so
 * that every header the program parses is checked against the meter where it ends. */

static const char *corpus_dir(char *buf, size_t n)
{
	const char *root = getenv("SECHO_ROOT");

	snprintf(buf, n, "%s/tests/fuzz/corpus-dissect", root ? root : ".");
	return buf;
}

static void test_corpus_keys(void)
{
	char dir[512];
	corpus_dir(dir, sizeof(dir));

	for (int biflow = 1; biflow >= 0; biflow--) {
		t_begin("offload: the dissector's test frames, whole and cut, keyed as the meter "
		        "keys them (%s)",
		        biflow ? "biflows" : "uniflows");
		struct secho_flow_offload_cfg cfg = {
		        .ifname = IF1, .mode = SECHO_IO_XDP_SKB, .uniflow = !biflow};
		struct secho_flow_offload *o = open_for_case(&cfg);
		if (!o)
			continue;
		int pfd = prog_fd_of(o);
		DIR *dp = opendir(dir);
		T_CHECK(dp != NULL && pfd >= 0, "%s: %s; prog fd %d", dir, strerror(errno), pfd);
		struct key_stats ks = {0};
		unsigned files = 0;
		struct dirent *de;
		while (dp && (de = readdir(dp)) != NULL && t_case_failures() <= 20) {
			if (de->d_name[0] == '.')
				continue;
			char path[1024];
			static uint8_t buf[SECHO_GEN_MAX_FRAME];
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			FILE *fp = fopen(path, "rb");
			if (!fp)
				continue;
			size_t len = fread(buf, 1, sizeof(buf), fp);
			fclose(fp);
			files++;
			for (size_t cut = 14; cut <= len; cut++)
				check_frame(o, pfd, buf, cut, biflow, &ks);
		}
		if (dp)
			closedir(dp);
		printf("  %u files, %llu frames: %llu keyed (all hits: %llu), %llu passed\n", files,
		       (unsigned long long)ks.frames, (unsigned long long)ks.keyed,
		       (unsigned long long)ks.hits, (unsigned long long)ks.passes);
		T_CHECK(files >= 40 && ks.keyed > 0 && ks.hits == ks.keyed &&
		                ks.keyed + ks.passes == ks.frames,
		        "files %u frames %llu keyed %llu hits %llu passes %llu", files,
		        (unsigned long long)ks.frames, (unsigned long long)ks.keyed,
		        (unsigned long long)ks.hits, (unsigned long long)ks.passes);
		if (pfd >= 0)
			close(pfd);
		secho_flow_offload_close(o);
		t_end();
	}
}

/* ---- counting against the truth ---- */

#define MM_SLOTS (1u << 16)

/* A flow of the small meter below (canonical key), or a key of the truth (as seen). */
struct mm_flow {
	struct secho_flow_key key;
	bool used, offloaded;
	uint64_t seen;
	uint64_t packets[2], octets[2];
	uint8_t flags[2];
};

static struct mm_flow *mm_find(struct mm_flow *t, const struct secho_flow_key *k)
{
	uint32_t h = 2166136261u;
	const uint8_t *p = (const uint8_t *)k;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 16777619u;
	for (uint32_t n = 0; n < MM_SLOTS; n++) {
		struct mm_flow *f = &t[(h + n) & (MM_SLOTS - 1)];
		if (!f->used) {
			f->used = true;
			f->key = *k;
			return f;
		}
		if (!memcmp(&f->key, k, sizeof(*k)))
			return f;
	}
	return NULL;
}

static void truth_flow(void *ctx, const struct secho_gen_flow *fl)
{
	struct mm_flow *f = mm_find(ctx, &fl->key);

	if (f) {
		f->packets[0] += fl->dir.packets;
		f->octets[0] += fl->dir.octets;
		f->flags[0] |= fl->dir.tcp_flags;
	}
}

static void test_truth(void)
{
	static const char *const profiles[] = {"heavy", "geant", "nix"};

	for (size_t i = 0; i < 3; i++) {
		t_begin("offload: %s: the meter's counts plus the map's equal the truth",
		        profiles[i]);
		struct secho_flow_offload *o;
		char err[300];
		struct secho_flow_offload_cfg cfg = {.ifname = IF1, .mode = SECHO_IO_XDP_SKB};
		if (!(o = open_for_case(&cfg)))
			continue;
		int r = 0;
		struct mm_flow *meter = calloc(MM_SLOTS, sizeof(*meter));
		struct mm_flow *truth = calloc(MM_SLOTS, sizeof(*truth));
		int pfd = prog_fd_of(o);
		struct secho_gen *g = NULL;
		struct secho_gen_cfg gc = {.profile = profiles[i],
		                           .packets = quick ? 4000 : 20000,
		                           .seed = 11,
		                           .on_flow = truth_flow,
		                           .ctx = truth};
		r = meter && truth ? secho_gen_new(&g, &gc, err, sizeof(err)) : -ENOMEM;
		T_CHECK(r == 0 && pfd >= 0, "generator %d %s", r, err);
		static uint8_t buf[SECHO_GEN_MAX_FRAME];
		struct secho_gen_frame f;
		uint64_t frames = 0, dropped = 0, octets_dropped = 0, full = 0;
		while (r == 0 && secho_gen_next(g, &f) == 1) {
			memset(buf, 0, f.len);
			memcpy(buf, f.data, f.caplen);
			frames++;
			int act = test_run(o, pfd, buf, f.len);
			struct secho_dissect d;
			if (secho_dissect(buf, f.len, &d) != SECHO_DISSECT_OK || !d.ip_version)
				continue;
			if (act == XDP_DROP) {
				dropped++;
				octets_dropped += d.ip_len;
				continue;
			}
			T_CHECK(act == XDP_PASS, "action %d", act);
			/* The small meter: count it, offload the flow at its 4th packet. */
			struct secho_flow_key k;
			int dir;
			ref_key(buf, &d, true, &k, &dir);
			struct mm_flow *m = mm_find(meter, &k);
			if (!m)
				continue;
			m->packets[dir]++;
			m->octets[dir] += d.ip_len;
			m->flags[dir] |= d.proto == SECHO_IPPROTO_TCP ? d.tcp_flags : 0;
			if (++m->seen == 4 && !m->offloaded) {
				int ir = secho_flow_offload_insert(o, &k);
				m->offloaded = ir == 0;
				full += ir == -E2BIG;
			}
		}
		if (g)
			secho_gen_free(g);
		T_CHECK(secho_flow_offload_detach(o) == 0, "detach");
		/* Take every offloaded flow back; compare per key and direction as seen. */
		uint64_t back = 0, mismatches = 0, keys = 0, map_octets = 0;
		for (uint32_t s = 0; s < MM_SLOTS && meter && truth; s++) {
			struct mm_flow *m = &meter[s];
			if (!m->used)
				continue;
			if (m->offloaded) {
				struct secho_flow_offload_counts c;
				T_CHECK(secho_flow_offload_remove(o, &m->key, &c) == 0, "remove");
				for (int d = 0; d < 2; d++) {
					m->packets[d] += c.d[d].packets;
					m->octets[d] += c.d[d].octets;
					m->flags[d] |= c.d[d].tcp_flags;
					back += c.d[d].packets;
					map_octets += c.d[d].octets;
				}
			}
			for (int d = 0; d < 2; d++) {
				if (!m->packets[d])
					continue;
				/* the reverse direction: the other end's key (an ICMP query's
				 * answer type too: the meter's own rule, key.h) */
				struct secho_flow_key k = m->key;
				if (d)
					secho_flow_key_reverse(&k);
				struct mm_flow *t = mm_find(truth, &k);
				keys++;
				if (!t || t->packets[0] != m->packets[d] ||
				    t->octets[0] != m->octets[d] || t->flags[0] != m->flags[d]) {
					mismatches++;
					T_CHECK(0,
					        "key %zu dir %d: %llu/%llu packets %llu/%llu "
					        "octets",
					        (size_t)s, d, (unsigned long long)m->packets[d],
					        t ? (unsigned long long)t->packets[0] : 0ull,
					        (unsigned long long)m->octets[d],
					        t ? (unsigned long long)t->octets[0] : 0ull);
				}
				if (t)
					t->seen = 1; /* matched */
			}
		}
		uint64_t truth_keys = 0, unmatched = 0;
		for (uint32_t s = 0; s < MM_SLOTS && truth; s++)
			if (truth[s].used) {
				truth_keys++;
				unmatched += !truth[s].seen;
			}
		printf("  %llu frames, %llu dropped by the program (%llu octets), %llu counted "
		       "back from the map; %llu keys\n",
		       (unsigned long long)frames, (unsigned long long)dropped,
		       (unsigned long long)octets_dropped, (unsigned long long)back,
		       (unsigned long long)keys);
		T_CHECK(back == dropped && map_octets == octets_dropped,
		        "map gave back %llu packets, the program dropped %llu",
		        (unsigned long long)back, (unsigned long long)dropped);
		T_CHECK(dropped > frames / 2, "the program took only %llu of %llu",
		        (unsigned long long)dropped, (unsigned long long)frames);
		T_CHECK(mismatches == 0 && unmatched == 0 && keys == truth_keys && full == 0,
		        "%llu mismatches, %llu truth keys unmatched (%llu vs %llu), %llu full",
		        (unsigned long long)mismatches, (unsigned long long)unmatched,
		        (unsigned long long)keys, (unsigned long long)truth_keys,
		        (unsigned long long)full);
		long left = secho_flow_offload_scan(o, NULL, NULL);
		T_CHECK(left == 0, "map not empty after the removals: %ld", left);
		if (pfd >= 0)
			close(pfd);
		free(meter);
		free(truth);
		secho_flow_offload_close(o);
		t_end();
	}
}

/* ---- frames built here ---- */

static const uint8_t MAC0[6] = {2, 0, 0, 0, 0, 0x10}, MAC1[6] = {2, 0, 0, 0, 0, 0x11};

/* An Ethernet + IPv4 + TCP frame from 198.18.0.s:sp to 198.19.255.d:dp with flags and
 * paylen bytes of payload. Returns its length. */
static size_t tcp4(uint8_t *b, uint8_t s, uint8_t d, uint16_t sp, uint16_t dp, uint8_t flags,
                   uint16_t paylen)
{
	size_t len = 14 + 20 + 20 + paylen;
	uint16_t tot = (uint16_t)(20 + 20 + paylen);

	memset(b, 0, len < 60 ? 60 : len);
	memcpy(b, MAC1, 6);
	memcpy(b + 6, MAC0, 6);
	b[12] = 0x08;
	uint8_t *ip = b + 14;
	ip[0] = 0x45;
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[8] = 64;
	ip[9] = SECHO_IPPROTO_TCP;
	ip[12] = 198, ip[13] = 18, ip[14] = 0, ip[15] = s;
	ip[16] = 198, ip[17] = 19, ip[18] = 255, ip[19] = d;
	uint8_t *t = ip + 20;
	t[0] = (uint8_t)(sp >> 8), t[1] = (uint8_t)sp;
	t[2] = (uint8_t)(dp >> 8), t[3] = (uint8_t)dp;
	t[12] = 5 << 4;
	t[13] = flags;
	return len < 60 ? 60 : len;
}

static void key_of_frame(const uint8_t *b, size_t len, struct secho_flow_key *k, int *dir)
{
	struct secho_dissect d;

	secho_dissect(b, len, &d);
	ref_key(b, &d, true, k, dir);
}

static void test_tcp_ctl_and_full(void)
{
	t_begin("offload: SYN, FIN, RST pass; misses pass; counters");
	struct secho_flow_offload *o;
	struct secho_flow_offload_cfg cfg = {.ifname = IF1, .mode = SECHO_IO_XDP_SKB, .flows = 8};
	if (!(o = open_for_case(&cfg)))
		return;
	int r;
	int pfd = prog_fd_of(o);
	uint8_t b[200];
	struct secho_flow_key k;
	int dir;
	size_t n = tcp4(b, 1, 1, 40000, 443, 0x10, 100);
	key_of_frame(b, n, &k, &dir);
	T_CHECK(secho_flow_offload_insert(o, &k) == 0, "insert");
	T_CHECK(secho_flow_offload_insert(o, &k) == -EEXIST, "second insert of one key");
	static const struct {
		uint8_t flags;
		int act;
	} cases[] = {{0x10, XDP_DROP}, {0x18, XDP_DROP}, {0x02, XDP_PASS},
	             {0x12, XDP_PASS}, {0x11, XDP_PASS}, {0x04, XDP_PASS},
	             {0x14, XDP_PASS}, {0x30, XDP_DROP}, {0xc0, XDP_DROP}};
	uint64_t c0[SECHO_OFFLOAD_CNT_COUNT], c1[SECHO_OFFLOAD_CNT_COUNT];
	counters(o, c0);
	uint8_t or_flags = 0;
	unsigned drops = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* both directions */
		n = tcp4(b, 1, 1, 40000, 443, cases[i].flags, 100);
		T_CHECK(test_run(o, pfd, b, n) == cases[i].act, "flags %#x", cases[i].flags);
		if (cases[i].act == XDP_DROP) {
			or_flags |= cases[i].flags;
			drops++;
		}
	}
	/* the reverse direction: 198.19.255.1:443 -> 198.18.0.1:40000 */
	n = tcp4(b, 1, 1, 40000, 443, 0x10, 0);
	uint8_t tmp[4];
	memcpy(tmp, b + 26, 4);
	memcpy(b + 26, b + 30, 4);
	memcpy(b + 30, tmp, 4);
	b[34] = 443 >> 8, b[35] = 443 & 0xff, b[36] = 40000 >> 8, b[37] = 40000 & 0xff;
	T_CHECK(test_run(o, pfd, b, n) == XDP_DROP, "reverse direction dropped");
	/* a miss: another port */
	n = tcp4(b, 1, 1, 40001, 443, 0x10, 100);
	T_CHECK(test_run(o, pfd, b, n) == XDP_PASS, "other flow passed");
	counters(o, c1);
	T_CHECK(c1[SECHO_OFFLOAD_CNT_HIT] - c0[SECHO_OFFLOAD_CNT_HIT] == drops + 1, "hits");
	T_CHECK(c1[SECHO_OFFLOAD_CNT_PASS_TCP_CTL] - c0[SECHO_OFFLOAD_CNT_PASS_TCP_CTL] == 5,
	        "tcp control passes %llu",
	        (unsigned long long)(c1[SECHO_OFFLOAD_CNT_PASS_TCP_CTL] -
	                             c0[SECHO_OFFLOAD_CNT_PASS_TCP_CTL]));
	T_CHECK(c1[SECHO_OFFLOAD_CNT_MISS] - c0[SECHO_OFFLOAD_CNT_MISS] == 1, "misses");
	struct secho_flow_offload_counts c;
	T_CHECK(secho_flow_offload_lookup(o, &k, &c) == 0, "lookup");
	T_CHECK(c.d[dir].packets == drops && c.d[dir].octets == drops * 140ull &&
	                c.d[dir].tcp_flags == or_flags && c.d[!dir].packets == 1 &&
	                c.d[!dir].octets == 40,
	        "counts %llu/%llu %llu %x", (unsigned long long)c.d[dir].packets,
	        (unsigned long long)c.d[!dir].packets, (unsigned long long)c.d[dir].octets,
	        c.d[dir].tcp_flags);
	T_CHECK(c.d[dir].first_ns && c.d[dir].first_ns <= c.d[dir].last_ns, "times");
	t_end();

	t_begin("offload: a full map refuses an insert");
	uint64_t ops[SECHO_OFFLOAD_OP_COUNT];
	T_CHECK(secho_flow_offload_capacity(o) == 8, "capacity %u", secho_flow_offload_capacity(o));
	int ok = 1; /* k is in */
	for (uint16_t p = 1; p < 20; p++) {
		struct secho_flow_key x = k;
		x.sport = (uint16_t)(p + 1);
		r = secho_flow_offload_insert(o, &x);
		if (!r)
			ok++;
		else
			T_CHECK(r == -E2BIG, "insert %u: %d (want E2BIG when full)", p, r);
	}
	T_CHECK(ok == 8, "%d flows fit in a map of 8", ok);
	secho_flow_offload_ops(o, ops);
	T_CHECK(ops[SECHO_OFFLOAD_OP_INSERT_FULL] == 12, "insert_full %llu",
	        (unsigned long long)ops[SECHO_OFFLOAD_OP_INSERT_FULL]);
	T_CHECK(secho_flow_offload_remove(o, &k, &c) == 0, "remove");
	T_CHECK(secho_flow_offload_remove(o, &k, &c) == -ENOENT, "second remove");
	T_CHECK(secho_flow_offload_insert(o, &k) == 0, "insert after a removal");
	long seen = secho_flow_offload_scan(o, NULL, NULL);
	T_CHECK(seen == 8, "scan saw %ld", seen);
	if (pfd >= 0)
		close(pfd);
	secho_flow_offload_close(o);
	t_end();
}

/* ---- the record's timeouts, in the program ---- */

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool on_cpu(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0;
}

static void test_timeouts(void)
{
	t_begin("offload: packets after the active timeout or an idle time go to the meter");
	struct secho_flow_offload *o;
	struct secho_flow_offload_cfg cfg = {
	        .ifname = IF1, .mode = SECHO_IO_XDP_SKB, .inactive_ns = 300000000ull};
	if (!(o = open_for_case(&cfg)))
		return;
	int pfd = prog_fd_of(o);
	uint8_t b[200];
	struct secho_flow_key ka, kf, ki;
	int dir;
	uint64_t c0[SECHO_OFFLOAD_CNT_COUNT], c1[SECHO_OFFLOAD_CNT_COUNT];
	struct secho_flow_offload_counts c;
	cpu_set_t saved;
	sched_getaffinity(0, sizeof(saved), &saved);
	on_cpu(0);

	/* a: its record's active timeout passed a second ago; f: in a minute */
	size_t na = tcp4(b, 2, 2, 40000, 443, 0x10, 10);
	key_of_frame(b, na, &ka, &dir);
	T_CHECK(secho_flow_offload_insert_until(o, &ka, wall_ns() - 1000000000ull) == 0, "a");
	counters(o, c0);
	T_CHECK(test_run(o, pfd, b, na) == XDP_PASS, "past its active timeout: passed");
	counters(o, c1);
	T_CHECK(c1[SECHO_OFFLOAD_CNT_PASS_ACTIVE] == c0[SECHO_OFFLOAD_CNT_PASS_ACTIVE] + 1 &&
	                c1[SECHO_OFFLOAD_CNT_HIT] == c0[SECHO_OFFLOAD_CNT_HIT],
	        "counted as pass_active");
	T_CHECK(secho_flow_offload_lookup(o, &ka, &c) == 0 && !c.d[0].packets && !c.d[1].packets,
	        "nothing counted in the map");
	size_t nf = tcp4(b, 3, 3, 40000, 443, 0x10, 10);
	key_of_frame(b, nf, &kf, &dir);
	T_CHECK(secho_flow_offload_insert_until(o, &kf, wall_ns() + 60000000000ull) == 0, "f");
	T_CHECK(test_run(o, pfd, b, nf) == XDP_DROP, "before its active timeout: counted");

	/* i: counted, then idle for the inactive timeout: passed, and stays passed */
	size_t ni = tcp4(b, 4, 4, 40000, 443, 0x10, 10);
	key_of_frame(b, ni, &ki, &dir);
	T_CHECK(secho_flow_offload_insert(o, &ki) == 0, "i");
	T_CHECK(test_run(o, pfd, b, ni) == XDP_DROP, "fresh: counted");
	usleep(150000);
	T_CHECK(test_run(o, pfd, b, ni) == XDP_DROP, "150 ms later: counted");
	usleep(400000);
	counters(o, c0);
	T_CHECK(test_run(o, pfd, b, ni) == XDP_PASS, "idle 400 ms: passed");
	T_CHECK(test_run(o, pfd, b, ni) == XDP_PASS, "and the next packet too");
	counters(o, c1);
	T_CHECK(c1[SECHO_OFFLOAD_CNT_PASS_IDLE] == c0[SECHO_OFFLOAD_CNT_PASS_IDLE] + 2,
	        "counted as pass_idle");
	T_CHECK(secho_flow_offload_lookup(o, &ki, &c) == 0 && c.d[dir].packets == 2,
	        "the map kept its 2 packets: %llu", (unsigned long long)c.d[dir].packets);

	/* idle on this CPU but not on another: counted (the copies of every CPU are asked) */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu >= 2 && on_cpu(1)) {
		size_t nm = tcp4(b, 5, 5, 40000, 443, 0x10, 10);
		struct secho_flow_key km;
		key_of_frame(b, nm, &km, &dir);
		on_cpu(0);
		T_CHECK(secho_flow_offload_insert(o, &km) == 0, "m");
		for (int i = 0; i < 8; i++) { /* 400 ms of packets, all on CPU 0 */
			T_CHECK(test_run(o, pfd, b, nm) == XDP_DROP, "on CPU 0: counted");
			usleep(50000);
		}
		on_cpu(1);
		T_CHECK(test_run(o, pfd, b, nm) == XDP_DROP,
		        "first packet on CPU 1, the flow busy on CPU 0: counted");
		T_CHECK(secho_flow_offload_lookup(o, &km, &c) == 0 && c.d[dir].packets == 9,
		        "9 packets in the map: %llu", (unsigned long long)c.d[dir].packets);
	} else {
		printf("  one CPU: the check across CPUs is not exercised\n");
	}
	sched_setaffinity(0, sizeof(saved), &saved);
	if (pfd >= 0)
		close(pfd);
	secho_flow_offload_close(o);
	t_end();
}

/* ---- handles of several threads ---- */

struct share_arg {
	struct secho_flow_offload *h;
	int pfd;
	uint8_t id; /* this thread's keys: 198.18.0.id, ports 1000.. */
	unsigned bad, rounds;
};

static void *share_main(void *p)
{
	struct share_arg *a = p;
	uint8_t b[400];

	for (unsigned r = 0; r < a->rounds; r++) {
		struct secho_flow_key k[16];
		int dir[16];
		for (unsigned i = 0; i < 16; i++) {
			size_t n = tcp4(b, a->id, 9, (uint16_t)(1000 + i), 443, 0x10,
			                (uint16_t)(10 * i + r % 7));
			key_of_frame(b, n, &k[i], &dir[i]);
			if (secho_flow_offload_insert(a->h, &k[i]))
				a->bad++;
			for (unsigned j = 0; j <= i % 4; j++)
				if (test_run(a->h, a->pfd, b, n) != XDP_DROP)
					a->bad++;
		}
		if (r % 8 == 0 && secho_flow_offload_scan(a->h, NULL, NULL) < 16)
			a->bad++;
		for (unsigned i = 0; i < 16; i++) {
			struct secho_flow_offload_counts c;
			uint64_t len = 40 + 10 * i + r % 7;
			uint64_t want = i % 4 + 1;
			if (secho_flow_offload_remove(a->h, &k[i], &c) ||
			    c.d[dir[i]].packets != want || c.d[dir[i]].octets != want * len ||
			    c.d[!dir[i]].packets)
				a->bad++;
		}
	}
	return NULL;
}

static void test_shared(void)
{
	t_begin("offload: two threads, each with its own handle on one map");
	struct secho_flow_offload *o;
	struct secho_flow_offload_cfg cfg = {.ifname = IF1, .mode = SECHO_IO_XDP_SKB};
	if (!(o = open_for_case(&cfg)))
		return;
	struct share_arg a[2];
	pthread_t th[2];
	for (int i = 0; i < 2; i++) {
		a[i] = (struct share_arg){.id = (uint8_t)(10 + i), .rounds = quick ? 40 : 200};
		T_CHECK(secho_flow_offload_share(o, &a[i].h) == 0, "share");
		a[i].pfd = prog_fd_of(o);
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, share_main, &a[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++) {
		uint64_t ops[SECHO_OFFLOAD_OP_COUNT];
		secho_flow_offload_ops(a[i].h, ops);
		T_CHECK(a[i].bad == 0, "thread %d: %u operations or counts wrong", i, a[i].bad);
		T_CHECK(ops[SECHO_OFFLOAD_OP_INSERTS] == 16ull * a[i].rounds &&
		                ops[SECHO_OFFLOAD_OP_REMOVES] == 16ull * a[i].rounds,
		        "thread %d: its own counts: %llu inserts, %llu removes", i,
		        (unsigned long long)ops[SECHO_OFFLOAD_OP_INSERTS],
		        (unsigned long long)ops[SECHO_OFFLOAD_OP_REMOVES]);
		T_CHECK(secho_flow_offload_detach(a[i].h) == 0 && secho_flow_offload_prog_id(o),
		        "a shared handle does not detach");
		secho_flow_offload_close(a[i].h);
		close(a[i].pfd);
	}
	uint32_t drv, skb;
	xdp_ids(IF1, &drv, &skb);
	T_CHECK(skb == secho_flow_offload_prog_id(o), "still attached after the shares closed");
	T_CHECK(secho_flow_offload_scan(o, NULL, NULL) == 0, "map empty");
	secho_flow_offload_close(o);
	t_end();
}

/* ---- frames on the wire ---- */

static int packet_socket(const char *ifname)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	struct sockaddr_ll sll = {.sll_family = AF_PACKET,
	                          .sll_protocol = htons(ETH_P_ALL),
	                          .sll_ifindex = (int)if_nametoindex(ifname)};
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* What one round of sending gets to the receiver. */
struct wire_count {
	unsigned a_data, a_ctl, b;
};

static void classify(const uint8_t *b, ssize_t n, struct wire_count *w)
{
	if (n < 54 || b[12] != 0x08 || b[13] != 0 || b[14 + 9] != SECHO_IPPROTO_TCP)
		return;
	uint16_t sp = (uint16_t)(b[34] << 8 | b[35]);
	if (sp == 50000)
		w->b++;
	else if (sp == 40000)
		(b[47] & 0x07) ? w->a_ctl++ : w->a_data++;
}

/* Send 200 data + 3 control frames of flow A (offloaded) and 50 of flow B from o0; count
 * on o1 what arrives through rx (a packet socket, or the io layer). */
static void send_round(int tx, int rx_fd, struct secho_io *io, struct wire_count *w)
{
	uint8_t b[1600];
	struct sockaddr_ll to = {
	        .sll_family = AF_PACKET, .sll_ifindex = (int)if_nametoindex(IF0), .sll_halen = 6};
	unsigned sent = 0;

	memcpy(to.sll_addr, MAC1, 6);
	for (int i = 0; i < 253; i++) {
		size_t n;
		if (i < 200)
			n = tcp4(b, 2, 2, 40000, 443, 0x18, (uint16_t)(100 + i));
		else if (i < 203)
			n = tcp4(b, 2, 2, 40000, 443, i == 200 ? 0x02 : i == 201 ? 0x11 : 0x04, 0);
		else
			n = tcp4(b, 2, 2, 50000, 443, 0x10, 10);
		if (sendto(tx, b, n, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)n)
			sent++;
		if (i % 16 == 15)
			usleep(200); /* no socket buffer or ring fills up */
	}
	T_CHECK(sent == 253, "sent %u", sent);
	/* Collect until 300 ms pass without a frame (at most 3 s). */
	struct timespec t0, t1, last;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	last = t0;
	for (;;) {
		bool got = false;
		if (io) {
			struct secho_io_pkt p[SECHO_IO_BURST];
			unsigned k = secho_io_rx_burst(io, p, SECHO_IO_BURST);
			for (unsigned j = 0; j < k; j++)
				classify(p[j].data, p[j].len, w);
			secho_io_rx_release(io, p, k);
			got = k > 0;
			if (!k)
				secho_io_wait(io, 20);
		} else {
			struct pollfd pf = {.fd = rx_fd, .events = POLLIN};
			poll(&pf, 1, 20);
			ssize_t k;
			while ((k = recv(rx_fd, b, sizeof(b), 0)) > 0) {
				classify(b, k, w);
				got = true;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (got)
			last = t1;
		double quiet =
		        (double)(t1.tv_sec - last.tv_sec) + (t1.tv_nsec - last.tv_nsec) / 1e9;
		double total = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (quiet > 0.3 || total > 3)
			break;
	}
}

struct scan_ctx {
	struct secho_flow_key k;
	struct secho_flow_offload_counts c;
	int n;
};

static void scan_one(void *x, const struct secho_flow_key *key,
                     const struct secho_flow_offload_counts *c)
{
	struct scan_ctx *s = x;

	if (!memcmp(key, &s->k, sizeof(*key))) {
		s->c = *c;
		s->n++;
	}
}

static void test_wire(bool use_xsk)
{
	static const struct {
		enum secho_io_xdp_mode mode;
		const char *name;
	} modes[] = {{SECHO_IO_XDP_NATIVE, "native"}, {SECHO_IO_XDP_SKB, "generic"}};

	for (size_t m = 0; m < 2; m++) {
		t_begin("offload: frames on a veth, %s XDP, to %s", modes[m].name,
		        use_xsk ? "an AF_XDP socket (XSKMAP)" : "a packet socket");
		struct secho_flow_offload *o;
		char err[300];
		struct secho_flow_offload_cfg cfg = {.ifname = IF1, .mode = modes[m].mode};
		if (!(o = open_for_case(&cfg)))
			continue;
		struct secho_io *io = NULL;
		int rx = -1, tx = packet_socket(IF0);
		if (use_xsk) {
			struct secho_io_cfg ic = {.kind = SECHO_IO_XDP,
			                          .ifname = IF1,
			                          .queue = 0,
			                          .xdp_copy = true,
			                          .xdp_external_prog = true,
			                          .xsk_map_fd = secho_flow_offload_xsk_map_fd(o),
			                          .rx_ring = 512,
			                          .tx_ring = 64};
			io = secho_io_open(&ic, err, sizeof(err));
			if (!io) {
				t_unavailable("AF_XDP: %s", err);
				close(tx);
				secho_flow_offload_close(o);
				continue;
			}
		} else {
			rx = packet_socket(IF1);
		}
		T_CHECK(tx >= 0 && (io || rx >= 0), "sockets %d %d", tx, rx);
		uint8_t b[200];
		struct secho_flow_key k;
		int dir;
		size_t n = tcp4(b, 2, 2, 40000, 443, 0x10, 0);
		key_of_frame(b, n, &k, &dir);
		T_CHECK(secho_flow_offload_insert(o, &k) == 0, "insert");
		struct timespec before;
		clock_gettime(CLOCK_REALTIME, &before);
		struct wire_count w = {0};
		if (tx >= 0 && (io || rx >= 0))
			send_round(tx, rx, io, &w);
		T_CHECK(w.a_data == 0 && w.a_ctl == 3 && w.b == 50,
		        "received: %u offloaded data (want 0), %u control (3), %u other (50)",
		        w.a_data, w.a_ctl, w.b);
		uint64_t c[SECHO_OFFLOAD_CNT_COUNT];
		counters(o, c);
		T_CHECK(c[SECHO_OFFLOAD_CNT_HIT] == 200 && c[SECHO_OFFLOAD_CNT_PASS_TCP_CTL] == 3 &&
		                c[SECHO_OFFLOAD_CNT_MISS] == 50,
		        "hits %llu ctl %llu misses %llu",
		        (unsigned long long)c[SECHO_OFFLOAD_CNT_HIT],
		        (unsigned long long)c[SECHO_OFFLOAD_CNT_PASS_TCP_CTL],
		        (unsigned long long)c[SECHO_OFFLOAD_CNT_MISS]);
		if (use_xsk)
			T_CHECK(c[SECHO_OFFLOAD_CNT_XSK] == 53, "to the AF_XDP socket: %llu",
			        (unsigned long long)c[SECHO_OFFLOAD_CNT_XSK]);
		else
			T_CHECK(c[SECHO_OFFLOAD_CNT_XSK] == 0, "xsk %llu",
			        (unsigned long long)c[SECHO_OFFLOAD_CNT_XSK]);
		/* the map's last-seen time, read by a scan, in wall-clock time */
		struct scan_ctx sc = {.k = k};
		long seen = secho_flow_offload_scan(o, scan_one, &sc);
		struct timespec after;
		clock_gettime(CLOCK_REALTIME, &after);
		uint64_t b_ns = (uint64_t)before.tv_sec * 1000000000ull + (uint64_t)before.tv_nsec;
		uint64_t a_ns = (uint64_t)after.tv_sec * 1000000000ull + (uint64_t)after.tv_nsec;
		uint64_t want_oct = 0;
		for (int i = 0; i < 200; i++)
			want_oct += 40 + 100 + (uint64_t)i;
		T_CHECK(seen == 1 && sc.n == 1 && sc.c.d[dir].packets == 200 &&
		                sc.c.d[dir].octets == want_oct && sc.c.d[dir].tcp_flags == 0x18,
		        "scan %ld: %llu packets %llu octets", seen,
		        (unsigned long long)sc.c.d[dir].packets,
		        (unsigned long long)sc.c.d[dir].octets);
		/* 5 ms of slack for the two clocks' offset being read at another moment */
		T_CHECK(sc.c.d[dir].first_ns + 5000000 >= b_ns &&
		                sc.c.d[dir].last_ns <= a_ns + 5000000 &&
		                sc.c.d[dir].first_ns < sc.c.d[dir].last_ns,
		        "times %llu..%llu not within %llu..%llu",
		        (unsigned long long)sc.c.d[dir].first_ns,
		        (unsigned long long)sc.c.d[dir].last_ns, (unsigned long long)b_ns,
		        (unsigned long long)a_ns);
		if (io)
			secho_io_close(io);
		if (rx >= 0)
			close(rx);
		if (tx >= 0)
			close(tx);
		secho_flow_offload_close(o);
		t_end();
	}
}

/* ---- crashes and strangers ---- */

/* A child that opens the offload tier and waits to be killed. Returns its pid; -1. */
static pid_t owner_child(bool netlink)
{
	int p[2];
	if (pipe(p))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		struct secho_flow_offload *o;
		char err[300];
		struct secho_flow_offload_cfg cfg = {
		        .ifname = IF1, .mode = SECHO_IO_XDP_SKB, .attach_netlink = netlink};
		char ok = secho_flow_offload_open(&o, &cfg, err, sizeof(err)) == 0 ? 'y' : 'n';
		if (write(p[1], &ok, 1) != 1)
			_exit(1);
		for (int i = 0; i < 600; i++) /* bounded: 60 s */
			usleep(100000);
		_exit(0);
	}
	close(p[1]);
	char c = 0;
	if (pid < 0 || read(p[0], &c, 1) != 1 || c != 'y') {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		pid = -1;
	}
	close(p[0]);
	return pid;
}

static void kill9(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_crash(void)
{
	uint32_t drv, skb;
	char err[300], msg[300];

	t_begin("offload: kill -9 with a BPF link: nothing left, the next start attaches");
	pid_t pid = owner_child(false);
	if (pid < 0) {
		t_unavailable("the child could not attach");
	} else {
		xdp_ids(IF1, &drv, &skb);
		T_CHECK(skb != 0, "child's program not attached");
		kill9(pid);
		for (int i = 0; i < 100 && (xdp_ids(IF1, &drv, &skb), skb); i++)
			usleep(10000); /* the kernel releases the link as the process goes */
		T_CHECK(skb == 0, "program %u still attached after kill -9", skb);
		struct secho_flow_offload *o;
		struct secho_flow_offload_cfg cfg = {.ifname = IF1, .mode = SECHO_IO_XDP_SKB};
		int r = secho_flow_offload_open(&o, &cfg, err, sizeof(err));
		T_CHECK(r == 0, "open after kill -9: %s", err);
		if (!r)
			secho_flow_offload_close(o);
		t_end();
	}

	t_begin("offload: kill -9 with netlink attachment: the next start cleans up");
	pid = owner_child(true);
	if (pid < 0) {
		t_unavailable("the child could not attach");
	} else {
		xdp_ids(IF1, &drv, &skb);
		uint32_t stale = skb;
		T_CHECK(stale != 0, "child's program not attached");
		/* while its owner lives, it is not ours to remove */
		struct secho_flow_offload *o;
		struct secho_flow_offload_cfg cfg = {.ifname = IF1, .mode = SECHO_IO_XDP_SKB};
		char pidstr[32];
		snprintf(pidstr, sizeof(pidstr), "pid %d", (int)pid);
		int r = secho_flow_offload_open(&o, &cfg, err, sizeof(err));
		T_CHECK(r == -EBUSY && strstr(err, pidstr), "open beside a live owner: %d %s", r,
		        err);
		if (!r)
			secho_flow_offload_close(o);
		xdp_ids(IF1, &drv, &skb);
		T_CHECK(skb == stale, "a live owner's program was touched");
		kill9(pid);
		xdp_ids(IF1, &drv, &skb);
		T_CHECK(skb == stale, "netlink attachment gone with its process (%u)", skb);
		r = secho_flow_offload_open(&o, &cfg, err, sizeof(err));
		T_CHECK(r == 0, "open after kill -9: %s", err);
		xdp_ids(IF1, &drv, &skb);
		T_CHECK(r == 0 && skb == secho_flow_offload_prog_id(o) && skb != stale,
		        "attached %u, ours %u, stale %u", skb,
		        r ? 0 : secho_flow_offload_prog_id(o), stale);
		if (!r)
			secho_flow_offload_close(o);
		xdp_ids(IF1, &drv, &skb);
		T_CHECK(drv == 0 && skb == 0, "left attached: %u %u", drv, skb);
		/* the explicit cleanup, on a stale program of a killed netlink owner */
		pid = owner_child(true);
		if (pid > 0) {
			kill9(pid);
			r = secho_flow_offload_cleanup(IF1, msg, sizeof(msg));
			xdp_ids(IF1, &drv, &skb);
			T_CHECK(r == 1 && skb == 0 && strstr(msg, "removed"), "cleanup %d: %s", r,
			        msg);
		}
		t_end();
	}

	t_begin("offload: another program on the interface is left alone");
	/* r0 = XDP_PASS; exit */
	struct bpf_insn insns[] = {
	        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS},
	        {.code = BPF_JMP | BPF_EXIT}};
	int ffd = bpf_prog_load(BPF_PROG_TYPE_XDP, "foreign", "GPL", insns, 2, NULL);
	if (ffd < 0) {
		t_unavailable("loading a plain XDP program: %s", strerror(errno));
		return;
	}
	int r = bpf_xdp_attach((int)if_nametoindex(IF1), ffd, XDP_FLAGS_SKB_MODE, NULL);
	T_CHECK(r == 0, "attaching the foreign program: %s", strerror(errno));
	xdp_ids(IF1, &drv, &skb);
	uint32_t foreign = skb;
	struct secho_flow_offload *o;
	struct secho_flow_offload_cfg cfg = {.ifname = IF1, .mode = SECHO_IO_XDP_SKB};
	r = secho_flow_offload_open(&o, &cfg, err, sizeof(err));
	T_CHECK(r == -EBUSY && strstr(err, "foreign"), "open over a foreign program: %d %s", r,
	        err);
	if (!r)
		secho_flow_offload_close(o);
	r = secho_flow_offload_cleanup(IF1, msg, sizeof(msg));
	xdp_ids(IF1, &drv, &skb);
	T_CHECK(r == 0 && skb == foreign, "cleanup %d touched program %u (now %u)", r, foreign,
	        skb);
	bpf_xdp_detach((int)if_nametoindex(IF1), XDP_FLAGS_SKB_MODE, NULL);
	close(ffd);
	t_end();
}

int main(void)
{
	quick = getenv("SECHO_TEST_QUICK") != NULL;
	t_begin("offload: network namespace with a veth pair");
	const char *why = netns_setup();
	if (why) {
		t_unavailable("%s", why);
		return t_exit();
	}
	T_CHECK(1, "set up");
	t_end();
	test_attach();
	test_keys();
	test_corpus_keys();
	test_truth();
	test_tcp_ctl_and_full();
	test_timeouts();
	test_shared();
	test_wire(false);
	test_wire(true);
	test_crash();
	return t_exit();
}
