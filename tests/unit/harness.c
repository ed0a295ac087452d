/* tests/unit/harness.c - see harness.h. */
#include "harness.h"

#include <cpuid.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char cur[256];
static int in_case;
static unsigned long checks, fails;
static unsigned long cases_failed;

void t_begin(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cur, sizeof(cur), fmt, ap);
	va_end(ap);
	in_case = 1;
	checks = fails = 0;
}

int t_check(int ok, const char *file, int line, const char *fmt, ...)
{
	checks++;
	if (ok)
		return 1;
	fails++;
	if (fails <= 10) {
		va_list ap;
		printf("  %s:%d: [%s] ", file, line, cur);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	return 0;
}

/* XCR0 (the OS saves and restores these register states): XGETBV with ECX = 0. */
static uint64_t xcr0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

const char *t_cpu_lacks(const char *impl)
{
	/* CPUID read here, independently of secho's own detection (src/crypto/cpu.c). */
	unsigned a = 0, b = 0, c1 = 0, d = 0, b7 = 0, c7 = 0;

	__get_cpuid(1, &a, &b, &c1, &d);
	if (__get_cpuid_max(0, NULL) >= 7)
		__get_cpuid_count(7, 0, &a, &b7, &c7, &d);
	if (!strcmp(impl, "aesni")) {
		if (!(c1 >> 25 & 1))
			return "AES-NI";
		if (!(c1 >> 1 & 1))
			return "PCLMULQDQ";
		if (!(c1 >> 19 & 1))
			return "SSE4.1";
	} else if (!strcmp(impl, "vaes") || !strcmp(impl, "vaes-split")) {
		if (!(c7 >> 9 & 1))
			return "VAES";
		if (!(c7 >> 10 & 1))
			return "VPCLMULQDQ";
		if (!(b7 >> 16 & 1) || !(b7 >> 30 & 1) || !(b7 >> 31 & 1))
			return "AVX-512 F/BW/VL";
		/* OSXSAVE, then the OS must save SSE, AVX and the three AVX-512 states. */
		if (!(c1 >> 27 & 1) || (xcr0() & 0xe6) != 0xe6)
			return "AVX-512 state saved by the OS (XCR0)";
	}
	return NULL;
}

void t_impl_unavailable(const char *impl)
{
	const char *lacks = t_cpu_lacks(impl);

	if (lacks) {
		t_unavailable("implementation %s: the CPU lacks %s", impl, lacks);
		return;
	}
	t_check(0, __FILE__, __LINE__,
	        "implementation %s unavailable although the CPU has its instructions", impl);
	t_end();
}

unsigned long t_case_failures(void)
{
	return fails;
}

void t_end(void)
{
	if (!in_case)
		return;
	if (fails || !checks) {
		if (!checks)
			printf("FAIL %s (no checks ran)\n", cur);
		else
			printf("FAIL %s (%lu of %lu checks failed)\n", cur, fails, checks);
		cases_failed++;
	} else {
		printf("PASS %s (%lu checks)\n", cur, checks);
	}
	fflush(stdout);
	in_case = 0;
}

void t_unavailable(const char *fmt, ...)
{
	va_list ap;
	printf("UNAVAILABLE %s: ", cur);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	in_case = 0;
}

int t_exit(void)
{
	return cases_failed ? 1 : 0;
}

long t_unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = strlen(hex);
	if (n % 2 || n / 2 > cap)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return (long)(n / 2);
}

void t_hexdump(const char *label, const uint8_t *p, size_t n)
{
	printf("  %s (%zu):", label, n);
	for (size_t i = 0; i < n; i++)
		printf("%s%02x", i % 32 ? "" : "\n    ", p[i]);
	printf("\n");
}

static uint64_t s[4];

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t t_seed_init(const char *name)
{
	const char *e = getenv("SECHO_TEST_SEED");
	uint64_t seed;
	if (e && *e) {
		seed = strtoull(e, NULL, 0);
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
	}
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		s[i] = splitmix(&x);
	printf("# %s: seed %" PRIu64 " (replay with SECHO_TEST_SEED=%" PRIu64 ")\n", name, seed,
	       seed);
	return seed;
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t t_rand64(void)
{
	uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

void t_randbytes(uint8_t *p, size_t n)
{
	while (n) {
		uint64_t r = t_rand64();
		size_t k = n < 8 ? n : 8;
		memcpy(p, &r, k);
		p += k;
		n -= k;
	}
}

size_t t_randrange(size_t lo, size_t hi)
{
	return lo + (size_t)(t_rand64() % (uint64_t)(hi - lo + 1));
}
