/*
 * secho/host.h - `secho host`: the host side that sends traffic to an endpoint (ours or a
 * hardware one) and verifies every response against an independent AES-256-GCM (nettle).
 *
 * Subcommands (src/cli/host.c): paired, counters, load. Each is a library function taking
 * an options struct and writing its report to a stream, so tests can drive them.
 * Return convention of the run functions: 0 every response verified (and losses within
 * --max-loss), 1 a verification failure or too many losses, 2 a setup error (bad option,
 * key file, interface), with the reason printed to stderr.
 */
#ifndef SECHO_HOST_H
#define SECHO_HOST_H

#include "secho/proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SECHO_HOST_MAX_PAYLOAD SECHO_WIRE_MAX_PAYLOAD(SECHO_WIRE_MAX_MTU) /* 8940 */
#define SECHO_HOST_MAX_SECONDS 60

/* A run's key: what the key file holds. */
struct secho_host_key {
	uint16_t key_id;
	uint8_t salt[4];
	uint8_t key[32];
	bool shared; /* "shared yes": responses carry the endpoint's instance in the IV */
};

/* Reads a key file (secho/keyfile.h: `secho-key 1`, `key-id N`, `key HEX64`, `salt HEX8`). Refuses
 * a file that group or others can read. Returns 0, or -errno with a reason in err (never the
 * key). */
int secho_host_key_load(const char *path, struct secho_host_key *k, char *err, size_t errlen);
void secho_host_key_wipe(struct secho_host_key *k);

enum secho_host_path { SECHO_PATH_BOTH = 0, SECHO_PATH_STREAM, SECHO_PATH_OFFLOAD };

struct secho_host_opts {
	const char *key_path;
	const char *iface;  /* NULL: socket mode; set: raw AF_PACKET mode */
	uint8_t dst_mac[6]; /* raw mode: the endpoint's MAC (the CLI parses it: cli_parse_mac) */
	bool dst_mac_set;   /* raw mode needs it */
	const char *src_ip; /* NULL: socket mode any / raw mode the interface's or 192.0.2.1 */
	const char *dst_ip; /* NULL: 192.0.2.2 */
	bool allow_any_dst; /* permit destinations outside 192.0.2.0/24 and 127.0.0.0/8 */
	uint16_t port_stream, port_offload, port_counters;
	unsigned count;      /* paired: packets per path */
	int size;            /* payload bytes, -1 random 0..mtu-60 */
	unsigned mtu;        /* 576..9000 */
	unsigned timeout_ms; /* per packet */
	unsigned deadline_s; /* whole run */
	unsigned long max_loss;
	bool json;
	bool quiet;          /* no progress on stderr */
	const char *seq_log; /* append every sequence number seen, one per line (NULL: none) */
	/* load */
	unsigned seconds;   /* 1..60 */
	unsigned long rate; /* packets per second over all paths, 0 flat out */
	enum secho_host_path path;
	unsigned window; /* outstanding requests at most */
	uint64_t seed;   /* payload generator; 0 = from the clock */
	/* For the caller to show (NULL: not shown): a warning that does not stop the run (one
	 * or more lines, no program name), and paired's progress (every 200 packets, then
	 * (0, 0) when sending is over; not called with quiet or json). */
	void (*warn)(const char *msg);
	void (*progress)(unsigned done, unsigned total);
};

/* Fills the documented defaults (count 500, random size, MTU 1500, ports 4000/4001/4002,
 * timeout 200 ms, deadline 120 s, max loss 0, load 5 s flat out both paths, window 256). */
void secho_host_opts_default(struct secho_host_opts *o);

/* The host tool's runs (paired, counters, load): each prints its report on out and returns
 * its verdict, 0 (PASS) or 1 (FAIL: the report says why; err may add lines, e.g. a
 * --seq-log write failure), or -errno when it could not run (an option value out of range,
 * the key file, the socket), with the reasons in err: one line each, no program name. */
int secho_host_paired(const struct secho_host_opts *o, FILE *out, char *err, size_t errlen);
int secho_host_counters(const struct secho_host_opts *o, FILE *out, char *err, size_t errlen);
int secho_host_load(const struct secho_host_opts *o, FILE *out, char *err, size_t errlen);

#endif
