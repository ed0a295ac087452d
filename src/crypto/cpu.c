/*
 * src/crypto/cpu.c - x86-64 CPU feature detection for run-time dispatch.
 *
 * CPUID says what the processor implements; XGETBV says which register states the OS
 * saves (XMM/YMM for AVX, opmask/ZMM for AVX-512). A feature counts only when both agree.
 *
 * Beside the features, one property of the core that the dispatch uses and CPUID does
 * not state: SECHO_CPU_SPLIT512, set on AMD family 19h (Zen 3 and Zen 4; of those only
 * Zen 4 has AVX-512), whose cores execute a 512-bit instruction as two 256-bit halves.
 * Family 1Ah (Zen 5) has full-width 512-bit units; every other vendor and family is
 * left unmarked, so it keeps the default order.
 */
#include "crypto/inner.h"

#include <cpuid.h>
#include <stdatomic.h>

static unsigned detect(void)
{
	unsigned a, b, c, d, f = 0;

	if (!__get_cpuid(0, &a, &b, &c, &d))
		return 0;
	/* "AuthenticAMD" in EBX, EDX, ECX */
	const bool amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	/* The display family: base family, plus the extended family when the base is 0xf. */
	unsigned family = (a >> 8) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (amd && family == 0x19)
		f |= SECHO_CPU_SPLIT512;
	bool osxsave = (c >> 27) & 1;
	if ((c >> 25) & 1)
		f |= SECHO_CPU_AESNI;
	if ((c >> 1) & 1)
		f |= SECHO_CPU_PCLMUL;
	if ((c >> 19) & 1)
		f |= SECHO_CPU_SSE41;

	uint64_t xcr0 = 0;
	if (osxsave) {
		unsigned lo, hi;
		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		xcr0 = ((uint64_t)hi << 32) | lo;
	}
	bool ymm = (xcr0 & 0x6) == 0x6;   /* XMM and YMM state */
	bool zmm = (xcr0 & 0xe6) == 0xe6; /* plus opmask, ZMM_Hi256, Hi16_ZMM */

	if (__get_cpuid_max(0, NULL) < 7)
		return f;
	__cpuid_count(7, 0, a, b, c, d);
	if (ymm && ((b >> 5) & 1))
		f |= SECHO_CPU_AVX2;
	if (zmm) {
		if ((b >> 16) & 1)
			f |= SECHO_CPU_AVX512F;
		if ((b >> 30) & 1)
			f |= SECHO_CPU_AVX512BW;
		if ((b >> 31) & 1)
			f |= SECHO_CPU_AVX512VL;
	}
	if (ymm && ((c >> 9) & 1))
		f |= SECHO_CPU_VAES;
	if (ymm && ((c >> 10) & 1))
		f |= SECHO_CPU_VPCLMUL;
	return f;
}

unsigned secho_cpu_features(void)
{
	/* Racing first calls compute the same value; the store is atomic. Bit 31 marks
	 * "detected" so that a CPU with no features is not re-probed forever. */
	static _Atomic unsigned cached;
	unsigned f = atomic_load_explicit(&cached, memory_order_relaxed);
	if (!f) {
		f = detect() | 0x80000000u;
		atomic_store_explicit(&cached, f, memory_order_relaxed);
	}
	return f & 0x7fffffffu;
}
