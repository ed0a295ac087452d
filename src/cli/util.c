/*
 * src/cli/util.c - helpers shared by the secho commands: error lines, option parsing,
 * hex, CPU model and TSC timing (whole-stream I/O: secho/fileio.h).
 */
#include "cli/cli.h"

#include <cpuid.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "secho/cpu.h"
#include "sys/clock.h"

/* The body of both error printers: "secho CMD: " + message + newline, on stderr. (A
 * macro rather than a va_list helper keeps the static analysers' va_list tracking
 * simple.) */
#define CLI_VMSG(cmd, fmt)                                                                         \
	do {                                                                                       \
		fprintf(stderr, "secho%s%s: ", (cmd) ? " " : "", (cmd) ? (cmd) : "");              \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		vfprintf(stderr, fmt, ap);                                                         \
		va_end(ap);                                                                        \
		fputc('\n', stderr);                                                               \
	} while (0)

int cli_usage_err(const char *cmd, const char *fmt, ...)
{
	CLI_VMSG(cmd, fmt);
	return CLI_USAGE;
}

int cli_err(const char *cmd, const char *fmt, ...)
{
	CLI_VMSG(cmd, fmt);
	return CLI_FAIL;
}

void cli_getopt_reset(void)
{
	optind = 0; /* glibc: 0 re-initialises, including the permutation state */
	opterr = 0;
}

int cli_bad_option(const char *cmd, int c, char *argv[])
{
	/* optind has moved past the offending word; for a short option optopt names it. */
	const char *word = optind > 0 ? argv[optind - 1] : "?";
	if (c == ':')
		return cli_usage_err(cmd, "option '%s' needs a value (see 'secho %s --help')", word,
		                     cmd);
	if (optopt && !(word[0] == '-' && word[1] == '-'))
		return cli_usage_err(cmd, "unknown option '-%c' (see 'secho %s --help')", optopt,
		                     cmd);
	return cli_usage_err(cmd, "unknown option '%s' (see 'secho %s --help')", word, cmd);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool cli_parse_hex(const char *s, uint8_t **out, size_t *len, const char **why)
{
	*out = NULL;
	*len = 0;
	size_t n = strlen(s);
	if (n % 2) {
		*why = "odd number of hex digits";
		return false;
	}
	uint8_t *b = malloc(n / 2 + 1);
	if (!b) {
		*why = "out of memory";
		return false;
	}
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval((unsigned char)s[2 * i]), lo = hexval((unsigned char)s[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			secho_wipe(b, i);
			free(b);
			*why = "not a hex digit";
			return false;
		}
		b[i] = (uint8_t)(hi << 4 | lo);
	}
	*out = b;
	*len = n / 2;
	return true;
}

bool cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	/* Digits only: strtoull would also take leading white space and a sign. */
	if (!s || !*s || strspn(s, "0123456789") != strlen(s))
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool cli_parse_double(const char *s, double min, double max, double *out)
{
	/* Plain decimal notation only: strtod would also take leading white space, "inf",
	 * "nan" and hexadecimal floats. A leading '-' only where the range allows it. */
	if (!s || !*s || strspn(s, "0123456789.eE+-") != strlen(s) ||
	    !(isdigit((unsigned char)s[0]) || s[0] == '.' || (s[0] == '-' && min < 0)))
		return false;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool cli_parse_mac(const char *s, uint8_t mac[6])
{
	/* Exactly "xx:xx:xx:xx:xx:xx": sscanf's %x would take spaces, signs and "0x". */
	if (!s || strlen(s) != 17)
		return false;
	for (int i = 0; i < 6; i++) {
		int hi = hexval((unsigned char)s[3 * i]), lo = hexval((unsigned char)s[3 * i + 1]);
		if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
			return false;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

int cli_parse_list(const char *s, char items[][CLI_ITEM_MAX], size_t max, const char **why)
{
	size_t n = 0;

	if (!s || !*s) {
		*why = "empty list";
		return -1;
	}
	for (const char *p = s;; p++) {
		size_t len = strcspn(p, ",");
		if (len == 0) {
			*why = "empty item (two commas in a row, or a comma at an end)";
			return -1;
		}
		if (len >= CLI_ITEM_MAX) {
			*why = "item too long";
			return -1;
		}
		if (n == max) {
			*why = "too many items";
			return -1;
		}
		memcpy(items[n], p, len);
		items[n++][len] = '\0';
		p += len;
		if (!*p)
			break;
	}
	return (int)n;
}

int cli_parse_cpus(const char *s, uint16_t *cpus, size_t max, const char **why)
{
	char items[SECHO_CPU_MAX + 1][CLI_ITEM_MAX];
	int ni = cli_parse_list(s, items, sizeof(items) / sizeof(items[0]), why);
	size_t n = 0;
	if (ni < 0)
		return -1;
	for (int i = 0; i < ni; i++) {
		char *dash = strchr(items[i], '-');
		uint64_t a, b;
		if (dash)
			*dash = '\0';
		if (!cli_parse_u64(items[i], 0, SECHO_CPU_MAX, &a) ||
		    (dash && !cli_parse_u64(dash + 1, 0, SECHO_CPU_MAX, &b))) {
			*why = "not a CPU number (0..1023) or range A-B";
			return -1;
		}
		if (!dash)
			b = a;
		if (b < a) {
			*why = "a range A-B with A above B";
			return -1;
		}
		for (uint64_t c = a; c <= b; c++) {
			if (n == max) {
				*why = "too many CPUs";
				return -1;
			}
			cpus[n++] = (uint16_t)c;
		}
	}
	return (int)n;
}

bool cli_parse_impl(const char *cmd, const char *s, secho_impl_id *out)
{
	secho_impl_id id;
	if (secho_impl_from_name(s, &id) != SECHO_OK) {
		cli_usage_err(
		        cmd,
		        "unknown implementation '%s' (auto, portable, aesni, vaes, vaes-split)", s);
		return false;
	}
	if (!secho_impl_available(id)) {
		cli_usage_err(cmd, "implementation '%s' is not available on this CPU or build", s);
		return false;
	}
	*out = id;
	return true;
}

void cli_stop_signals(void (*handler)(int), bool ignore_pipe)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (ignore_pipe)
		signal(SIGPIPE, SIG_IGN);
}

void cli_print_err(const char *cmd, const char *text)
{
	for (const char *line = text, *nl; *line; line = nl + 1) {
		nl = strchrnul(line, '\n');
		fprintf(stderr, "secho %s: %.*s\n", cmd, (int)(nl - line), line);
		if (!*nl)
			break;
	}
}

bool cli_parse_xdp_mode(const char *s, enum secho_io_xdp_mode *out)
{
	static const struct {
		const char *name;
		enum secho_io_xdp_mode mode;
	} modes[] = {{"native", SECHO_IO_XDP_NATIVE},
	             {"skb", SECHO_IO_XDP_SKB},
	             {"any", SECHO_IO_XDP_ANY}};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(s, modes[i].name)) {
			*out = modes[i].mode;
			return true;
		}
	return false;
}

const char *cli_cpu_model(void)
{
	static char model[128];
	if (model[0])
		return model;
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		const char *v = strchr(line, ':');
		if (!v)
			continue;
		v++;
		while (*v == ' ' || *v == '\t')
			v++;
		snprintf(model, sizeof(model), "%s", v);
		model[strcspn(model, "\n")] = 0;
		break;
	}
	if (f)
		fclose(f);
	if (!model[0]) {
		/* CPUID leaves 0x80000002..4 hold the 48-byte brand string. */
		unsigned r[12] = {0};
		if (__get_cpuid_max(0x80000000u, NULL) >= 0x80000004u) {
			for (unsigned i = 0; i < 3; i++)
				__get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1],
				            &r[4 * i + 2], &r[4 * i + 3]);
			memcpy(model, r, 48);
			model[48] = 0;
		} else {
			snprintf(model, sizeof(model), "unknown x86-64");
		}
	}
	return model;
}
