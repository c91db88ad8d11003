/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * TAP output and device setup shared by the guest test programs in tests/userspace/
 * (one translation unit each: the definitions are static).
 */
#ifndef VCX_TESTS_TAP_H
#define VCX_TESTS_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static int tests, failures;

static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tests++;
	if (!cond)
		failures++;
	printf("%s %d - ", cond ? "ok" : "not ok", tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void bail(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(2);
}

/* The plan at the end (tests counted as they ran); the exit status of the program. */
static int tap_done(void)
{
	printf("1..%d\n", tests);
	if (failures)
		printf("# %d of %d failed\n", failures, tests);
	return failures ? 1 : 0;
}

/* Open the device called name, or bail out. */
static struct ibv_context *tap_open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx) {
		printf("Bail out! cannot open device %s\n", name);
		exit(2);
	}
	return ctx;
}

/*
 * The first RoCE v2 GID of port 1, waiting up to 10 s for ib_core to add it (it follows
 * the netdev's addresses); -1 if there is none.
 */
static int tap_roce_v2_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	struct ibv_port_attr pattr;
	struct ibv_gid_entry ent;
	int tries, i;

	if (ibv_query_port(ctx, 1, &pattr))
		bail("ibv_query_port");
	for (tries = 0; tries < 100; tries++) {
		for (i = 0; i < pattr.gid_tbl_len; i++) {
			if (ibv_query_gid_ex(ctx, 1, i, &ent, 0) ||
			    ent.gid_type != IBV_GID_TYPE_ROCE_V2)
				continue;
			memcpy(gid, &ent.gid, sizeof(*gid));
			return i;
		}
		usleep(100000);
	}
	return -1;
}

#endif /* VCX_TESTS_TAP_H */
