/*
 * src/flow/offload/offload.h - the XDP offload tier, user-space side: loads the program
 * (src/flow/offload/offload_xdp.bpf.c, embedded in the binary as a libbpf skeleton), attaches it to
 * an interface, and manages its map of offloaded flows for the meter (docs/FLOW.md, "The XDP
 * offload tier").
 *
 * The meter's part (what it calls, in this order):
 *   open      load and attach; a program of ours that a crashed run left attached is
 *             removed first (secho_flow_offload_cleanup); anything else attached is left
 *             alone and the open fails
 *   insert    a flow the meter counted enough packets of: from now on the program counts
 *             its packets (but TCP SYN/FIN/RST, fragments) and drops them
 *   scan      every offloaded flow with its counters so far, read in batches
 *             (BPF_MAP_LOOKUP_BATCH): the last-seen times the meter's inactive timeouts need
 *   remove    when the meter exports the flow: its counters, and the entry is gone
 *   detach    at shutdown before the last removals: nothing is counted any more, so what
 *             the map holds is final (the program's last runs have finished, see below)
 *   close     detach if still attached, release everything
 *
 * Counters come back summed over the CPUs (offload_abi.h says why they are per CPU), in the
 * record's terms (record.h, struct secho_flow_dir): direction [0] is key.src -> key.dst,
 * times are wall-clock ns (CLOCK_REALTIME, as the meter's ring timestamps) converted from
 * the program's CLOCK_MONOTONIC when read.
 *
 * Attachment: by default through a BPF link, which the kernel removes when the process
 * ends however it ends, so a killed meter leaves nothing that drops packets behind. With
 * attach_netlink (and on kernels without XDP links) the program is attached the way
 * `ip link set ... xdp` and libxdp attach it: it stays after a crash, and the next open, or
 * secho_flow_offload_cleanup(), removes it, after checking from the program's meta map that
 * it is ours and that its owner process is gone.
 *
 * Removal while packets flow: the kernel unlinks the entry and copies its values in one
 * step (BPF_MAP_LOOKUP_AND_DELETE_ELEM), but a program run that found the entry just before
 * may add its packet after the copy; that packet is then lost to the record. The meter
 * removes flows when they end (idle, TCP end: no packets) and at shutdown after detach
 * (exact); only a flow taken back while busy (active timeout) can lose a packet that way.
 *
 * One thread uses a handle; nothing here is thread-safe. Another thread gets a handle of its
 * own on the same program and map from secho_flow_offload_share(): the kernel serialises
 * the map operations themselves (per hash bucket), a handle only adds its scratch buffer
 * and its counts. All calls return 0 or -errno.
 */
#ifndef SECHO_FLOW_OFFLOAD_H
#define SECHO_FLOW_OFFLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flow/core/record.h"
#include "flow/offload/offload_abi.h"
#include "secho/io.h"

#define SECHO_OFFLOAD_FLOWS_DEFAULT 65536u
#define SECHO_OFFLOAD_FLOWS_MAX     (1u << 24)
#define SECHO_OFFLOAD_SCAN_BATCH    256u /* entries per BPF_MAP_LOOKUP_BATCH call */

struct secho_flow_offload_cfg {
	const char *ifname;
	enum secho_io_xdp_mode mode; /* ANY: native XDP, else generic (the refusal kept) */
	uint32_t flows;              /* map capacity; 0 = SECHO_OFFLOAD_FLOWS_DEFAULT */
	bool uniflow;                /* keys as seen (the meter's --uniflow); else biflows */
	bool attach_netlink;         /* netlink attachment instead of a BPF link (above) */
	/* The meter's inactive timeout: a flow idle that long in the map has its next packet
	 * passed to the meter (offload_abi.h); 0 = the program does not look. */
	uint64_t inactive_ns;
};

/* What user space did with the map (the program's own counters: secho_flow_offload_read_
 * counters). X(name, "name", "text"). */
#define SECHO_OFFLOAD_OPS(X)                                                                       \
	X(INSERTS, "inserts", "flows put in the map")                                              \
	X(INSERT_FULL, "insert_full", "inserts refused: map full (the flow stays in software)")    \
	X(INSERT_ERRORS, "insert_errors", "inserts refused for another reason")                    \
	X(REMOVES, "removes", "flows taken out with their counters")                               \
	X(REMOVE_MISSING, "remove_missing", "removals of a flow not in the map")                   \
	X(SCANS, "scans", "whole-map reads")                                                       \
	X(SCAN_BATCHES, "scan_batches", "BPF_MAP_LOOKUP_BATCH calls they took")

enum secho_offload_op {
#define SECHO_OFFLOAD_OP_X(name, id, text) SECHO_OFFLOAD_OP_##name,
	SECHO_OFFLOAD_OPS(SECHO_OFFLOAD_OP_X)
#undef SECHO_OFFLOAD_OP_X
	        SECHO_OFFLOAD_OP_COUNT
};

/* An offloaded flow's counters, summed over CPUs; d[0]: key.src -> key.dst. */
struct secho_flow_offload_counts {
	struct secho_flow_dir d[2];
};

struct secho_flow_offload;

/*
 * Load the program with cfg's map size and key mode and attach it to cfg->ifname. Returns
 * 0 with *out set, or -errno with one line in err: the interface is unknown (-ENODEV), the
 * kernel refused the program (-EPERM without CAP_BPF/CAP_NET_ADMIN, a verifier message),
 * the mode was refused (the kernel's reason: native XDP unsupported by the driver...),
 * another XDP program is attached (-EBUSY, naming it), or a live secho owns the interface
 * (-EBUSY, naming its PID).
 */
int secho_flow_offload_open(struct secho_flow_offload **out,
                            const struct secho_flow_offload_cfg *cfg, char *err, size_t errlen);

/* "XDP offload native on veth0 (program 42, BPF link, 65536 flows, biflows)", with the
 * native mode's refusal when it fell back to generic. Valid until close. */
const char *secho_flow_offload_describe(const struct secho_flow_offload *o);

/* true: native (driver) XDP; false: generic. */
bool secho_flow_offload_native(const struct secho_flow_offload *o);
uint32_t secho_flow_offload_prog_id(const struct secho_flow_offload *o);
uint32_t secho_flow_offload_capacity(const struct secho_flow_offload *o);

/* The XSKMAP (key: receive queue, value: an AF_XDP socket) through which the program hands
 * what it does not keep to the meter's AF_XDP sockets (secho_io_cfg.xsk_map_fd). */
int secho_flow_offload_xsk_map_fd(const struct secho_flow_offload *o);

/*
 * Offload flow key (the meter's table key: canonical for biflows, record.h) with zero
 * counters. Returns 0, -EEXIST (already offloaded), -E2BIG (map full: counted in
 * insert_full; the flow stays with the meter), other -errno.
 */
int secho_flow_offload_insert(struct secho_flow_offload *o, const struct secho_flow_key *key);

/* The same, with the record's active timeout: from active_end_ns (wall-clock ns, the
 * meter's packet time; 0 = none) on, the flow's packets go to the meter again. */
int secho_flow_offload_insert_until(struct secho_flow_offload *o, const struct secho_flow_key *key,
                                    uint64_t active_end_ns);

/* Take flow key out of the map; its counters in *c. Returns 0 or -ENOENT. */
int secho_flow_offload_remove(struct secho_flow_offload *o, const struct secho_flow_key *key,
                              struct secho_flow_offload_counts *c);

/* Read flow key's counters without removing it. Returns 0 or -ENOENT. */
int secho_flow_offload_lookup(struct secho_flow_offload *o, const struct secho_flow_key *key,
                              struct secho_flow_offload_counts *c);

/* Called for each offloaded flow a scan reads. */
typedef void (*secho_flow_offload_scan_fn)(void *ctx, const struct secho_flow_key *key,
                                           const struct secho_flow_offload_counts *c);

/* Read the whole map in batches of SECHO_OFFLOAD_SCAN_BATCH; fn is called for every entry.
 * Entries inserted or removed meanwhile may be missed or seen (the kernel walks its buckets
 * in order). fn may be NULL (a count). Returns the number of entries read, or -errno. */
long secho_flow_offload_scan(struct secho_flow_offload *o, secho_flow_offload_scan_fn fn,
                             void *ctx);

/* Where a scan in steps is (zeroed to start one). */
struct secho_flow_offload_cursor {
	uint64_t token; /* the kernel's batch position (a hash bucket) */
	bool started;
	bool done; /* the last step reached the end of the map */
};

/* One step of a scan: the next batch (SECHO_OFFLOAD_SCAN_BATCH entries, more when one hash
 * bucket holds more), fn called for each as by secho_flow_offload_scan. Returns the
 * entries read (cur->done set after the last batch) or -errno. */
long secho_flow_offload_scan_step(struct secho_flow_offload *o,
                                  struct secho_flow_offload_cursor *cur,
                                  secho_flow_offload_scan_fn fn, void *ctx);

/* The program's counters summed over CPUs, indexed by enum secho_offload_counter. */
int secho_flow_offload_read_counters(struct secho_flow_offload *o,
                                     uint64_t c[SECHO_OFFLOAD_CNT_COUNT]);
/* User space's own counts (enum secho_offload_op). */
void secho_flow_offload_ops(const struct secho_flow_offload *o, uint64_t c[SECHO_OFFLOAD_OP_COUNT]);

/* Names and one-line texts: NULL when out of range. */
const char *secho_flow_offload_counter_name(unsigned i);
const char *secho_flow_offload_counter_text(unsigned i);
const char *secho_flow_offload_op_name(unsigned i);
const char *secho_flow_offload_op_text(unsigned i);

/*
 * Detach the program and wait until every run of it that had started has finished: the
 * map's counters are final afterwards (the maps stay readable until close). Idempotent.
 */
int secho_flow_offload_detach(struct secho_flow_offload *o);

/* Detach if attached and release everything. NULL is a no-op. A shared handle
 * (secho_flow_offload_share) releases only itself. */
void secho_flow_offload_close(struct secho_flow_offload *o);

/*
 * A second handle on o's program and map, for another thread: insert, remove, lookup, scan
 * and the counters work on it as on o, with buffers and counts of its own (ops() gives
 * this handle's); it cannot detach (that is o's). Close it before o. Returns 0 or -ENOMEM.
 */
int secho_flow_offload_share(struct secho_flow_offload *o, struct secho_flow_offload **out);

/* The kernel's run-time statistics of the program (kernel.bpf_stats_enabled = 1 while it
 * runs; both 0 when it was off): runs and total ns. */
int secho_flow_offload_prog_stats(const struct secho_flow_offload *o, uint64_t *runs,
                                  uint64_t *run_ns);

/*
 * Remove from interface ifname an offload program a dead secho left attached. Returns 1
 * (removed; msg says which), 0 (nothing of ours there), -EBUSY (ours, but its owner runs:
 * msg names the PID), -ENODEV, other -errno. A program that is not ours is never touched.
 */
int secho_flow_offload_cleanup(const char *ifname, char *msg, size_t msglen);

#endif
