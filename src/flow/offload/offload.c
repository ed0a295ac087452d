/*
 * src/flow/offload/offload.c - the XDP offload tier's user-space side (contract:
 * src/flow/offload/offload.h; the program: src/flow/offload/offload_xdp.bpf.c; shared layout:
 * src/flow/offload/offload_abi.h).
 *
 * The program comes from the libbpf skeleton the build generates from the BPF object
 * (build/gen/flow/offload/offload_xdp.skel.h), so the binary carries it: nothing is read from disk.
 */
#include "flow/offload/offload.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flow/offload/offload_xdp.skel.h"

struct secho_flow_offload {
	struct offload_xdp_bpf *skel; /* NULL in a shared handle */
	int flows_fd, cnt_fd, xsks_fd, meta_fd, prog_fd;
	int sync_fd, sync_inner_fd; /* ARRAY_OF_MAPS whose update waits for running programs */
	int link_fd;                /* BPF link, or -1 (netlink attachment / detached) */
	bool attached, netlink, native;
	uint32_t xdp_flags; /* the mode attached with (netlink detach names it) */
	uint32_t prog_id, capacity;
	unsigned ifindex, ncpus;
	size_t val_stride;                /* bytes per CPU in a per-CPU value (rounded to 8) */
	struct secho_offload_val *vals;   /* ncpus values: one lookup's or remove's worth */
	struct secho_flow_key *scan_keys; /* a scan step's batch (allocated at the first) */
	uint8_t *scan_vals;
	uint64_t ops[SECHO_OFFLOAD_OP_COUNT];
	char ifname[IF_NAMESIZE];
	char desc[640];
};

/* ---- names ---- */

static const char *const cnt_names[] = {
#define SECHO_OFFLOAD_CNT_X(name, id, text) [SECHO_OFFLOAD_CNT_##name] = id,
        SECHO_OFFLOAD_COUNTERS(SECHO_OFFLOAD_CNT_X)
#undef SECHO_OFFLOAD_CNT_X
};
static const char *const cnt_texts[] = {
#define SECHO_OFFLOAD_CNT_X(name, id, text) [SECHO_OFFLOAD_CNT_##name] = text,
        SECHO_OFFLOAD_COUNTERS(SECHO_OFFLOAD_CNT_X)
#undef SECHO_OFFLOAD_CNT_X
};
static const char *const op_names[] = {
#define SECHO_OFFLOAD_OP_X(name, id, text) [SECHO_OFFLOAD_OP_##name] = id,
        SECHO_OFFLOAD_OPS(SECHO_OFFLOAD_OP_X)
#undef SECHO_OFFLOAD_OP_X
};
static const char *const op_texts[] = {
#define SECHO_OFFLOAD_OP_X(name, id, text) [SECHO_OFFLOAD_OP_##name] = text,
        SECHO_OFFLOAD_OPS(SECHO_OFFLOAD_OP_X)
#undef SECHO_OFFLOAD_OP_X
};

const char *secho_flow_offload_counter_name(unsigned i)
{
	return i < SECHO_OFFLOAD_CNT_COUNT ? cnt_names[i] : NULL;
}

const char *secho_flow_offload_counter_text(unsigned i)
{
	return i < SECHO_OFFLOAD_CNT_COUNT ? cnt_texts[i] : NULL;
}

const char *secho_flow_offload_op_name(unsigned i)
{
	return i < SECHO_OFFLOAD_OP_COUNT ? op_names[i] : NULL;
}

const char *secho_flow_offload_op_text(unsigned i)
{
	return i < SECHO_OFFLOAD_OP_COUNT ? op_texts[i] : NULL;
}

/* ---- libbpf's messages ---- */

/* While loading and attaching, libbpf's warnings (the verifier's log, the kernel's netlink
 * error text) are kept here instead of going to stderr, so that a refusal can be reported
 * in one line. SECHO_IO_DEBUG shows everything, as src/io/af_xdp.c does. */
static char libbpf_last[256]; /* NUL-terminated: the last byte is never written */

static int capture_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[256];

	if (getenv("SECHO_IO_DEBUG")) {
		va_list ap2;
		va_copy(ap2, ap);
		vfprintf(stderr, fmt, ap2);
		va_end(ap2);
	}
	if (level == LIBBPF_DEBUG)
		return 0;
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n <= 0)
		return 0;
	line[strcspn(line, "\n")] = '\0';
	/* Keep the most telling line: the kernel's own words, else the last one. */
	if (strstr(line, "Kernel error message") || !strstr(libbpf_last, "Kernel error message"))
		memcpy(libbpf_last, line, strnlen(line, sizeof(libbpf_last) - 1) + 1);
	return 0;
}

static void fmt_err(char *err, size_t errlen, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void fmt_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- processes ---- */

/* Start time of process pid (field 22 of /proc/PID/stat, clock ticks since boot), 0 when
 * there is no such process. */
static uint64_t proc_start_ticks(uint32_t pid)
{
	char path[64], buf[1024];
	uint64_t v = 0;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: fields restart after the last
	 * ')'; the state is field 3, so the start time is the 20th field after it. */
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	for (int field = 3; field <= 22 && p; field++) {
		while (*p == ' ')
			p++;
		if (field == 22) {
			v = strtoull(p, NULL, 10);
			break;
		}
		p = strchr(p, ' ');
	}
	return v;
}

/* ---- finding our program on an interface ---- */

struct prog_desc {
	char name[BPF_OBJ_NAME_LEN];
	bool ours; /* named ours, with a meta map of ours */
	struct secho_offload_meta meta;
};

/* Describe program id: its name, and the owner from its meta map when it is ours. */
static int prog_describe(uint32_t id, struct prog_desc *pd)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info), map_ids[16];
	int fd = bpf_prog_get_fd_by_id(id), r = 0;

	memset(pd, 0, sizeof(*pd));
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = 16;
	info.map_ids = (uint64_t)(uintptr_t)map_ids;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		r = -errno;
		goto out;
	}
	memcpy(pd->name, info.name, sizeof(pd->name));
	pd->name[sizeof(pd->name) - 1] = '\0';
	if (strcmp(pd->name, SECHO_OFFLOAD_PROG_NAME) != 0)
		goto out;
	for (uint32_t i = 0; i < info.nr_map_ids && i < 16; i++) {
		struct bpf_map_info mi;
		uint32_t ml = sizeof(mi), zero = 0;
		int mfd = bpf_map_get_fd_by_id(map_ids[i]);
		if (mfd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		if (!bpf_obj_get_info_by_fd(mfd, &mi, &ml) &&
		    !strcmp(mi.name, SECHO_OFFLOAD_META_NAME) &&
		    mi.value_size == sizeof(struct secho_offload_meta) &&
		    !bpf_map_lookup_elem(mfd, &zero, &pd->meta) &&
		    pd->meta.magic == SECHO_OFFLOAD_MAGIC)
			pd->ours = true;
		close(mfd);
	}
out:
	close(fd);
	return r;
}

static bool owner_alive(const struct secho_offload_meta *m)
{
	return m->pid && proc_start_ticks(m->pid) == m->start_ticks;
}

int secho_flow_offload_cleanup(const char *ifname, char *msg, size_t msglen)
{
	unsigned ifindex = ifname ? if_nametoindex(ifname) : 0;
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int removed = 0;

	fmt_err(msg, msglen, "nothing of ours attached to %s", ifname ? ifname : "?");
	if (!ifindex)
		return -ENODEV;
	if (bpf_xdp_query((int)ifindex, 0, &q))
		return -errno;
	const struct {
		uint32_t id, flag;
		const char *mode;
	} slots[] = {{q.drv_prog_id, XDP_FLAGS_DRV_MODE, "native"},
	             {q.skb_prog_id, XDP_FLAGS_SKB_MODE, "generic"},
	             {q.hw_prog_id, XDP_FLAGS_HW_MODE, "offloaded"}};

	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		struct prog_desc pd;
		if (!slots[i].id || prog_describe(slots[i].id, &pd) || !pd.ours)
			continue;
		if (owner_alive(&pd.meta)) {
			fmt_err(msg, msglen,
			        "%s: XDP offload program %u belongs to a running secho (pid %u)",
			        ifname, slots[i].id, pd.meta.pid);
			return -EBUSY;
		}
		int fd = bpf_prog_get_fd_by_id(slots[i].id);
		if (fd < 0)
			continue;
		/* Detach only if the program there is still this one (XDP_FLAGS_REPLACE). A
		 * program held by a BPF link cannot be detached this way: the link's holder
		 * must let go (the kernel does when it exits). */
		LIBBPF_OPTS(bpf_xdp_attach_opts, ao, .old_prog_fd = fd);
		int r = bpf_xdp_attach((int)ifindex, -1, slots[i].flag | XDP_FLAGS_REPLACE, &ao);
		int e = errno;
		close(fd);
		if (r) {
			fmt_err(msg, msglen,
			        "%s: could not remove XDP offload program %u of dead pid %u: %s",
			        ifname, slots[i].id, pd.meta.pid, strerror(e));
			return -e;
		}
		fmt_err(msg, msglen, "%s: removed %s XDP offload program %u left by pid %u", ifname,
		        slots[i].mode, slots[i].id, pd.meta.pid);
		removed = 1;
	}
	return removed;
}

/* Why attaching failed with -e: the kernel's text when libbpf caught it, else errno's,
 * with what is attached there when that was the reason. */
static void attach_reason(unsigned ifindex, int e, char *buf, size_t n)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if ((e == EBUSY || e == EEXIST) && !bpf_xdp_query((int)ifindex, 0, &q) && q.prog_id) {
		struct prog_desc pd;
		uint32_t id = q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
		if (!prog_describe(id, &pd))
			snprintf(buf, n, "another XDP program is attached (id %u, \"%s\")", id,
			         pd.name);
		else
			snprintf(buf, n, "another XDP program is attached (id %u)", id);
		return;
	}
	const char *k = strstr(libbpf_last, "Kernel error message: ");
	if (k)
		snprintf(buf, n, "%s (%s)", strerror(e), k + 22);
	else if (e == EOPNOTSUPP)
		snprintf(buf, n, "%s (the driver has no native XDP)", strerror(e));
	else
		snprintf(buf, n, "%s", strerror(e));
}

/* ---- open / close ---- */

static int attach(struct secho_flow_offload *o, uint32_t mode, char *why, size_t whylen)
{
	libbpf_last[0] = '\0';
	if (!o->netlink) {
		LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = mode);
		int fd = bpf_link_create(o->prog_fd, (int)o->ifindex, BPF_XDP, &lo);
		if (fd >= 0) {
			o->link_fd = fd;
			return 0;
		}
		int e = errno;
		/* Kernels before 5.9 have no XDP links: attach the way everyone did then. */
		if (e != EINVAL && e != EOPNOTSUPP && e != ENOTSUP) {
			attach_reason(o->ifindex, e, why, whylen);
			return -e;
		}
		/* EINVAL is also a mode the device refuses: let netlink say which. */
		o->netlink = true;
		int r = attach(o, mode, why, whylen);
		if (r)
			o->netlink = false;
		return r;
	}
	if (bpf_xdp_attach((int)o->ifindex, o->prog_fd, mode | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL)) {
		int e = errno;
		attach_reason(o->ifindex, e, why, whylen);
		return -e;
	}
	return 0;
}

static void release(struct secho_flow_offload *o)
{
	if (o->sync_fd >= 0)
		close(o->sync_fd);
	if (o->sync_inner_fd >= 0)
		close(o->sync_inner_fd);
	if (o->skel)
		offload_xdp_bpf__destroy(o->skel);
	free(o->vals);
	free(o->scan_keys);
	free(o->scan_vals);
	free(o);
}

int secho_flow_offload_open(struct secho_flow_offload **out,
                            const struct secho_flow_offload_cfg *cfg, char *err, size_t errlen)
{
	struct secho_flow_offload *o;
	char why[200];
	int r;

	*out = NULL;
	if (!cfg->ifname || strlen(cfg->ifname) >= IF_NAMESIZE) {
		fmt_err(err, errlen, "XDP offload: bad interface name");
		return -EINVAL;
	}
	uint32_t flows = cfg->flows ? cfg->flows : SECHO_OFFLOAD_FLOWS_DEFAULT;
	if (flows > SECHO_OFFLOAD_FLOWS_MAX) {
		fmt_err(err, errlen, "XDP offload: %u flows (at most %u)", flows,
		        SECHO_OFFLOAD_FLOWS_MAX);
		return -EINVAL;
	}
	unsigned ifindex = if_nametoindex(cfg->ifname);
	if (!ifindex) {
		fmt_err(err, errlen, "XDP offload: interface %s: %s", cfg->ifname, strerror(errno));
		return -ENODEV;
	}
	int ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fmt_err(err, errlen, "XDP offload: number of CPUs unknown");
		return ncpus < 0 ? ncpus : -EINVAL;
	}
	/* A program of ours that a crashed run left behind goes first; a live one stops us. */
	char cleaned[200] = "";
	r = secho_flow_offload_cleanup(cfg->ifname, why, sizeof(why));
	if (r < 0 && r != -ENODEV) {
		fmt_err(err, errlen, "XDP offload: %s", why);
		return r;
	}
	if (r == 1) /* said in the description: a start after a crash cleaned up */
		snprintf(cleaned, sizeof(cleaned), "%s", why);
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->sync_fd = o->sync_inner_fd = o->link_fd = -1;
	o->ifindex = ifindex;
	o->ncpus = (unsigned)ncpus;
	o->val_stride = (sizeof(struct secho_offload_val) + 7) & ~(size_t)7;
	o->netlink = cfg->attach_netlink;
	snprintf(o->ifname, sizeof(o->ifname), "%s", cfg->ifname);
	o->vals = calloc(o->ncpus, o->val_stride);
	if (!o->vals) {
		release(o);
		return -ENOMEM;
	}

	libbpf_print_fn_t prev = libbpf_set_print(capture_libbpf);
	libbpf_last[0] = '\0';
	o->skel = offload_xdp_bpf__open();
	if (!o->skel) {
		r = -errno;
		fmt_err(err, errlen, "XDP offload: opening the program: %s", strerror(-r));
		goto fail;
	}
	o->skel->rodata->cfg_uniflow = cfg->uniflow ? 1 : 0;
	o->skel->rodata->cfg_inactive_ns = cfg->inactive_ns;
	o->skel->rodata->cfg_ncpus = o->ncpus;
	bpf_map__set_max_entries(o->skel->maps.secho_flows, flows);
	r = offload_xdp_bpf__load(o->skel);
	if (r) {
		fmt_err(err, errlen, "XDP offload: the kernel refused the program: %s%s%s",
		        strerror(-r), libbpf_last[0] ? ": " : "", libbpf_last);
		goto fail;
	}
	o->flows_fd = bpf_map__fd(o->skel->maps.secho_flows);
	o->cnt_fd = bpf_map__fd(o->skel->maps.secho_ofl_cnt);
	o->xsks_fd = bpf_map__fd(o->skel->maps.secho_xsks);
	o->meta_fd = bpf_map__fd(o->skel->maps.secho_ofl_meta);
	o->prog_fd = bpf_program__fd(o->skel->progs.secho_offload);
	o->capacity = bpf_map__max_entries(o->skel->maps.secho_flows);

	/* Who we are, for a later start's cleanup; bound to the program so that its info
	 * lists the map although the program never reads it. */
	struct secho_offload_meta meta = {.magic = SECHO_OFFLOAD_MAGIC,
	                                  .pid = (uint32_t)getpid(),
	                                  .start_ticks = proc_start_ticks((uint32_t)getpid())};
	uint32_t zero = 0;
	if (bpf_map_update_elem(o->meta_fd, &zero, &meta, 0) ||
	    bpf_prog_bind_map(o->prog_fd, o->meta_fd, NULL)) {
		r = -errno;
		fmt_err(err, errlen, "XDP offload: meta map: %s", strerror(-r));
		goto fail;
	}
	/* An array of maps: updating it returns only after every program run that had
	 * started has finished (the kernel waits for an RCU grace period), which detach
	 * needs to make the counters final. */
	o->sync_inner_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "secho_ofl_in", 4, 4, 1, NULL);
	if (o->sync_inner_fd >= 0) {
		LIBBPF_OPTS(bpf_map_create_opts, mo, .inner_map_fd = (uint32_t)o->sync_inner_fd);
		o->sync_fd =
		        bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "secho_ofl_sync", 4, 4, 1, &mo);
	}
	if (o->sync_fd < 0) {
		r = -errno;
		fmt_err(err, errlen, "XDP offload: map of maps: %s", strerror(-r));
		goto fail;
	}

	char native_why[200] = "";
	if (cfg->mode != SECHO_IO_XDP_SKB) {
		r = attach(o, XDP_FLAGS_DRV_MODE, native_why, sizeof(native_why));
		if (!r) {
			o->native = true;
			o->xdp_flags = XDP_FLAGS_DRV_MODE;
		} else if (cfg->mode == SECHO_IO_XDP_NATIVE) {
			fmt_err(err, errlen, "XDP offload: native XDP on %s refused: %s",
			        cfg->ifname, native_why);
			goto fail;
		}
	}
	if (!o->native) {
		r = attach(o, XDP_FLAGS_SKB_MODE, why, sizeof(why));
		if (r) {
			fmt_err(err, errlen, "XDP offload: generic XDP on %s refused: %s%s%s",
			        cfg->ifname, why, native_why[0] ? "; native: " : "", native_why);
			goto fail;
		}
		o->xdp_flags = XDP_FLAGS_SKB_MODE;
	}
	o->attached = true;
	libbpf_set_print(prev);

	struct bpf_prog_info info;
	uint32_t ilen = sizeof(info);
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(o->prog_fd, &info, &ilen))
		o->prog_id = info.id;
	snprintf(o->desc, sizeof(o->desc),
	         "XDP offload %s on %s (program %u, %s, %u flows, %s)%s%s%s%s%s",
	         o->native ? "native" : "generic", o->ifname, o->prog_id,
	         o->netlink ? "netlink" : "BPF link", o->capacity,
	         cfg->uniflow ? "uniflows" : "biflows", native_why[0] ? " (native: " : "",
	         native_why, native_why[0] ? ")" : "", cleaned[0] ? "; " : "", cleaned);
	*out = o;
	return 0;
fail:
	libbpf_set_print(prev);
	release(o);
	return r < 0 ? r : -EINVAL;
}

const char *secho_flow_offload_describe(const struct secho_flow_offload *o)
{
	return o->desc;
}

bool secho_flow_offload_native(const struct secho_flow_offload *o)
{
	return o->native;
}

uint32_t secho_flow_offload_prog_id(const struct secho_flow_offload *o)
{
	return o->prog_id;
}

uint32_t secho_flow_offload_capacity(const struct secho_flow_offload *o)
{
	return o->capacity;
}

int secho_flow_offload_xsk_map_fd(const struct secho_flow_offload *o)
{
	return o->xsks_fd;
}

int secho_flow_offload_detach(struct secho_flow_offload *o)
{
	int r = 0;

	if (!o->attached)
		return 0;
	if (o->link_fd >= 0) {
		if (bpf_link_detach(o->link_fd))
			r = -errno;
		close(o->link_fd);
		o->link_fd = -1;
	} else {
		LIBBPF_OPTS(bpf_xdp_attach_opts, ao, .old_prog_fd = o->prog_fd);
		if (bpf_xdp_attach((int)o->ifindex, -1, o->xdp_flags | XDP_FLAGS_REPLACE, &ao))
			r = -errno;
	}
	o->attached = false;
	/* Runs that started before the detach may still be adding to the map: wait for
	 * them (an update of a map of maps returns after an RCU grace period). */
	uint32_t zero = 0, inner = (uint32_t)o->sync_inner_fd;
	if (bpf_map_update_elem(o->sync_fd, &zero, &inner, 0) && !r)
		r = -errno;
	return r;
}

void secho_flow_offload_close(struct secho_flow_offload *o)
{
	if (!o)
		return;
	secho_flow_offload_detach(o);
	release(o);
}

int secho_flow_offload_share(struct secho_flow_offload *o, struct secho_flow_offload **out)
{
	struct secho_flow_offload *s = malloc(sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	*s = *o;
	/* Nothing of o's to release or detach: only the descriptors are borrowed. */
	s->skel = NULL;
	s->sync_fd = s->sync_inner_fd = s->link_fd = -1;
	s->attached = false;
	memset(s->ops, 0, sizeof(s->ops));
	s->scan_keys = NULL;
	s->scan_vals = NULL;
	s->vals = calloc(s->ncpus, s->val_stride);
	if (!s->vals) {
		free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

int secho_flow_offload_prog_stats(const struct secho_flow_offload *o, uint64_t *runs,
                                  uint64_t *run_ns)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	*runs = *run_ns = 0;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(o->prog_fd, &info, &len))
		return -errno;
	*runs = info.run_cnt;
	*run_ns = info.run_time_ns;
	return 0;
}

/* ---- the flows ---- */

/* CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns. */
static int64_t mono_to_real(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	return ((int64_t)r.tv_sec - m.tv_sec) * 1000000000 + (r.tv_nsec - m.tv_nsec);
}

int secho_flow_offload_insert_until(struct secho_flow_offload *o, const struct secho_flow_key *key,
                                    uint64_t active_end_ns)
{
	struct timespec m;
	uint64_t end = 0;

	clock_gettime(CLOCK_MONOTONIC, &m);
	uint64_t born = (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec;
	if (active_end_ns) { /* the program's clock; a deadline already past: 1 */
		int64_t e = (int64_t)active_end_ns - mono_to_real();
		end = e > 0 ? (uint64_t)e : 1;
	}
	/* Zero counters and the times on every CPU (vals is kept zeroed between uses). */
	memset(o->vals, 0, o->ncpus * o->val_stride);
	for (unsigned cpu = 0; cpu < o->ncpus; cpu++) {
		struct secho_offload_val *v = (void *)((uint8_t *)o->vals + cpu * o->val_stride);
		v->active_end = end;
		v->born = born;
	}
	int r = bpf_map_update_elem(o->flows_fd, key, o->vals, BPF_NOEXIST);
	int e = errno;
	memset(o->vals, 0, o->ncpus * o->val_stride);
	if (r) {
		o->ops[e == E2BIG ? SECHO_OFFLOAD_OP_INSERT_FULL
		                  : SECHO_OFFLOAD_OP_INSERT_ERRORS]++;
		return -e;
	}
	o->ops[SECHO_OFFLOAD_OP_INSERTS]++;
	return 0;
}

int secho_flow_offload_insert(struct secho_flow_offload *o, const struct secho_flow_key *key)
{
	return secho_flow_offload_insert_until(o, key, 0);
}

/* Sum ncpus per-CPU values at v (stride apart) into c, times moved by off. */
static void sum_cpus(const struct secho_flow_offload *o, const void *v, int64_t off,
                     struct secho_flow_offload_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (unsigned cpu = 0; cpu < o->ncpus; cpu++) {
		const struct secho_offload_val *x =
		        (const void *)((const uint8_t *)v + (size_t)cpu * o->val_stride);
		for (int d = 0; d < 2; d++) {
			const struct secho_offload_dir *s = &x->d[d];
			struct secho_flow_dir *t = &c->d[d];
			if (!s->packets)
				continue;
			t->packets += s->packets;
			t->octets += s->octets;
			if (!t->first_ns || s->first_ns < t->first_ns)
				t->first_ns = s->first_ns;
			if (s->last_ns > t->last_ns)
				t->last_ns = s->last_ns;
			t->tcp_flags |= (uint8_t)s->tcp_flags;
		}
	}
	for (int d = 0; d < 2; d++)
		if (c->d[d].packets) {
			c->d[d].first_ns = (uint64_t)((int64_t)c->d[d].first_ns + off);
			c->d[d].last_ns = (uint64_t)((int64_t)c->d[d].last_ns + off);
		}
}

int secho_flow_offload_remove(struct secho_flow_offload *o, const struct secho_flow_key *key,
                              struct secho_flow_offload_counts *c)
{
	int r = bpf_map_lookup_and_delete_elem(o->flows_fd, key, o->vals);

	if (r && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP)) {
		/* Kernels before 5.14 cannot do both at once for hash maps. */
		r = bpf_map_lookup_elem(o->flows_fd, key, o->vals);
		if (!r)
			r = bpf_map_delete_elem(o->flows_fd, key);
	}
	if (r) {
		int e = errno;
		if (e == ENOENT)
			o->ops[SECHO_OFFLOAD_OP_REMOVE_MISSING]++;
		memset(c, 0, sizeof(*c));
		return -e;
	}
	o->ops[SECHO_OFFLOAD_OP_REMOVES]++;
	sum_cpus(o, o->vals, mono_to_real(), c);
	return 0;
}

int secho_flow_offload_lookup(struct secho_flow_offload *o, const struct secho_flow_key *key,
                              struct secho_flow_offload_counts *c)
{
	if (bpf_map_lookup_elem(o->flows_fd, key, o->vals)) {
		memset(c, 0, sizeof(*c));
		return -errno;
	}
	sum_cpus(o, o->vals, mono_to_real(), c);
	return 0;
}

/* The most entries one step reads: a hash bucket with more than a batch is read whole. */
#define SCAN_MAX (SECHO_OFFLOAD_SCAN_BATCH * 4)

long secho_flow_offload_scan_step(struct secho_flow_offload *o,
                                  struct secho_flow_offload_cursor *cur,
                                  secho_flow_offload_scan_fn fn, void *ctx)
{
	size_t vsz = o->ncpus * o->val_stride;

	if (cur->done)
		return 0;
	if (!o->scan_keys) {
		o->scan_keys = calloc(SCAN_MAX, sizeof(*o->scan_keys));
		o->scan_vals = calloc(SCAN_MAX, vsz);
		if (!o->scan_keys || !o->scan_vals) {
			free(o->scan_keys);
			free(o->scan_vals);
			o->scan_keys = NULL;
			o->scan_vals = NULL;
			return -ENOMEM;
		}
	}
	if (!cur->started)
		o->ops[SECHO_OFFLOAD_OP_SCANS]++;
	int64_t off = mono_to_real();
	for (uint32_t batch = SECHO_OFFLOAD_SCAN_BATCH;;) {
		uint32_t n = batch;
		uint64_t token_out = 0; /* a hash map's batch token: a bucket number */
		LIBBPF_OPTS(bpf_map_batch_opts, bo);
		int r = bpf_map_lookup_batch(o->flows_fd, cur->started ? &cur->token : NULL,
		                             &token_out, o->scan_keys, o->scan_vals, &n, &bo);
		int e = r ? errno : 0;
		o->ops[SECHO_OFFLOAD_OP_SCAN_BATCHES]++;
		if (r && e == ENOSPC && batch < SCAN_MAX) {
			/* One hash bucket holds more entries than a batch: retry it wider. */
			batch *= 4;
			continue;
		}
		if (r && e != ENOENT)
			return -e;
		for (uint32_t i = 0; i < n && fn; i++) {
			struct secho_flow_offload_counts c;
			sum_cpus(o, o->scan_vals + (size_t)i * vsz, off, &c);
			fn(ctx, &o->scan_keys[i], &c);
		}
		cur->started = true;
		cur->token = token_out;
		if (r) /* ENOENT: that was the last batch */
			cur->done = true;
		return n;
	}
}

long secho_flow_offload_scan(struct secho_flow_offload *o, secho_flow_offload_scan_fn fn, void *ctx)
{
	struct secho_flow_offload_cursor cur = {0};
	long total = 0;

	while (!cur.done) {
		long n = secho_flow_offload_scan_step(o, &cur, fn, ctx);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

int secho_flow_offload_read_counters(struct secho_flow_offload *o,
                                     uint64_t c[SECHO_OFFLOAD_CNT_COUNT])
{
	uint64_t *v = calloc(o->ncpus, sizeof(uint64_t));

	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < SECHO_OFFLOAD_CNT_COUNT; i++) {
		c[i] = 0;
		if (bpf_map_lookup_elem(o->cnt_fd, &i, v)) {
			int e = errno;
			free(v);
			return -e;
		}
		for (unsigned cpu = 0; cpu < o->ncpus; cpu++)
			c[i] += v[cpu];
	}
	free(v);
	return 0;
}

void secho_flow_offload_ops(const struct secho_flow_offload *o, uint64_t c[SECHO_OFFLOAD_OP_COUNT])
{
	memcpy(c, o->ops, sizeof(o->ops));
}
