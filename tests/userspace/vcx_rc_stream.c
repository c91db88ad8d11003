// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vcx_rc_stream: a long RC stream between two hosts, every message checked
 * (docs/networking.md "Wire faults", tests/guest/roce-loss.sh).
 *
 * One RC QP on each side, connected over RoCE v2 (the local GID index given, the peer's
 * GID, QP number, PSN and buffer exchanged over a TCP connection, the control channel).
 * Two phases, the client driving both:
 *   send:  N SEND_WITH_IMM messages (default 10000), at most W outstanding (default 16),
 *          of sizes 1 B .. 8 KiB (a quarter of them whole multiples of 1 KiB, i.e. one to
 *          eight full packets at path MTU 1024), into the server's SRQ of 64 receives of
 *          8 KiB, each reposted as it is consumed. The immediate is the sequence number;
 *          a message of 8 bytes or more starts with a header (seq, len, little-endian)
 *          and every byte after it derives from (seq, offset). The server checks the
 *          status, opcode, immediate, length and every byte of each message, fails on a
 *          sequence number seen twice, and at the end wants each of the N exactly once.
 *   write: N RDMA WRITEs of message i (same sizes and contents) into remote slot
 *          i mod 64 of the server's region, each followed by an RDMA READ of that slot
 *          back into a separate local buffer (poisoned before), compared byte for byte,
 *          and the guard byte after it still the poison. The server then checks its whole
 *          region: each byte of each slot is the one the last WRITE covering it put there,
 *          bytes no WRITE covered still zero.
 * Every completion's status is checked (a failure names it, ibv_wc_status_str); every
 * wait is bounded: no completion for -W seconds, or a control message not arriving in
 * time, fails naming what was outstanding. The QP: retry_cnt 7, rnr_retry 7 (for ever),
 * the local ACK timeout -t (4.096 us << t; default 14, 67 ms), path MTU -m. The client's
 * first PSN is just below 2^24, so the stream wraps the PSN space.
 * Each side prints one line per phase:
 *   "phase send: messages N, bytes B, seconds S" (and "phase write: ...").
 * Exit status 0 when everything matched, 1 on a failure ("FAIL: ..." on stdout).
 *
 * Usage: vcx_rc_stream -d DEV -g GIDX [-p PORT] [-n N] [-w W] [-t T] [-m MTU] [-W S] server
 *        vcx_rc_stream -d DEV -g GIDX [-p PORT] [-n N] [-w W] [-t T] [-m MTU] [-W S] client HOST
 * (-W: the longest wait for one completion, default 120 s.)
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define MAX_MSG         8192u           /* largest message, one SRQ receive, one slot */
#define SRQ_DEPTH       64u
#define NSLOTS          64u             /* remote slots of the write phase */
#define POISON          0xa5
#define CLIENT_PSN      0xffff00u       /* wraps the 24-bit PSN within the stream */
#define SERVER_PSN      0x000100u

static struct {
	bool server;
	const char *dev, *host;
	int gid_index;
	int port;
	uint32_t n, window;
	int timeout, mtu;
	int wait_s;                     /* longest wait for one completion */
	int phase_s;                    /* longest wait for the peer's end of a phase */
} o = {
	.dev = "vcx_0", .gid_index = -1, .port = 18800, .n = 10000, .window = 16,
	.timeout = 14, .mtu = 1024, .wait_s = 120, .phase_s = 3600,
};

static const char *side(void)
{
	return o.server ? "server" : "client";
}

static void __attribute__((format(printf, 1, 2), noreturn)) die(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL: %s: ", side());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Message contents
 */

static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

/* Size of message seq: tiny, sub-MTU, whole packets (1..8 KiB), anything up to 8 KiB. */
static uint32_t msg_len(uint32_t seq)
{
	uint32_t h = mix(seq * 2 + 1);

	switch (h & 3) {
	case 0:
		return 1 + (h >> 8) % 63;
	case 1:
		return 64 + (h >> 8) % 961;
	case 2:
		return 1024 * (1 + (h >> 8) % 8);
	default:
		return 1025 + (h >> 8) % (MAX_MSG - 1024);
	}
}

/* Byte j of message seq of length len: the header (seq, len) in bytes 0..7 if it fits. */
static uint8_t msg_byte(uint32_t seq, uint32_t len, uint32_t j)
{
	if (len >= 8 && j < 8) {
		uint32_t v = j < 4 ? seq : len;

		return (uint8_t)(v >> (8 * (j & 3)));
	}
	return (uint8_t)(mix(seq * 0x9e3779b1u + (j >> 2)) >> (8 * (j & 3)));
}

static void msg_fill(uint8_t *p, uint32_t seq, uint32_t len)
{
	for (uint32_t j = 0; j < len; j++)
		p[j] = msg_byte(seq, len, j);
}

/* Offset of the first byte of p[from..to) that is not message seq's, or -1. */
static long msg_check(const uint8_t *p, uint32_t seq, uint32_t len, uint32_t from,
		      uint32_t to)
{
	for (uint32_t j = from; j < to; j++)
		if (p[j] != msg_byte(seq, len, j))
			return j;
	return -1;
}

/*
 * The control channel (TCP over eth0), every read bounded
 */

struct wire_info {                      /* network byte order */
	uint32_t qpn, psn, rkey, mtu;
	uint64_t addr;
	uint8_t gid[16];
};

enum { CTL_READY = 1, CTL_SEND_DONE, CTL_WRITE_START, CTL_WRITE_DONE, CTL_RESULT };

struct ctl {                            /* network byte order */
	uint32_t kind, a, b, c;
};

static void tcp_write(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t r = write(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("control channel write: %s", strerror(errno));
		p += r;
		len -= r;
	}
}

static void tcp_read(int fd, void *buf, size_t len, int timeout_s, const char *what)
{
	uint8_t *p = buf;
	double end = now() + timeout_s;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double left = end - now();
		ssize_t r;

		if (left <= 0)
			die("no %s from the peer in %d s", what, timeout_s);
		if (poll(&pfd, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (!(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		r = read(fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("control channel closed while waiting for %s (%s)", what,
			    r < 0 ? strerror(errno) : "EOF");
		p += r;
		len -= r;
	}
}

static void ctl_send(int fd, uint32_t kind, uint32_t a, uint32_t b, uint32_t c)
{
	struct ctl m = { htonl(kind), htonl(a), htonl(b), htonl(c) };

	tcp_write(fd, &m, sizeof(m));
}

static struct ctl ctl_recv(int fd, uint32_t kind, int timeout_s, const char *what)
{
	struct ctl m;

	tcp_read(fd, &m, sizeof(m), timeout_s, what);
	m.kind = ntohl(m.kind);
	m.a = ntohl(m.a);
	m.b = ntohl(m.b);
	m.c = ntohl(m.c);
	if (m.kind != kind)
		die("control message %u while waiting for %s", m.kind, what);
	return m;
}

static int tcp_server(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct pollfd pfd;
	int one = 1, fd, c;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1))
		die("listen on TCP port %d: %s", port, strerror(errno));
	printf("# listening on TCP port %d\n", port);
	fflush(stdout);
	pfd = (struct pollfd) { .fd = fd, .events = POLLIN };
	if (poll(&pfd, 1, o.phase_s * 1000) <= 0)
		die("no client connected to TCP port %d in %d s", port, o.phase_s);
	c = accept(fd, NULL, NULL);
	if (c < 0)
		die("accept: %s", strerror(errno));
	close(fd);
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return c;
}

static int tcp_client(const char *host, int port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	char svc[16];
	int one = 1, fd = -1;

	snprintf(svc, sizeof(svc), "%d", port);
	if (getaddrinfo(host, svc, &hints, &ai))
		die("cannot resolve %s", host);
	/* the server may still be setting up: 60 tries, 0.5 s apart */
	for (int i = 0; i < 60; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			die("socket: %s", strerror(errno));
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		close(fd);
		fd = -1;
		usleep(500000);
	}
	freeaddrinfo(ai);
	if (fd < 0)
		die("cannot connect to %s port %d in 30 s", host, port);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/*
 * Verbs
 */

struct rdma {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;            /* server */
	struct ibv_qp *qp;
	uint8_t *buf;                   /* server: SRQ receives | region; client: sources | reads */
	size_t buf_len;
	struct ibv_mr *mr;
	union ibv_gid gid;
};

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		die("cannot open RDMA device %s", name);
	return ctx;
}

static enum ibv_mtu mtu_enum(int mtu)
{
	switch (mtu) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	}
	die("path MTU %d is not 256, 512, 1024, 2048 or 4096", mtu);
}

static void rdma_open(struct rdma *r)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC };
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};

	r->ctx = open_device(o.dev);
	if (ibv_query_gid(r->ctx, 1, o.gid_index, &r->gid))
		die("ibv_query_gid %s port 1 index %d: %s", o.dev, o.gid_index, strerror(errno));
	r->pd = ibv_alloc_pd(r->ctx);
	if (!r->pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	r->buf_len = (size_t)(o.server ? SRQ_DEPTH + NSLOTS : 2 * NSLOTS) * MAX_MSG;
	if (posix_memalign((void **)&r->buf, 4096, r->buf_len))
		die("posix_memalign");
	memset(r->buf, 0, r->buf_len);
	r->mr = ibv_reg_mr(r->pd, r->buf, r->buf_len, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!r->mr)
		die("ibv_reg_mr: %s", strerror(errno));
	r->cq = ibv_create_cq(r->ctx, o.server ? 2 * SRQ_DEPTH : 4 * o.window, NULL, NULL, 0);
	if (!r->cq)
		die("ibv_create_cq: %s", strerror(errno));
	if (o.server) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = SRQ_DEPTH, .max_sge = 1 } };

		r->srq = ibv_create_srq(r->pd, &sa);
		if (!r->srq)
			die("ibv_create_srq (%u receives): %s", SRQ_DEPTH, strerror(errno));
		qa.srq = r->srq;
	}
	qa.send_cq = r->cq;
	qa.recv_cq = r->cq;
	qa.cap.max_send_wr = o.server ? 1 : 2 * o.window;
	qa.cap.max_recv_wr = o.server ? 0 : 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	r->qp = ibv_create_qp(r->pd, &qa);
	if (!r->qp)
		die("ibv_create_qp: %s", strerror(errno));
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("QP to INIT: %s", strerror(errno));
}

static void rdma_connect(struct rdma *r, const struct wire_info *peer, uint32_t my_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu_enum(o.mtu),
		.dest_qp_num = ntohl(peer->qpn),
		.rq_psn = ntohl(peer->psn),
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,            /* 0.64 ms: an empty SRQ is refilled soon */
		.ah_attr = {
			.is_global = 1,
			.grh = { .sgid_index = o.gid_index, .hop_limit = 64 },
			.port_num = 1,
		},
	};

	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("QP to RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = my_psn;
	a.timeout = o.timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("QP to RTS: %s", strerror(errno));
}

/* Exchange the wire info, connect, and meet once both QPs are in RTS. */
static void rdma_exchange(struct rdma *r, int fd, uint64_t addr, uint32_t my_psn,
			  struct wire_info *peer_out)
{
	struct wire_info me = {
		.qpn = htonl(r->qp->qp_num), .psn = htonl(my_psn), .rkey = htonl(r->mr->rkey),
		.mtu = htonl(o.mtu), .addr = htobe64(addr),
	}, peer;

	memcpy(me.gid, r->gid.raw, 16);
	tcp_write(fd, &me, sizeof(me));
	tcp_read(fd, &peer, sizeof(peer), 60, "connection data");
	if (ntohl(peer.mtu) != (uint32_t)o.mtu)
		die("the peer uses path MTU %u, this side %d", ntohl(peer.mtu), o.mtu);
	rdma_connect(r, &peer, my_psn);
	ctl_send(fd, CTL_READY, 0, 0, 0);
	ctl_recv(fd, CTL_READY, 60, "the peer's QP in RTS");
	printf("# QP 0x%x connected to QP 0x%x, path MTU %d, ACK timeout %d, window %u\n",
	       r->qp->qp_num, ntohl(peer.qpn), o.mtu, o.timeout, o.window);
	fflush(stdout);
	*peer_out = peer;
}

static const char *wc_status(const struct ibv_wc *wc)
{
	return ibv_wc_status_str(wc->status);
}

/*
 * Up to max completions; 0 when none came for o.wait_s seconds. While idle, a closed
 * control channel (the peer failed and exited) ends the wait at once.
 */
static int poll_wait(struct ibv_cq *cq, struct ibv_wc *wc, int max, int fd)
{
	double end = now() + o.wait_s;
	unsigned idle = 0;

	for (;;) {
		int k = ibv_poll_cq(cq, max, wc);
		char c;

		if (k < 0)
			die("ibv_poll_cq: %d", k);
		if (k)
			return k;
		if (++idle % 1024 == 0) {
			if (now() > end)
				return 0;
			if (recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
				die("the peer closed the control channel (it failed: see its output)");
		}
		usleep(20);
	}
}

/* The peer's verdict on a phase (it prints its own reasons). */
static void wait_result(int fd, const char *phase)
{
	struct ctl m = ctl_recv(fd, CTL_RESULT, o.phase_s, "the server's check of the phase");

	if (!m.a)
		die("the server found errors in phase %s (see its output)", phase);
}

static void summary(const char *phase, uint32_t msgs, uint64_t bytes, double t0)
{
	printf("phase %s: messages %u, bytes %" PRIu64 ", seconds %.1f\n", phase, msgs, bytes,
	       now() - t0);
	fflush(stdout);
}

/*
 * Server
 */

static uint8_t *srq_buf(struct rdma *r, uint64_t i)
{
	return r->buf + i * MAX_MSG;
}

static void post_srq(struct rdma *r, uint64_t i)
{
	struct ibv_sge sge = { (uintptr_t)srq_buf(r, i), MAX_MSG, r->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	/* poisoned, so that a byte placed past the message shows */
	memset(srq_buf(r, i), POISON, MAX_MSG);
	if (ibv_post_srq_recv(r->srq, &wr, &bad))
		die("ibv_post_srq_recv: %s", strerror(errno));
}

/* One receive completion of the send phase, checked whole, its receive posted again. */
static void check_recv(struct rdma *r, const struct ibv_wc *wc, uint8_t *seen, uint64_t *bytes)
{
	uint32_t seq, len;
	long bad;
	uint8_t *p;

	if (wc->status != IBV_WC_SUCCESS)
		die("receive completion with status %s (%d), vendor error 0x%x", wc_status(wc),
		    wc->status, wc->vendor_err);
	if (wc->opcode != IBV_WC_RECV || !(wc->wc_flags & IBV_WC_WITH_IMM))
		die("receive completion opcode %d flags 0x%x, expected a RECV with immediate",
		    wc->opcode, wc->wc_flags);
	if (wc->wr_id >= SRQ_DEPTH || wc->qp_num != r->qp->qp_num)
		die("receive completion for wr_id %" PRIu64 " on QP 0x%x", wc->wr_id, wc->qp_num);
	seq = be32toh(wc->imm_data);
	if (seq >= o.n)
		die("a message with sequence number %u (immediate), beyond the %u sent", seq, o.n);
	if (seen[seq])
		die("message %u arrived twice", seq);
	seen[seq] = 1;
	len = msg_len(seq);
	if (wc->byte_len != len)
		die("message %u: %u bytes received, %u sent", seq, wc->byte_len, len);
	p = srq_buf(r, wc->wr_id);
	bad = msg_check(p, seq, len, 0, len);
	if (bad >= 0)
		die("message %u (%u bytes): byte %ld is 0x%02x, expected 0x%02x", seq, len, bad,
		    p[bad], msg_byte(seq, len, bad));
	if (len < MAX_MSG && p[len] != POISON)
		die("message %u (%u bytes): byte %u after it was written (0x%02x)", seq, len, len,
		    p[len]);
	*bytes += len;
	post_srq(r, wc->wr_id);
}

static void server_send_phase(struct rdma *r, int fd, double t0)
{
	uint8_t *seen = calloc(o.n, 1);
	struct ibv_wc wc[16];
	uint64_t bytes = 0;
	uint32_t got = 0, first_missing;
	struct ctl m;

	if (!seen)
		die("calloc");
	while (got < o.n) {
		int k = poll_wait(r->cq, wc, 16, fd);

		if (!k) {
			for (first_missing = 0; seen[first_missing]; first_missing++)
				;
			die("send phase: %u of %u messages received, none for %d s (first missing: %u)",
			    got, o.n, o.wait_s, first_missing);
		}
		for (int i = 0; i < k; i++)
			check_recv(r, &wc[i], seen, &bytes);
		got += k;
	}
	summary("send", got, bytes, t0);
	m = ctl_recv(fd, CTL_SEND_DONE, o.phase_s, "the client's end of the send phase");
	if (m.a != o.n)
		die("the client completed %u SENDs, %u expected", m.a, o.n);
	/* a late duplicate would still come: look for one for half a second */
	for (double end = now() + 0.5; now() < end; usleep(1000)) {
		int k = ibv_poll_cq(r->cq, 16, wc);

		for (int i = 0; i < k; i++)
			check_recv(r, &wc[i], seen, &bytes);
		if (k < 0)
			die("ibv_poll_cq: %d", k);
	}
	printf("# send phase: each of the %u messages arrived exactly once, every byte as sent\n",
	       o.n);
	ctl_send(fd, CTL_RESULT, 1, 0, 0);
	free(seen);
}

/* The region after the write phase: each byte the last WRITE covering it put there. */
static void server_write_check(struct rdma *r)
{
	uint8_t *region = r->buf + (size_t)SRQ_DEPTH * MAX_MSG;

	for (uint32_t slot = 0; slot < NSLOTS; slot++) {
		uint8_t *p = region + (size_t)slot * MAX_MSG;
		uint32_t covered = 0;
		long bad;

		if (slot >= o.n)
			break;
		for (int64_t i = slot + (int64_t)(o.n - 1 - slot) / NSLOTS * NSLOTS; i >= 0 &&
		     covered < MAX_MSG; i -= NSLOTS) {
			uint32_t len = msg_len(i);

			if (len <= covered)
				continue;
			bad = msg_check(p, i, len, covered, len);
			if (bad >= 0)
				die("write phase: slot %u byte %ld is 0x%02x, expected 0x%02x (message %"
				    PRId64 ", %u bytes)", slot, bad, p[bad], msg_byte(i, len, bad),
				    i, len);
			covered = len;
		}
		for (uint32_t j = covered; j < MAX_MSG; j++)
			if (p[j])
				die("write phase: slot %u byte %u is 0x%02x, no WRITE covered it",
				    slot, j, p[j]);
	}
}

static int run_server(void)
{
	struct wire_info peer;
	struct rdma r = { 0 };
	struct ibv_wc wc;
	double t0;
	int fd;

	rdma_open(&r);
	for (uint32_t i = 0; i < SRQ_DEPTH; i++)
		post_srq(&r, i);
	fd = tcp_server(o.port);
	rdma_exchange(&r, fd, (uintptr_t)r.buf + (size_t)SRQ_DEPTH * MAX_MSG, SERVER_PSN,
		      &peer);
	t0 = now();
	server_send_phase(&r, fd, t0);

	ctl_recv(fd, CTL_WRITE_START, 60, "the client's start of the write phase");
	t0 = now();
	{
		struct ctl m = ctl_recv(fd, CTL_WRITE_DONE, o.phase_s,
					"the client's end of the write phase");

		if (m.a != o.n)
			die("the client completed %u WRITE+READ pairs, %u expected", m.a, o.n);
		if (ibv_poll_cq(r.cq, 1, &wc))
			die("a completion on the server in the write phase (status %s)",
			    wc_status(&wc));
		server_write_check(&r);
		summary("write", m.a, ((uint64_t)m.b << 32) | m.c, t0);
	}
	printf("# write phase: the region holds what the last WRITE of each byte put there\n");
	ctl_send(fd, CTL_RESULT, 1, 0, 0);
	close(fd);
	return 0;
}

/*
 * Client
 */

static uint8_t *src_buf(struct rdma *r, uint64_t i)
{
	return r->buf + (i % NSLOTS) * MAX_MSG;
}

static uint8_t *read_buf(struct rdma *r, uint64_t i)
{
	return r->buf + (NSLOTS + i % NSLOTS) * MAX_MSG;
}

static void client_send_phase(struct rdma *r, int fd)
{
	struct ibv_wc wc[16];
	uint32_t next = 0, done = 0;
	uint64_t bytes = 0;
	double t0 = now();

	while (done < o.n) {
		while (next < o.n && next - done < o.window) {
			uint32_t len = msg_len(next);
			struct ibv_sge sge = { (uintptr_t)src_buf(r, next), len, r->mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = next, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
				.imm_data = htobe32(next),
			}, *bad;

			msg_fill(src_buf(r, next), next, len);
			if (ibv_post_send(r->qp, &wr, &bad))
				die("ibv_post_send SEND %u: %s", next, strerror(errno));
			next++;
		}
		int k = poll_wait(r->cq, wc, 16, fd);

		if (!k)
			die("send phase: no completion for %d s, messages %u..%u outstanding (%u of %u done)",
			    o.wait_s, done, next - 1, done, o.n);
		for (int i = 0; i < k; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				die("SEND of message %" PRIu64 " completed with %s (%d), vendor error 0x%x",
				    wc[i].wr_id, wc_status(&wc[i]), wc[i].status, wc[i].vendor_err);
			if (wc[i].opcode != IBV_WC_SEND || wc[i].wr_id != done)
				die("send completion opcode %d for message %" PRIu64 ", expected SEND %u",
				    wc[i].opcode, wc[i].wr_id, done);
			bytes += msg_len(done);
			done++;
		}
	}
	summary("send", done, bytes, t0);
	ctl_send(fd, CTL_SEND_DONE, done, 0, 0);
	wait_result(fd, "send");
}

static void client_write_phase(struct rdma *r, int fd, const struct wire_info *srv)
{
	uint64_t raddr = be64toh(srv->addr), bytes = 0, cexp = 0;
	uint32_t rkey = ntohl(srv->rkey), next = 0, done = 0;
	struct ibv_wc wc[16];
	double t0 = now();

	ctl_send(fd, CTL_WRITE_START, 0, 0, 0);
	while (done < o.n) {
		while (next < o.n && next - done < o.window) {
			uint32_t len = msg_len(next);
			uint64_t ra = raddr + (uint64_t)(next % NSLOTS) * MAX_MSG;
			struct ibv_sge ws = { (uintptr_t)src_buf(r, next), len, r->mr->lkey };
			struct ibv_sge rs = { (uintptr_t)read_buf(r, next), len, r->mr->lkey };
			struct ibv_send_wr rd = {
				.wr_id = (uint64_t)next << 1 | 1, .sg_list = &rs, .num_sge = 1,
				.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { ra, rkey },
			};
			struct ibv_send_wr wr = {
				.wr_id = (uint64_t)next << 1, .sg_list = &ws, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { ra, rkey }, .next = &rd,
			}, *bad;

			msg_fill(src_buf(r, next), next, len);
			memset(read_buf(r, next), POISON, MAX_MSG);
			if (ibv_post_send(r->qp, &wr, &bad))
				die("ibv_post_send WRITE+READ %u: %s", next, strerror(errno));
			next++;
		}
		int k = poll_wait(r->cq, wc, 16, fd);

		if (!k)
			die("write phase: no completion for %d s, WRITE+READ %u..%u outstanding (%u of %u done)",
			    o.wait_s, done, next - 1, done, o.n);
		for (int i = 0; i < k; i++) {
			uint64_t id = wc[i].wr_id;
			uint32_t m = id >> 1, len = msg_len(m);
			bool is_read = id & 1;
			uint8_t *p = read_buf(r, m);
			long bad;

			if (wc[i].status != IBV_WC_SUCCESS)
				die("RDMA %s of message %u completed with %s (%d), vendor error 0x%x",
				    is_read ? "READ" : "WRITE", m, wc_status(&wc[i]), wc[i].status,
				    wc[i].vendor_err);
			if (id != cexp || wc[i].opcode != (is_read ? IBV_WC_RDMA_READ :
							   IBV_WC_RDMA_WRITE))
				die("completion opcode %d wr_id %" PRIu64 ", expected wr_id %" PRIu64,
				    wc[i].opcode, id, cexp);
			cexp++;
			if (!is_read)
				continue;
			bad = msg_check(p, m, len, 0, len);
			if (bad >= 0)
				die("READ back of message %u (%u bytes): byte %ld is 0x%02x, expected 0x%02x",
				    m, len, bad, p[bad], msg_byte(m, len, bad));
			if (len < MAX_MSG && p[len] != POISON)
				die("READ back of message %u (%u bytes): byte %u after it was written",
				    m, len, len);
			bytes += len;
			done++;
		}
	}
	summary("write", done, bytes, t0);
	ctl_send(fd, CTL_WRITE_DONE, done, bytes >> 32, (uint32_t)bytes);
	wait_result(fd, "write");
}

static int run_client(void)
{
	struct wire_info srv;
	struct rdma r = { 0 };
	int fd;

	rdma_open(&r);
	fd = tcp_client(o.host, o.port);
	rdma_exchange(&r, fd, 0, CLIENT_PSN, &srv);
	client_send_phase(&r, fd);
	client_write_phase(&r, fd, &srv);
	printf("# every SEND arrived once and intact; every READ returned what was written\n");
	close(fd);
	return 0;
}

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr, "usage: vcx_rc_stream -d DEV -g GID_INDEX [-p PORT] [-n N] [-w WINDOW]"
		" [-t ACK_TIMEOUT] [-m MTU] [-W WAIT_S] server|client HOST\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c;

	/* options anywhere (GNU getopt permutes), then "server" or "client HOST" */
	while ((c = getopt(argc, argv, "d:g:p:n:w:t:m:W:")) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'g': o.gid_index = atoi(optarg); break;
		case 'p': o.port = atoi(optarg); break;
		case 'n': o.n = strtoul(optarg, NULL, 0); break;
		case 'w': o.window = strtoul(optarg, NULL, 0); break;
		case 't': o.timeout = atoi(optarg); break;
		case 'm': o.mtu = atoi(optarg); break;
		case 'W': o.wait_s = atoi(optarg); break;
		default: usage();
		}
	}
	if (optind + 1 == argc && !strcmp(argv[optind], "server"))
		o.server = true;
	else if (optind + 2 == argc && !strcmp(argv[optind], "client"))
		o.host = argv[optind + 1];
	else
		usage();
	if (o.gid_index < 0 || !o.n || !o.window || o.window > NSLOTS || o.timeout < 0 ||
	    o.timeout > 31 || o.wait_s <= 0)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	return o.server ? run_server() : run_client();
}
