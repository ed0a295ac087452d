/*
 * tests/unit/harness.h - the minimal test harness every test program uses.
 *
 * A test program runs named cases. Each case counts its checks and prints one line that
 * tests/run.sh counts:
 *   PASS <name> (<n> checks)        every check held
 *   FAIL <name> (<f> of <n> checks failed)   with the first failures printed above it
 *   UNAVAILABLE <name>: <reason>    could not run here (not counted as passed)
 * main() returns t_exit(): non-zero when any case failed.
 *
 *   t_begin("gcm wycheproof");
 *   T_CHECK(x == y, "case %d: got %d", id, x);
 *   t_end();
 */
#ifndef SECHO_TEST_HARNESS_H
#define SECHO_TEST_HARNESS_H

#include <stddef.h>
#include <stdint.h>

void t_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Record one check; on failure print the message (only the first 10 per case). */
int t_check(int ok, const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
void t_end(void);
void t_unavailable(const char *reason_fmt, ...) __attribute__((format(printf, 1, 2)));
/* Why this CPU cannot run the implementation named impl ("portable", "aesni", "vaes"), as
 * the CPU itself reports (CPUID and XCR0, read by the harness, not by secho's own
 * detection), or NULL when it can. */
const char *t_cpu_lacks(const char *impl);
/* For the current case, whose implementation secho says is unavailable: UNAVAILABLE with
 * the CPU's reason when the CPU lacks it, else a failed check (secho's detection or build
 * lost an implementation this machine can run). Ends the case either way. */
void t_impl_unavailable(const char *impl);
/* Failures so far in the current case. */
unsigned long t_case_failures(void);
int t_exit(void);

#define T_CHECK(cond, ...) t_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* Hex helpers: parse "00ff.." into out (returns length or -1), print bytes. */
long t_unhex(const char *hex, uint8_t *out, size_t cap);
void t_hexdump(const char *label, const uint8_t *p, size_t n);

/* Deterministic PRNG (xoshiro256**), seeded from SECHO_TEST_SEED or the clock; the seed
 * is printed by t_seed_init() so any failure can be replayed. */
uint64_t t_seed_init(const char *test_name);
uint64_t t_rand64(void);
void t_randbytes(uint8_t *p, size_t n);
size_t t_randrange(size_t lo, size_t hi); /* inclusive */

#endif
