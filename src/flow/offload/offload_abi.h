/*
 * src/flow/offload/offload_abi.h - what the XDP offload program
 * (src/flow/offload/offload_xdp.bpf.c) and its user-space side (src/flow/offload/offload.c) share:
 * the names the program and its maps go by, the flow map's value, and the program's counters.
 * Compiled by both the host compiler and clang's bpf target (freestanding: only <stdint.h>, and the
 * flow key of record.h).
 *
 * The flow map: BPF_MAP_TYPE_PERCPU_HASH, key struct secho_flow_key exactly as the meter's
 * table keeps it (record.h: canonical order in biflow mode, see secho_flow_key_canon; as
 * seen in uniflow mode), value struct secho_offload_val, one copy per CPU. Direction 0 of a
 * value counts the packets that run from key.src to key.dst, direction 1 the others.
 *
 * Why per-CPU and not atomics: each CPU adds to its own copy with plain stores, so a hit
 * costs no locked instruction and no cache line moves between CPUs when one flow arrives on
 * several receive queues (or, on veth, on several senders' CPUs); a reader sums the copies
 * (packets and octets add, first time is the lowest non-zero, last time the highest, flags
 * OR). The price is memory, flows x CPUs x 80 bytes, and a read that copies every CPU's
 * value: both small next to the meter's own table.
 */
#ifndef SECHO_FLOW_OFFLOAD_ABI_H
#define SECHO_FLOW_OFFLOAD_ABI_H

#include <stdint.h>

#include "flow/core/record.h"

/* Object names the program is found by on an interface (15 characters at most: the
 * kernel keeps 16 bytes with the NUL). */
#define SECHO_OFFLOAD_PROG_NAME  "secho_offload"
#define SECHO_OFFLOAD_FLOWS_NAME "secho_flows"
#define SECHO_OFFLOAD_CNT_NAME   "secho_ofl_cnt"
#define SECHO_OFFLOAD_XSKS_NAME  "secho_xsks"
#define SECHO_OFFLOAD_META_NAME  "secho_ofl_meta"

/* One direction of an offloaded flow, on one CPU. Times are CLOCK_MONOTONIC ns (the
 * program's clock, bpf_ktime_get_ns); user space converts them to wall-clock time. */
struct secho_offload_dir {
	uint64_t packets;
	uint64_t octets; /* IP total lengths, as the meter counts them */
	uint64_t first_ns;
	uint64_t last_ns;
	uint32_t tcp_flags; /* OR of the low 8 bits of the TCP flags */
	uint32_t pad;
};

/* The record's timeouts, as the program keeps them (CLOCK_MONOTONIC ns; the same in every
 * CPU's copy, written by user space at the insert): a packet after active_end, or after
 * the flow has been idle for the inactive timeout (cfg_inactive_ns; idle since born when
 * no packet came), goes on to the meter, which ends the record at that packet. */
struct secho_offload_val {
	struct secho_offload_dir d[2]; /* [0] key.src -> key.dst, [1] back */
	uint64_t active_end;           /* 0: none */
	uint64_t born;                 /* when the flow was put in the map */
};

/* The program writes keys as 32-bit words (BPF stack stores must be aligned): the key's
 * addresses start on word boundaries. */
_Static_assert(sizeof(struct secho_flow_key) == 52, "flow key: 13 words, no padding");
_Static_assert(__builtin_offsetof(struct secho_flow_key, src) == 12, "src at word 3");
_Static_assert(__builtin_offsetof(struct secho_flow_key, dst) == 28, "dst at word 7");
_Static_assert(sizeof(struct secho_offload_val) == 96, "value layout");

/* Who loaded the program (the one-entry meta map): a later start removes a program left
 * attached only when this process is gone. start_ticks is the owner's start time (field 22
 * of /proc/PID/stat), so that a reused PID is not taken for the owner. */
#define SECHO_OFFLOAD_MAGIC 0x5345434fu /* "SECO" */
struct secho_offload_meta {
	uint32_t magic;
	uint32_t pid;
	uint64_t start_ticks;
};

/*
 * What the program counts, per CPU (X(NAME, "name", "text")). Every packet the program
 * sees is counted exactly once among HIT and the PASS_* reasons; XSK counts, among the
 * packets not dropped, those redirected to an AF_XDP socket.
 */
#define SECHO_OFFLOAD_COUNTERS(X)                                                                  \
	X(HIT, "hit", "packets counted in an offloaded flow and dropped")                          \
	X(HIT_OCTETS, "hit_octets", "their IP octets")                                             \
	X(MISS, "miss", "packets of flows not offloaded: to the meter")                            \
	X(PASS_TCP_CTL, "pass_tcp_ctl", "TCP SYN, FIN or RST: always to the meter")                \
	X(PASS_ACTIVE, "pass_active", "offloaded flows past their record's active timeout")        \
	X(PASS_IDLE, "pass_idle", "offloaded flows idle for the inactive timeout")                 \
	X(PASS_FRAG, "pass_frag", "IP fragments (the meter ties them to their flow)")              \
	X(PASS_NOT_IP, "pass_not_ip", "not IPv4 or IPv6")                                          \
	X(PASS_TUNNEL, "pass_tunnel", "tunnelled or on a tunnel's protocol or port: to the meter") \
	X(PASS_MALFORMED, "pass_malformed", "headers the meter's dissector refuses")               \
	X(PASS_UNPARSED, "pass_unparsed", "headers beyond the first buffer of the frame")          \
	X(XSK, "xsk", "packets not dropped that went to an AF_XDP socket")

enum secho_offload_counter {
#define SECHO_OFFLOAD_CNT_X(name, id, text) SECHO_OFFLOAD_CNT_##name,
	SECHO_OFFLOAD_COUNTERS(SECHO_OFFLOAD_CNT_X)
#undef SECHO_OFFLOAD_CNT_X
	        SECHO_OFFLOAD_CNT_COUNT
};

#endif
