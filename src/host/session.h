/*
 * src/host/session.h - one run of `secho host`: key, verifier, transport, the window of
 * outstanding requests and the per-path tallies. Shared by paired, counters and load.
 *
 * Request ids: every echo payload is generated from a 64-bit id (a random run base plus
 * the send index): when the payload has 8 bytes or more, its first 8 bytes are the id in
 * network order and the rest a keyed pseudo-random stream of the id, so a response is
 * matched to its request by decrypting its first 8 bytes (secho_verify_peek) and then
 * verified in full. Payloads of 1..7 bytes cannot carry the id: such a response is
 * decrypted and matched to the oldest outstanding request with the same port, size and
 * payload (none: late, see session.c); empty ones match the oldest of their port.
 * A decoded id that belongs to a request already given up as lost is counted "late";
 * one that belongs to nothing falls back to the (port, size, order) rule, so a corrupted
 * ciphertext is still reported by its check name rather than as a loss.
 * A second answer to one request is a failure (check "duplicate"), not "late": it is
 * recognised by its id when the request's window slot still remembers being answered, and
 * otherwise by a sequence number already seen (any response that matches no outstanding
 * request and repeats a verified response's sequence number).
 */
#ifndef SECHO_HOST_SESSION_H
#define SECHO_HOST_SESSION_H

#include "host/transport.h"
#include "host/verify.h"
#include "secho/host.h"

#define SECHO_NPATH   3 /* 0 streaming, 1 offload, 2 counters */
#define SECHO_RXBATCH 32

struct secho_hreq {
	bool used;     /* outstanding */
	bool answered; /* answered (the slot keeps its id until the next request takes it) */
	uint16_t dport;
	uint8_t path;
	uint32_t len;
	uint64_t id;
	uint64_t t_ns;
};

struct secho_pathstats {
	uint64_t sent, answered, verified, payload_ok, ct_ok, tag_ok, lost, failed, late;
	uint64_t fail_by[SECHO_VF_COUNT];
	double *rtt_us; /* when keep_rtt */
	size_t nrtt, caprtt;
};

struct secho_sess {
	const struct secho_host_opts *o;
	struct secho_host_key key;
	struct secho_verifier *v;
	struct secho_xport x;
	uint16_t ports[SECHO_NPATH];
	uint64_t seed, id_base, next_id;
	struct secho_hreq *win;
	unsigned wcap, outstanding;
	bool keep_rtt;
	struct secho_pathstats ps[SECHO_NPATH];
	uint64_t unmatched; /* responses that matched no request */
	uint8_t *rxmem;
	struct secho_rxmsg rx[SECHO_RXBATCH];
	uint8_t payload[SECHO_HOST_MAX_PAYLOAD];
	/* the last counters report */
	uint8_t report[SECHO_HOST_MAX_PAYLOAD + 1];
	size_t report_len;
	bool have_report;
	struct secho_vresult report_res;
	char first_fail[160]; /* description of the first failed response */
};

/* Opens everything for a run with at most `window` requests in flight (rounded up to a
 * power of two). Returns 0, or -errno with the reason in err (sys/err.h). */
int secho_sess_open(struct secho_sess *s, const struct secho_host_opts *o, unsigned window,
                    bool keep_rtt, char *err, size_t errlen);
void secho_sess_close(struct secho_sess *s);

/* Sends one request on path (0, 1: echo with len payload bytes; 2: counters). Returns 0,
 * -EAGAIN when the window is full or the socket pushes back, or another -errno. */
int secho_sess_send(struct secho_sess *s, unsigned path, size_t len);
/* Sends up to n echo requests (paths[i], lens[i]) in one batch; returns how many went. */
int secho_sess_send_batch(struct secho_sess *s, const uint8_t *paths, const size_t *lens,
                          unsigned n);

/* Reads and verifies responses for up to timeout_us; returns how many were processed or
 * -errno. */
int secho_sess_poll(struct secho_sess *s, int64_t timeout_us);

/* Gives up on requests older than timeout_ns (counted lost). Returns how many. */
unsigned secho_sess_expire(struct secho_sess *s, uint64_t timeout_ns);

/* Sends a counters request and waits (bounded by the per-packet timeout, retried 3 times)
 * for the verified report. Returns 0 with s->report holding the JSON text, -EBADMSG when the report
 * came back but did not verify, -ETIMEDOUT when none came back. */
int secho_sess_fetch_counters(struct secho_sess *s);

/* Flushes and closes --seq-log. Returns 0, or -errno with the write error added to err
 * (the run must then fail: the log it promised is incomplete). No-op without --seq-log. */
int secho_sess_close_log(struct secho_sess *s, char *err, size_t errlen);

/* The payload of request id (len bytes) into out. */
void secho_sess_payload(const struct secho_sess *s, uint64_t id, size_t len, uint8_t *out);

/* A payload size for the next request: opts.size, or uniform 0..mtu-60. */
size_t secho_sess_size(struct secho_sess *s);

extern const char *const secho_path_names[SECHO_NPATH];

/* ---- counters.c: the endpoint's report ---- */
#include <jansson.h>

/* Parses the last verified report; NULL (the reason added to err) when it is not JSON. */
json_t *secho_report_parse(const struct secho_sess *s, char *err, size_t errlen);
/* Number at a dotted path ("engines.streaming.latency_ns.mean"); NAN when missing or not a
 * number. */
double secho_report_num(const json_t *root, const char *path);
/* Human-readable table of a report; missing fields print as "-"; text from the report
 * through secho_fputs_safe. */
void secho_report_table(FILE *out, const json_t *rep);
/* Prints s with every byte outside printable ASCII (and the backslash) escaped as \xNN
 * (\\): text the endpoint sent cannot move the cursor or rewrite a terminal line. */
void secho_fputs_safe(FILE *out, const char *s);
/* Prints v with the given format, or "-" padded to width when v is NAN. */
void secho_print_num(FILE *out, int width, int prec, double v);
#endif
