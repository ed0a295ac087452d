/*
 * tests/unit/featcap.h - a capture file's flows fed to a feature set, for the feature tests
 * whose shell halves capture real clients and servers (tests/sh/test_feat_*.sh).
 *
 * Every Ethernet/IP TCP or UDP packet of the file (pcap or pcapng, through secho's own
 * reader and dissector) becomes a struct secho_feat_pkt; packets are grouped into flows by
 * their 5-tuple (either direction), the forward direction being the flow's first packet's,
 * and handed to fn in file order with the flow's index (0.., at most FEATCAP_MAX_FLOWS).
 */
#ifndef SECHO_TEST_FEATCAP_H
#define SECHO_TEST_FEATCAP_H

#include "flow/feature/feature.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#define FEATCAP_MAX_FLOWS 256

typedef void (*featcap_fn)(void *arg, unsigned flow, const struct secho_feat_pkt *p);

/* Returns the number of flows, or -errno with a reason in err (the file cannot be read, or
 * it has more than FEATCAP_MAX_FLOWS flows). */
int featcap_run(const char *path, featcap_fn fn, void *arg, char *err, size_t errlen);

/* The shell tests' mode of a test program: runs path through fn (arg NULL) as featcap_run
 * does, then prints one JSON line a flow on stdout,
 * {"flow":F,"proto":P,"sport":S,"dport":D,"packets":N<members>}, the ports and protocol of
 * the flow's first packet, <members> what members(f, buf, cap) writes (",\"name\":value...",
 * its length or < 0 on failure). Returns the program's exit status: 0, or 1 (a reason on
 * stderr when the file could not be read). */
int featcap_print(const char *path, featcap_fn fn,
                  int (*members)(unsigned flow, char *buf, size_t cap));

/* The capture mode of a feature set whose state counts done and refused (dns, http):
 * defines pc_state[] (a state a flow), pc_fn (feeds it) and pc_members (",\"done\":D,
 * \"refused\":R" and the set's JSON members) for featcap_print(path, pc_fn, pc_members). */
#define FEATCAP_SET(set)                                                                           \
	static struct secho_feat_##set pc_state[FEATCAP_MAX_FLOWS];                                \
	static void pc_fn(void *arg, unsigned f, const struct secho_feat_pkt *p)                   \
	{                                                                                          \
		(void)arg;                                                                         \
		secho_feat_##set##_packet(&pc_state[f], p);                                        \
	}                                                                                          \
	static int pc_members(unsigned f, char *buf, size_t cap)                                   \
	{                                                                                          \
		int n = snprintf(buf, cap, ",\"done\":%u,\"refused\":%u", pc_state[f].done,        \
		                 pc_state[f].refused);                                             \
		if (n < 0 || (size_t)n >= cap)                                                     \
			return -ENOSPC;                                                            \
		int jn = secho_feat_##set##_json(&pc_state[f], buf + n, cap - (size_t)n);          \
		return jn < 0 ? jn : n + jn;                                                       \
	}

#endif
