/*
 * src/endpoint/endpoint.h - the secure endpoint: configuration, the data-path worker,
 * and the run loop (`secho serve`).
 *
 *   RX burst -> parse/validate -> steer by UDP port -+-> streaming engine (batch GCM, in
 *                                                     |   the data-path thread, in place)
 *                                                     +-> offload engine (staging copy,
 *                                                     |   job ring, engine thread,
 *                                                     |   completion ring)
 *                                                     +-> counters report (port 4002)
 *            -> rebuild (headers, checksums) -> TX burst
 *
 * Stages are joined by bounded queues: the RX ring, the burst arrays between the stages
 * (at most SECHO_IO_BURST frames), the offload job/completion rings, the TX ring. A full
 * queue drops the frame under a named reason; nothing is lost silently.
 *
 * With several workers (`--workers N`) each runs that whole path in a thread of its own on
 * a receive queue of its own: AF_XDP one socket per interface queue, AF_PACKET one socket
 * each in a PACKET_FANOUT_HASH group (the kernel's flow hash: one flow stays on one worker,
 * in order). Each has its own offload queue pair, sequence lease, counters and histograms
 * (pipeline.h lists what a worker touches); the counters report and the summary sum them
 * and show each worker's share.
 */
#ifndef SECHO_ENDPOINT_H
#define SECHO_ENDPOINT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "endpoint/counters.h"
#include "secho/engine.h"
#include "secho/gcm.h"
#include "secho/io.h"
#include "secho/wire.h"

#define SECHO_EP_MAX_WORKERS 64 /* at most one offload queue pair each: engine.h */

struct secho_endpoint_cfg {
	struct secho_wire_cfg wire;
	struct secho_io_cfg io;
	const char *key_path;
	const char *state_path; /* NULL: /var/lib/secho/seq-<keyid>.state */
	uint64_t seq_window;    /* numbers reserved per state write; 0 = the default (2^20) */
	uint32_t instance;      /* a shared key's instance id (1..2^32-1); 0 = none given */
	enum secho_offload_backend offload;
	unsigned offload_ring; /* jobs and staging buffers (power of two) */
	unsigned offload_spin_us;
	bool arp;
	uint16_t vlan; /* the one 802.1Q VLAN served (1..4094), answers tagged; 0 = untagged */
	bool quiet;
	double report_rate; /* counters reports per second per source */
	double run_seconds; /* 0 = until a signal (or pcap end) */
	/* Data-path workers, 1..SECHO_EP_MAX_WORKERS (0: 1); AF_XDP: worker i binds queue
	 * io.queue + i; AF_PACKET: a fanout group when more than one; pcap: one only. */
	unsigned workers;
	unsigned ncpus;                      /* 0, or workers: worker i pinned to cpus[i] */
	uint16_t cpus[SECHO_EP_MAX_WORKERS]; /* (secho/cpu.h: usable CPUs) */
	bool offload_pin;                    /* pin the offload engine thread to offload_cpu */
	unsigned offload_cpu;
	/* The banner and the summary go to out (NULL: stdout), unless quiet. */
	FILE *out;
	/* Set-up warnings that do not stop the run (one line each, no prefix), for the caller
	 * to show; NULL: none shown. */
	void (*warn)(const char *msg);
};

/* One data-path worker: one I/O queue, its counters, its sequence lease. */
struct secho_worker;

/* Run the endpoint until *stop becomes non-zero (signal handler), the pcap input ends, or
 * run_seconds pass, or the sequence state can no longer be advanced (a reservation
 * failed: no request could be answered any more); then drain the offload engine, flush TX
 * and the sequence state. Unless quiet, a banner on cfg->out once set up and a summary
 * after the run. Returns 0, or -errno with the reasons in err (one line each, '\n' between them,
 * no prefix: the caller prints them); *refused is true when set-up refused to start (bad
 * key file, unsafe state, missing capability: nothing was served), false for a failure
 * of a run that had started. Phases (serve.c): check, open, start, run, drain, report. */
int secho_endpoint_run(const struct secho_endpoint_cfg *cfg, volatile sig_atomic_t *stop,
                       bool *refused, char *err, size_t errlen);

#endif
