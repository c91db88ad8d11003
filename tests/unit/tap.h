/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Minimal TAP producer for the host unit tests: "ok N - name" or "not ok N - name"
 * (with a hex dump of what differed) per check, then the plan "1..N" at the end, which
 * TAP allows. The exit status is non-zero when any check failed.
 */
#ifndef VCX_TEST_TAP_H
#define VCX_TEST_TAP_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
 * The counters. A test program made of several files defines TAP_SHARED_STATE before
 * including this in each of them, and TAP_DEFINE_STATE too in exactly one.
 */
#ifndef TAP_SHARED_STATE
static int tap_n;
static int tap_failed;
#elif defined(TAP_DEFINE_STATE)
int tap_n;
int tap_failed;
#else
extern int tap_n;
extern int tap_failed;
#endif

static inline int tap_ok(int cond, const char *name)
{
	tap_n++;
	printf("%sok %d - %s\n", cond ? "" : "not ", tap_n, name);
	if (!cond)
		tap_failed++;
	return cond;
}

static inline void tap_dump(const char *what, const uint8_t *p, size_t len)
{
	size_t i;

	printf("# %s:", what);
	for (i = 0; i < len; i++)
		printf("%s%02x", i % 16 ? " " : "\n#   ", p[i]);
	printf("\n");
}

/* One TAP line for an exact byte comparison; dumps both buffers on mismatch. */
static inline int tap_bytes(const void *got, const void *want, size_t len, const char *name)
{
	int same = memcmp(got, want, len) == 0;

	if (!tap_ok(same, name)) {
		tap_dump("got", got, len);
		tap_dump("want", want, len);
	}
	return same;
}

static inline int tap_u64(uint64_t got, uint64_t want, const char *name)
{
	int same = got == want;

	if (!tap_ok(same, name))
		printf("# got 0x%llx, want 0x%llx\n", (unsigned long long)got,
		       (unsigned long long)want);
	return same;
}

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif /* VCX_TEST_TAP_H */
