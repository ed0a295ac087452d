/*
 * src/cli/cli.h - the secho command line: subcommand table and shared helpers.
 *
 * Adding a command: write src/cli/NAME.c with `int cmd_NAME(int argc, char *argv[])`
 * and add one SECHO_CMD line to SECHO_COMMANDS below; main.c builds its table from
 * this list (name, function, one-line help). A command receives argv[0] = its own
 * name, parses its options with getopt_long (cli_getopt_reset() first), prints its full
 * usage on --help and returns the process exit status:
 *   0 success, 1 operation failed (e.g. GCM tag mismatch), 2 bad usage or argument.
 */
#ifndef SECHO_CLI_H
#define SECHO_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "secho/aes.h"
#include "secho/io.h"

#define SECHO_VERSION "0.1.0"

/* Exit statuses shared by every command. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* X-macro list of subcommands: SECHO_CMD(name, one-line help). */
#define SECHO_COMMANDS                                                                             \
	SECHO_CMD(crypt, "encrypt or decrypt stdin to stdout with any AES mode")                   \
	SECHO_CMD(speed, "measure our AES implementations against OpenSSL and ipsec-mb")           \
	SECHO_CMD(selftest, "run the built-in known-answer and consistency tests")                 \
	SECHO_CMD(keygen, "write a new key file (key id, AES-256 key, salt)")                      \
	SECHO_CMD(serve, "run the secure endpoint on an interface (or a pcap file)")               \
	SECHO_CMD(host, "send to an endpoint and verify every response (paired, load, counters)")  \
	SECHO_CMD(dashboard, "web page and JSON API: endpoint, verified runs, counters")           \
	SECHO_CMD(lab, "the virtual wire (namespaces, veth) the demo, tests and dashboard use")    \
	SECHO_CMD(flow, "flow meter: flow records from a capture file or an interface; gen")

#define SECHO_CMD(name, help) int cmd_##name(int argc, char *argv[]);
SECHO_COMMANDS
#undef SECHO_CMD

/* `secho flow replay` (src/cli/flow_replay.c), dispatched by cmd_flow. */
int cmd_flow_replay(int argc, char *argv[]);

struct cli_command {
	const char *name;
	int (*fn)(int argc, char *argv[]);
	const char *help;
};

/* ---- util.c ---- */

/* Print "secho CMD: message" and a newline on stderr. Returns CLI_USAGE, so a parser can
 * `return cli_usage_err(...)`. cli_err() is the same but returns CLI_FAIL. */
int cli_usage_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print a library's error text (sys/err.h: one or more lines) on stderr, each line as
 * "secho CMD: line". Nothing for an empty text. */
void cli_print_err(const char *cmd, const char *text);

/* SIGINT and SIGTERM to handler (a command's stop flag), and SIGPIPE ignored when
 * ignore_pipe (a closed pipe is then a write error the command reports). */
void cli_stop_signals(void (*handler)(int), bool ignore_pipe);

/* Reset getopt_long's state before a command parses its own argv (glibc: optind = 0
 * re-initialises fully). Errors are reported by the command (opterr = 0). */
void cli_getopt_reset(void);
/* Report the option getopt_long rejected ('?' unknown, ':' missing argument) as one line
 * naming it; returns CLI_USAGE. */
int cli_bad_option(const char *cmd, int c, char *argv[]);

/*
 * Parse hex (upper or lower case, even length, no separators; an empty string is zero
 * bytes) into a new malloc'd buffer *out of *len bytes. Returns false on bad input with
 * a reason in *why (static text: "odd number of digits", "not a hex digit"); *out is
 * NULL then. The caller frees (and wipes, for keys) the buffer.
 */
bool cli_parse_hex(const char *s, uint8_t **out, size_t *len, const char **why);

/* Strict decimal parsers: the whole string, range checked; digits only for u64 (no white
 * space, no sign), plain decimal notation for double (no white space, inf, nan or hex; a
 * '-' only when min < 0). Every command parses its numbers with these. */
bool cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
bool cli_parse_double(const char *s, double min, double max, double *out);

/* A MAC address, exactly "aa:bb:cc:dd:ee:ff" (hex digits of either case). */
bool cli_parse_mac(const char *s, uint8_t mac[6]);

/* Split a comma-separated list into at most max items (no white space is trimmed). Refuses
 * an empty list, an empty item ("1,,2", a comma at either end), an item of CLI_ITEM_MAX
 * characters or more, and more than max items. Returns the number of items, or -1 with a
 * reason (static text) in *why. */
#define CLI_ITEM_MAX 32
int cli_parse_list(const char *s, char items[][CLI_ITEM_MAX], size_t max, const char **why);

/* A CPU list as taskset -c writes it: items separated by commas, each a CPU number or a
 * range "A-B" (A <= B), e.g. "0,2-3"; numbers 0..SECHO_CPU_MAX (secho/cpu.h). The CPUs in
 * the order written, at most max of them, into cpus. Returns how many, or -1 with a reason
 * (static text) in *why. Whether the CPUs exist is the caller's to check
 * (secho_cpu_usable()). */
int cli_parse_cpus(const char *s, uint16_t *cpus, size_t max, const char **why);

/* --xdp-mode: "native", "skb" or "any" -> the I/O layer's XDP mode. False for anything
 * else (the caller names the option and the bad value). */
bool cli_parse_xdp_mode(const char *s, enum secho_io_xdp_mode *out);

/* "auto", "portable", "aesni", "vaes", "vaes-split" -> id. Unknown or unavailable on this
 * CPU: one line on stderr naming it, returns false. */
bool cli_parse_impl(const char *cmd, const char *s, secho_impl_id *out);

/* CPU model string from /proc/cpuinfo (or CPUID brand string), static storage. */
const char *cli_cpu_model(void);

/* ---- TSC (time stamp counter): secho/tsc.h (secho_tsc_begin/end, secho_tsc_hz) ---- */

#endif
