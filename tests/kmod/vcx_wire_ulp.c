// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcx_wire_ulp: an in-kernel ULP between two machines over rdma_cm, with an SRQ, FRWR and
 * every byte checked. Load it with role=server in one VM and role=client in the other
 * (tests/guest/roce-link.sh, step kmod); it uses only generic kernel verbs and rdma_cm, so
 * either end can be vcx_0 or any other RDMA device (rxe0).
 *
 * The server (role=server addr=ITS_ADDRESS):
 *  S1. An rdma_cm ID bound to addr:port (rdma_bind_addr: the device is the one that owns
 *      the address; with dev= it must be that one), one PD, one CQ per online CPU
 *      (ib_alloc_cq, IB_POLL_WORKQUEUE), one SRQ of NRECV buffers of 64 KiB shared by all
 *      connections, a buffer for RDMA of nqp slots of SLOT_SIZE bytes in single pages,
 *      filled with 0xa5; rdma_listen. Module init returns here (0 or the errno); the rest
 *      runs in a work item and ends in the result parameter.
 *  S2. Each connect request (ib_cm's REQ on QP1) carries the client's connection index;
 *      the server creates an RC QP on the SRQ (rdma_create_qp), its CQ chosen by index,
 *      and accepts. A request with a bad header or an index already taken is rejected.
 *  S3. Once nqp connections are ESTABLISHED: the listener is destroyed; the buffer is
 *      registered through FRWR (ib_alloc_mr, ib_map_mr_sg over its scattered pages,
 *      IB_WR_REG_MR with remote read and write); each connection is told its slot
 *      (address, rkey, length) in a SEND.
 *  S4. Every SEND_WITH_IMM landing in the SRQ is checked: its immediate carries the
 *      sender's index (must be the connection it came on) and a sequence number (must be
 *      the next one of that connection: a loss, duplicate or reordering fails), its length
 *      must be the size of that sequence number, and every byte the pattern of (sender,
 *      sequence). The buffer is refilled with 0xa5 before it is posted again.
 *  S5. Each client ends with a DONE message (its counts), which must come after exactly
 *      msgs SENDs. Then the whole RDMA buffer is checked: in each slot every region the
 *      client wrote holds its pattern and every byte between them is still 0xa5.
 *      IB_WR_LOCAL_INV retires the buffer's key, and each connection gets a VERDICT
 *      (ok or not, the server's counts).
 *  S6. The client disconnects: on each DISCONNECTED event the server answers with
 *      rdma_disconnect, drains the QP (ib_drain_qp: its SQ, and the SRQ's last-WQE
 *      event, which must have come; no drain may take over 10 s), destroys QP and ID;
 *      then SRQ, CQs, MR, buffers, PD.
 *
 * The client (role=client addr=SERVER_ADDRESS), all in module init:
 *  C1. nqp rdma_cm IDs: rdma_resolve_addr (ARP over the port's netdev), then
 *      rdma_resolve_route; all on one device (dev= if given); one PD, one CQ per online
 *      CPU; per connection an RC QP with its own small RQ; rdma_connect with the index.
 *  C2. Each connection waits for the server's slot message, then sends msgs
 *      SEND_WITH_IMM of sizes 1, 4096, 65536, 1024 and 5000 bytes in turn (several
 *      packets at path MTU 1024 or 4096), WINDOW outstanding per connection, all
 *      connections at once.
 *  C3. Into its slot, for each entry of rdma_ops (1 B to 64 KiB): an RDMA WRITE of a
 *      pattern, then an RDMA READ of the same range into a buffer filled with 0x5a,
 *      compared byte by byte, with the 64 bytes after it still 0x5a. Half the entries
 *      use a local buffer of single pages reached only through an FRWR key (REG_MR before
 *      the WRITE, key byte changed each time; IB_WR_LOCAL_INV after the READ), the
 *      others a contiguous buffer through the PD's local DMA key.
 *  C4. DONE on each connection, then the server's VERDICT, which must be ok.
 *  C5. rdma_disconnect on each connection; each must see DISCONNECTED with status 0 (the
 *      server's DREP); ib_drain_qp, QP and ID destroyed; MRs, CQs, buffers, PD.
 *
 * Every completion's status and opcode is checked; every wait is bounded: wait_s seconds
 * without any completion or connection event, 10 * wait_s in all. The result is logged
 * ("vcx_wire_ulp: PASS ..." or "FAIL ...") and kept in the read-only parameter result;
 * the client's module init returns 0 or the errno of the failed step, the server's
 * result reads "running" until its work is done.
 */
#include <linux/inet.h>
#include <linux/in.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#define ULP "vcx_wire_ulp"
#define MAX_NQP 12
#define MAX_MSG 65536
#define WINDOW 6			/* SENDs outstanding per connection */
#define NRECV 64			/* server: SRQ buffers of MAX_MSG */
#define NCTL_RX 4			/* client: receives posted per connection */
#define SQ_DEPTH 16
#define CQ_SIZE 512
#define SLOT_SIZE (36 * 4096)		/* server: bytes per connection */
#define GAP 7				/* untouched bytes between regions of a slot */
#define LBUF_DST (MAX_MSG + 4096)	/* client: READ sink offset in its local buffers */
#define LBUF_SIZE (34 * 4096)
#define GUARD 64
#define DRAIN_LIMIT_MS 10000
#define SRV_FILL 0xa5
#define CLI_FILL 0x5a
#define WIRE_MAGIC 0x76637857		/* "vcxW" */
#define WIRE_VERSION 1

static char *role = "";
module_param(role, charp, 0444);
MODULE_PARM_DESC(role, "server or client");
static char *addr = "";
module_param(addr, charp, 0444);
MODULE_PARM_DESC(addr, "IPv4 address: the server's own (server) or the server's (client)");
static int port = 18515;
module_param(port, int, 0444);
MODULE_PARM_DESC(port, "rdma_cm port (RDMA_PS_TCP)");
static int nqp = 8;
module_param(nqp, int, 0444);
MODULE_PARM_DESC(nqp, "RC connections (1 to 12); both ends must agree");
static int msgs = 50;
module_param(msgs, int, 0444);
MODULE_PARM_DESC(msgs, "SENDs per connection; both ends must agree");
static char *dev_name_param = "";
module_param_named(dev, dev_name_param, charp, 0444);
MODULE_PARM_DESC(dev, "the ib_device rdma_cm must choose (empty: any)");
static int wait_s = 60;
module_param(wait_s, int, 0444);
MODULE_PARM_DESC(wait_s, "seconds without progress before a step fails (10x in all)");
static char result[200] = "not run";
module_param_string(result, result, sizeof(result), 0444);
MODULE_PARM_DESC(result, "running, or PASS / FAIL with the reason");

/* A WRITE then READ back into the server's slot; every other one through FRWR. */
static const struct { u32 len; bool frwr; } rdma_ops[] = {
	{ 1, false }, { 4096, true }, { 65536, false }, { 5000, true }, { 65536, true },
	{ 1024, false },
};
#define NOPS ARRAY_SIZE(rdma_ops)
static const u32 send_sizes[] = { 1, 4096, 65536, 1024, 5000 };

/* Connect request private data (client -> server). */
struct wire_hello {
	__be32 magic, version, idx, nqp, msgs;
};

enum { CTL_SLOT = 1, CTL_DONE, CTL_VERDICT };
/* Control messages: SEND without immediate. */
struct wire_ctl {
	__be32 magic, type, idx, status;
	__be64 addr;
	__be32 rkey, len, count1, count2;
};
#define CTL_SIZE 64

/* Connection flags */
enum { F_ADDR, F_ROUTE, F_EST, F_DISC, F_ERR, F_SLOT, F_DONE, F_VERDICT, F_DISC_SENT,
       F_DISC_OK };	/* F_DISC_OK: the server expects the client's disconnect */

struct wire;
struct wire_conn;

struct wire_buf {		/* contiguous, one DMA address */
	u8 *va;
	u64 dma;
	size_t len;
	enum dma_data_direction dir;
};

struct wire_pages {		/* single pages, one FRWR key */
	struct page **pages;
	int n;
	u8 *va;			/* vmap of the pages */
	struct scatterlist *sg;
	int nents;		/* mapped */
	struct ib_mr *mr;
};

struct wire_cqe {
	struct ib_cqe cqe;
	struct wire_conn *c;
	struct wire *u;
	enum ib_wc_opcode want;
	struct wire_buf b;	/* receives: the buffer */
};

struct wire_conn {
	struct wire *u;
	int idx;
	struct rdma_cm_id *id;
	struct ib_qp *qp;
	unsigned long flags;
	int disc_status;
	atomic_t sq_done;
	int sq_posted;
	atomic_t last_wqe;
	unsigned int drain_ms;
	struct wire_cqe tx[SQ_DEPTH];
	int ntx;		/* next tx slot (wraps) */
	struct wire_buf ctl_tx;
	/* client */
	struct wire_cqe rx[NCTL_RX];
	struct wire_buf sbuf[WINDOW];
	struct wire_buf lbuf;
	struct wire_pages fr;
	u64 raddr;
	u32 rkey, rlen;
	u32 verdict_status, verdict_sends, verdict_bytes;
	/* server */
	u32 next_seq;
	u32 done_sends, done_ops;
};

struct wire {
	bool server;
	struct sockaddr_in sin;
	struct rdma_cm_id *listen;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq **cqs;
	int ncq;
	struct ib_srq *srq;
	struct wire_cqe *rbuf;		/* server: NRECV */
	struct wire_pages slots;	/* server: nqp * SLOT_SIZE */
	struct wire_conn conns[MAX_NQP];
	atomic_t progress;
	atomic_t sends_ok, repost_fail;
	u64 slot_bytes;
	bool abort;
	struct work_struct work;
	bool work_queued;
	wait_queue_head_t wq;
	char why[160];
};

static struct wire *the_wire;

static __printf(2, 3) void wire_fail(struct wire *u, const char *fmt, ...)
{
	va_list ap;

	if (u->why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(u->why, sizeof(u->why), fmt, ap);
	va_end(ap);
	pr_err(ULP ": %s\n", u->why);
	wake_up(&u->wq);
}

static void wire_kick(struct wire *u)
{
	atomic_inc(&u->progress);
	wake_up(&u->wq);
}

/* The pattern: a hash of (tag, byte index / 4), 4 bytes per word. */
static inline u32 wire_word(u32 tag, u32 w)
{
	u32 x = (tag * 0x9e3779b1u) ^ (w * 0x85ebca77u) ^ 0x5bd1e995u;

	x ^= x >> 15;
	x *= 0xc2b2ae3du;
	x ^= x >> 13;
	return x;
}

static inline u8 wire_pat(u32 tag, u32 i)
{
	return wire_word(tag, i >> 2) >> ((i & 3) * 8);
}

static void wire_fill(u8 *p, u32 tag, u32 len)
{
	u32 i, j, w;

	for (i = 0; i < len; i += 4) {
		w = wire_word(tag, i >> 2);
		for (j = 0; j < 4 && i + j < len; j++)
			p[i + j] = w >> (j * 8);
	}
}

/* The index of the first byte that differs from the pattern, or -1. */
static long wire_check(const u8 *p, u32 tag, u32 len)
{
	u32 i, j, w;

	for (i = 0; i < len; i += 4) {
		w = wire_word(tag, i >> 2);
		for (j = 0; j < 4 && i + j < len; j++)
			if (p[i + j] != (u8)(w >> (j * 8)))
				return i + j;
	}
	return -1;
}

static u32 wire_tag(u32 kind, u32 idx, u32 n)
{
	return kind << 28 | idx << 20 | n;
}

static u32 wire_send_size(u32 seq)
{
	return send_sizes[seq % ARRAY_SIZE(send_sizes)];
}

/* Offset of rdma_ops[k]'s region in a slot. */
static u32 wire_op_off(int k)
{
	u32 off = 0;
	int i;

	for (i = 0; i < k; i++)
		off += rdma_ops[i].len + GAP;
	return off;
}

/* Buffers */

static int wire_buf_alloc(struct wire *u, struct wire_buf *b, size_t len,
			  enum dma_data_direction dir)
{
	b->va = kmalloc(len, GFP_KERNEL);
	if (!b->va)
		return -ENOMEM;
	b->len = len;
	b->dir = dir;
	b->dma = ib_dma_map_single(u->dev, b->va, len, dir);
	if (ib_dma_mapping_error(u->dev, b->dma)) {
		kfree(b->va);
		b->va = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void wire_buf_free(struct wire *u, struct wire_buf *b)
{
	if (!b->va)
		return;
	ib_dma_unmap_single(u->dev, b->dma, b->len, b->dir);
	kfree(b->va);
	b->va = NULL;
}

static void wire_buf_cpu(struct wire *u, struct wire_buf *b)
{
	ib_dma_sync_single_for_cpu(u->dev, b->dma, b->len, b->dir);
}

static void wire_buf_dev(struct wire *u, struct wire_buf *b)
{
	ib_dma_sync_single_for_device(u->dev, b->dma, b->len, b->dir);
}

/* n single pages, a CPU mapping of them, mapped for DMA, and an FRWR MR over them. */
static int wire_pages_alloc(struct wire *u, struct wire_pages *p, int n, u8 fill)
{
	int i, err;

	if (n > u->dev->attrs.max_fast_reg_page_list_len) {
		wire_fail(u, "%d pages in one FRWR key, %s allows %u", n, dev_name(&u->dev->dev),
			  u->dev->attrs.max_fast_reg_page_list_len);
		return -EINVAL;
	}
	p->pages = kcalloc(n, sizeof(*p->pages), GFP_KERNEL);
	p->sg = kcalloc(n, sizeof(*p->sg), GFP_KERNEL);
	if (!p->pages || !p->sg)
		return -ENOMEM;
	sg_init_table(p->sg, n);
	for (i = 0; i < n; i++) {
		p->pages[i] = alloc_page(GFP_KERNEL);
		if (!p->pages[i])
			return -ENOMEM;
		p->n = i + 1;
		sg_set_page(&p->sg[i], p->pages[i], PAGE_SIZE, 0);
	}
	p->va = vmap(p->pages, n, VM_MAP, PAGE_KERNEL);
	if (!p->va)
		return -ENOMEM;
	memset(p->va, fill, (size_t)n * PAGE_SIZE);
	p->nents = ib_dma_map_sg(u->dev, p->sg, n, DMA_BIDIRECTIONAL);
	if (!p->nents)
		return -ENOMEM;
	p->mr = ib_alloc_mr(u->pd, IB_MR_TYPE_MEM_REG, n);
	if (IS_ERR(p->mr)) {
		err = PTR_ERR(p->mr);
		p->mr = NULL;
		wire_fail(u, "ib_alloc_mr(%d pages): %d", n, err);
		return err;
	}
	err = ib_map_mr_sg(p->mr, p->sg, p->nents, NULL, PAGE_SIZE);
	if (err != p->nents) {
		wire_fail(u, "ib_map_mr_sg mapped %d of %d", err, p->nents);
		return err < 0 ? err : -EINVAL;
	}
	return 0;
}

static void wire_pages_free(struct wire *u, struct wire_pages *p)
{
	int i;

	if (p->mr)
		ib_dereg_mr(p->mr);
	if (p->nents)
		ib_dma_unmap_sg(u->dev, p->sg, p->n, DMA_BIDIRECTIONAL);
	if (p->va)
		vunmap(p->va);
	for (i = 0; i < p->n; i++)
		__free_page(p->pages[i]);
	kfree(p->pages);
	kfree(p->sg);
	memset(p, 0, sizeof(*p));
}

static void wire_pages_sync(struct wire *u, struct wire_pages *p, bool for_cpu)
{
	if (ib_uses_virt_dma(u->dev))
		return;
	if (for_cpu)
		dma_sync_sg_for_cpu(u->dev->dma_device, p->sg, p->n, DMA_BIDIRECTIONAL);
	else
		dma_sync_sg_for_device(u->dev->dma_device, p->sg, p->n, DMA_BIDIRECTIONAL);
}

/* Waits: done, or a failure, or wait_s seconds without any progress; 10 * wait_s in all. */

static bool wire_wait(struct wire *u, bool (*done)(struct wire *u, long arg), long arg,
		      const char *what)
{
	unsigned long end = jiffies + 10UL * wait_s * HZ;
	int seen;

	for (;;) {
		if (u->why[0])
			return false;
		if (READ_ONCE(u->abort)) {
			wire_fail(u, "%s: stopped by module unload", what);
			return false;
		}
		if (done(u, arg))
			return true;
		seen = atomic_read(&u->progress);
		if (!wait_event_timeout(u->wq, done(u, arg) || u->why[0] || READ_ONCE(u->abort) ||
					atomic_read(&u->progress) != seen, (long)wait_s * HZ)) {
			wire_fail(u, "%s: nothing happened for %d s", what, wait_s);
			return false;
		}
		if (time_after(jiffies, end) && !done(u, arg)) {
			wire_fail(u, "%s: not done after %d s", what, 10 * wait_s);
			return false;
		}
	}
}

static bool wire_all_flag(struct wire *u, long bit)
{
	int i;

	for (i = 0; i < nqp; i++)
		if (!test_bit(bit, &u->conns[i].flags))
			return false;
	return true;
}

static bool wire_sq_idle(struct wire *u, long unused)
{
	int i;

	for (i = 0; i < nqp; i++)
		if (atomic_read(&u->conns[i].sq_done) < u->conns[i].sq_posted)
			return false;
	return true;
}

/* rdma_cm events */

static int wire_connect_request(struct wire *u, struct rdma_cm_id *id,
				struct rdma_cm_event *ev);

static int wire_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct wire *u = the_wire;
	struct wire_conn *c;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return wire_connect_request(u, id, ev);
	if (id == u->listen) {
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			wire_fail(u, "listener: device removed");
		return 0;
	}
	c = id->context;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		set_bit(F_ADDR, &c->flags);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		set_bit(F_ROUTE, &c->flags);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		set_bit(F_EST, &c->flags);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		c->disc_status = ev->status;
		set_bit(F_DISC, &c->flags);
		if (!test_bit(F_DISC_OK, &c->flags) && !test_bit(F_DISC_SENT, &c->flags))
			wire_fail(u, "connection %d: disconnected by the other end before the end of the test",
				  c->idx);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		break;
	default:	/* ADDR/ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED, ... */
		set_bit(F_ERR, &c->flags);
		wire_fail(u, "connection %d: %s, status %d%s%s", c->idx, rdma_event_msg(ev->event),
			  ev->status, ev->event == RDMA_CM_EVENT_REJECTED ? ": " : "",
			  ev->event == RDMA_CM_EVENT_REJECTED ?
			  rdma_reject_msg(id, ev->status) : "");
		break;
	}
	wire_kick(u);
	return 0;
}

static void wire_qp_event(struct ib_event *ev, void *ctx)
{
	struct wire_conn *c = ctx;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:		/* a packet came before the RTU */
		rdma_notify(c->id, IB_EVENT_COMM_EST);
		break;
	case IB_EVENT_QP_LAST_WQE_REACHED:	/* SRQ QP in ERR: ib_drain_qp waits for it */
		atomic_inc(&c->last_wqe);
		break;
	default:
		wire_fail(c->u, "connection %d QP 0x%x: event %s", c->idx, c->qp ? c->qp->qp_num : 0,
			  ib_event_msg(ev->event));
	}
}

static void wire_srq_event(struct ib_event *ev, void *ctx)
{
	wire_fail(ctx, "SRQ event %s", ib_event_msg(ev->event));
}

/* Completions */

static const char *wire_opname(enum ib_wc_opcode op)
{
	switch (op) {
	case IB_WC_SEND: return "SEND";
	case IB_WC_RDMA_WRITE: return "RDMA WRITE";
	case IB_WC_RDMA_READ: return "RDMA READ";
	case IB_WC_REG_MR: return "REG_MR";
	case IB_WC_LOCAL_INV: return "LOCAL_INV";
	default: return "?";
	}
}

static void wire_sq_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct wire_cqe *e = container_of(wc->wr_cqe, struct wire_cqe, cqe);
	struct wire_conn *c = e->c;
	struct wire *u = c->u;

	if (wc->status != IB_WC_SUCCESS)
		wire_fail(u, "connection %d QP 0x%x: %s completed with %s (vendor 0x%x)", c->idx,
			  c->qp->qp_num, wire_opname(e->want), ib_wc_status_msg(wc->status),
			  wc->vendor_err);
	else if (wc->opcode != e->want)
		wire_fail(u, "connection %d QP 0x%x: %s completed as opcode %d", c->idx,
			  c->qp->qp_num, wire_opname(e->want), wc->opcode);
	atomic_inc(&c->sq_done);
	wire_kick(u);
}

static struct wire_cqe *wire_tx(struct wire_conn *c, enum ib_wc_opcode want)
{
	struct wire_cqe *e = &c->tx[c->ntx++ % SQ_DEPTH];

	e->cqe.done = wire_sq_done;
	e->c = c;
	e->want = want;
	c->sq_posted++;
	return e;
}

static int wire_post(struct wire_conn *c, struct ib_send_wr *wr, int n, const char *what)
{
	int err = ib_post_send(c->qp, wr, NULL);

	if (err) {
		c->sq_posted -= n;
		wire_fail(c->u, "connection %d: ib_post_send %s: %d", c->idx, what, err);
	}
	return err;
}

static int wire_send_ctl(struct wire_conn *c, u32 type, u32 status, u64 a, u32 rkey, u32 len,
			 u32 count1, u32 count2)
{
	struct wire_ctl *m = (struct wire_ctl *)c->ctl_tx.va;
	struct ib_sge sge = { .addr = c->ctl_tx.dma, .length = sizeof(*m),
			      .lkey = c->u->pd->local_dma_lkey };
	struct ib_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };

	memset(m, 0, sizeof(*m));
	m->magic = cpu_to_be32(WIRE_MAGIC);
	m->type = cpu_to_be32(type);
	m->idx = cpu_to_be32(c->idx);
	m->status = cpu_to_be32(status);
	m->addr = cpu_to_be64(a);
	m->rkey = cpu_to_be32(rkey);
	m->len = cpu_to_be32(len);
	m->count1 = cpu_to_be32(count1);
	m->count2 = cpu_to_be32(count2);
	wire_buf_dev(c->u, &c->ctl_tx);
	wr.wr_cqe = &wire_tx(c, IB_WC_SEND)->cqe;
	return wire_post(c, &wr, 1, "control message");
}

/* A control message in b from connection c, of the type the receiver expects. */
static const struct wire_ctl *wire_ctl_ok(struct wire_conn *c, struct wire_buf *b,
					  struct ib_wc *wc)
{
	const struct wire_ctl *m = (const void *)b->va;

	if (wc->opcode != IB_WC_RECV || wc->byte_len != sizeof(*m) ||
	    be32_to_cpu(m->magic) != WIRE_MAGIC || be32_to_cpu(m->idx) != c->idx) {
		wire_fail(c->u, "connection %d: bad control message (opcode %d, %u bytes, magic 0x%x, index %u)",
			  c->idx, wc->opcode, wc->byte_len, be32_to_cpu(m->magic),
			  be32_to_cpu(m->idx));
		return NULL;
	}
	return m;
}

static int wire_post_srq(struct wire *u, struct wire_cqe *r)
{
	struct ib_sge sge = { .addr = r->b.dma, .length = MAX_MSG, .lkey = u->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_cqe = &r->cqe, .sg_list = &sge, .num_sge = 1 };

	wire_buf_dev(u, &r->b);
	return ib_post_srq_recv(u->srq, &wr, NULL);
}

/* Server, S4: a SEND_WITH_IMM from connection c. */
static void wire_check_send(struct wire *u, struct wire_conn *c, struct wire_cqe *r,
			    struct ib_wc *wc)
{
	u32 imm = be32_to_cpu(wc->ex.imm_data), sender = imm >> 24, seq = imm & 0xffffff;
	long bad;

	if (wc->opcode != IB_WC_RECV) {
		wire_fail(u, "connection %d: receive opcode %d", c->idx, wc->opcode);
		return;
	}
	if (sender != c->idx) {
		wire_fail(u, "connection %d (QP 0x%x): a SEND of connection %u seq %u", c->idx,
			  c->qp->qp_num, sender, seq);
		return;
	}
	if (seq != c->next_seq || seq >= msgs) {
		wire_fail(u, "connection %d: SEND seq %u where %u was due (%s)", c->idx, seq,
			  c->next_seq, seq < c->next_seq ? "duplicate" : "lost or reordered");
		return;
	}
	if (wc->byte_len != wire_send_size(seq)) {
		wire_fail(u, "connection %d: SEND seq %u of %u bytes, sent %u", c->idx, seq,
			  wc->byte_len, wire_send_size(seq));
		return;
	}
	bad = wire_check(r->b.va, wire_tag(1, sender, seq), wc->byte_len);
	if (bad >= 0) {
		wire_fail(u, "connection %d: SEND seq %u (%u bytes): byte %ld is 0x%02x, expected 0x%02x",
			  c->idx, seq, wc->byte_len, bad, r->b.va[bad],
			  wire_pat(wire_tag(1, sender, seq), bad));
		return;
	}
	memset(r->b.va, SRV_FILL, wc->byte_len);
	c->next_seq++;
	atomic_inc(&u->sends_ok);
}

static void wire_srq_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct wire_cqe *r = container_of(wc->wr_cqe, struct wire_cqe, cqe);
	struct wire *u = r->u;
	struct wire_conn *c = wc->qp->qp_context;
	const struct wire_ctl *m;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			wire_fail(u, "connection %d: receive completed with %s (vendor 0x%x)",
				  c->idx, ib_wc_status_msg(wc->status), wc->vendor_err);
		goto out;
	}
	wire_buf_cpu(u, &r->b);
	if (wc->wc_flags & IB_WC_WITH_IMM) {
		wire_check_send(u, c, r, wc);
	} else if ((m = wire_ctl_ok(c, &r->b, wc))) {
		if (be32_to_cpu(m->type) != CTL_DONE) {
			wire_fail(u, "connection %d: control message %u, expected DONE", c->idx,
				  be32_to_cpu(m->type));
		} else if (c->next_seq != msgs) {
			wire_fail(u, "connection %d: DONE after %u of %d SENDs (lost)", c->idx,
				  c->next_seq, msgs);
		} else {
			c->done_sends = be32_to_cpu(m->count1);
			c->done_ops = be32_to_cpu(m->count2);
			set_bit(F_DONE, &c->flags);
		}
		memset(r->b.va, SRV_FILL, sizeof(*m));
	}
	if (wire_post_srq(u, r)) {
		atomic_inc(&u->repost_fail);
		wire_fail(u, "reposting to the SRQ failed");
	}
out:
	wire_kick(u);
}

/* Client: SLOT and VERDICT messages on its own RQ. */
static int wire_post_rx(struct wire_conn *c, struct wire_cqe *r)
{
	struct ib_sge sge = { .addr = r->b.dma, .length = CTL_SIZE,
			      .lkey = c->u->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_cqe = &r->cqe, .sg_list = &sge, .num_sge = 1 };

	wire_buf_dev(c->u, &r->b);
	return ib_post_recv(c->qp, &wr, NULL);
}

static void wire_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct wire_cqe *r = container_of(wc->wr_cqe, struct wire_cqe, cqe);
	struct wire_conn *c = r->c;
	struct wire *u = c->u;
	const struct wire_ctl *m;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			wire_fail(u, "connection %d: receive completed with %s (vendor 0x%x)",
				  c->idx, ib_wc_status_msg(wc->status), wc->vendor_err);
		goto out;
	}
	wire_buf_cpu(u, &r->b);
	m = wire_ctl_ok(c, &r->b, wc);
	if (!m)
		goto out;
	switch (be32_to_cpu(m->type)) {
	case CTL_SLOT:
		c->raddr = be64_to_cpu(m->addr);
		c->rkey = be32_to_cpu(m->rkey);
		c->rlen = be32_to_cpu(m->len);
		set_bit(F_SLOT, &c->flags);
		break;
	case CTL_VERDICT:
		c->verdict_status = be32_to_cpu(m->status);
		c->verdict_sends = be32_to_cpu(m->count1);
		c->verdict_bytes = be32_to_cpu(m->count2);
		set_bit(F_VERDICT, &c->flags);
		break;
	default:
		wire_fail(u, "connection %d: control message %u", c->idx, be32_to_cpu(m->type));
	}
	if (wire_post_rx(c, r))
		wire_fail(u, "connection %d: reposting a receive failed", c->idx);
out:
	wire_kick(u);
}

/* Setup and teardown shared by both roles */

static int wire_check_dev(struct wire *u, struct ib_device *dev)
{
	if (dev_name_param[0] && strcmp(dev_name(&dev->dev), dev_name_param)) {
		wire_fail(u, "rdma_cm chose %s, not %s", dev_name(&dev->dev), dev_name_param);
		return -ENODEV;
	}
	if (!(dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		wire_fail(u, "%s has no memory management extensions (FRWR)", dev_name(&dev->dev));
		return -EOPNOTSUPP;
	}
	return 0;
}

static int wire_common_setup(struct wire *u, struct ib_device *dev)
{
	int i, err;

	err = wire_check_dev(u, dev);
	if (err)
		return err;
	u->dev = dev;
	u->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(u->pd)) {
		err = PTR_ERR(u->pd);
		u->pd = NULL;
		wire_fail(u, "ib_alloc_pd: %d", err);
		return err;
	}
	u->ncq = num_online_cpus();
	u->cqs = kcalloc(u->ncq, sizeof(*u->cqs), GFP_KERNEL);
	if (!u->cqs)
		return -ENOMEM;
	for (i = 0; i < u->ncq; i++) {
		u->cqs[i] = ib_alloc_cq(dev, u, CQ_SIZE, i % dev->num_comp_vectors,
					IB_POLL_WORKQUEUE);
		if (IS_ERR(u->cqs[i])) {
			err = PTR_ERR(u->cqs[i]);
			u->cqs[i] = NULL;
			wire_fail(u, "ib_alloc_cq %d: %d", i, err);
			return err;
		}
	}
	for (i = 0; i < nqp; i++) {
		err = wire_buf_alloc(u, &u->conns[i].ctl_tx, CTL_SIZE, DMA_TO_DEVICE);
		if (err)
			return err;
	}
	return 0;
}

static struct ib_qp_init_attr wire_qp_attr(struct wire *u, struct wire_conn *c)
{
	return (struct ib_qp_init_attr){
		.event_handler = wire_qp_event,
		.qp_context = c,
		.send_cq = u->cqs[c->idx % u->ncq],
		.recv_cq = u->cqs[c->idx % u->ncq],
		.srq = u->server ? u->srq : NULL,
		.cap = {
			.max_send_wr = SQ_DEPTH,
			.max_recv_wr = u->server ? 0 : 2 * NCTL_RX,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
}

static bool wire_all_disc(struct wire *u, long unused)
{
	int i;

	for (i = 0; i < nqp; i++)
		if (u->conns[i].id && test_bit(F_EST, &u->conns[i].flags) &&
		    !test_bit(F_DISC, &u->conns[i].flags))
			return false;
	return true;
}

/*
 * Disconnect (client: initiate; server: answer the DREQ, or initiate after a failure),
 * wait for DISCONNECTED when things went well, drain every QP, destroy QPs and IDs.
 */
static void wire_close_conns(struct wire *u)
{
	struct wire_conn *c;
	ktime_t t0;
	int i, err;

	for (i = 0; i < nqp; i++) {
		c = &u->conns[i];
		if (!c->id || !test_bit(F_EST, &c->flags) || test_and_set_bit(F_DISC_SENT, &c->flags))
			continue;
		err = rdma_disconnect(c->id);
		if (err && !u->server)
			wire_fail(u, "connection %d: rdma_disconnect: %d", i, err);
	}
	if (!u->why[0] &&
	    wire_wait(u, wire_all_disc, 0, u->server ? "answering disconnects" : "disconnecting"))
		for (i = 0; i < nqp; i++)
			if (u->conns[i].id && !u->server && u->conns[i].disc_status)
				wire_fail(u, "connection %d: DISCONNECTED with status %d (no DREP)",
					  i, u->conns[i].disc_status);
	for (i = 0; i < nqp; i++) {
		c = &u->conns[i];
		if (!c->qp)
			continue;
		t0 = ktime_get();
		ib_drain_qp(c->qp);
		c->drain_ms = ktime_ms_delta(ktime_get(), t0);
		/*
		 * ib_drain_qp of an SRQ QP waits for IB_EVENT_QP_LAST_WQE_REACHED, the
		 * affiliated event IBTA has the device raise once such a QP is in ERR, and
		 * gives up after its own timeout: a drain without the event, or a slow one,
		 * fails.
		 */
		if (u->server && !atomic_read(&c->last_wqe))
			wire_fail(u, "connection %d QP 0x%x: no last-WQE event (drain took %u ms)",
				  i, c->qp->qp_num, c->drain_ms);
		if (c->drain_ms > DRAIN_LIMIT_MS)
			wire_fail(u, "connection %d QP 0x%x: ib_drain_qp took %u ms", i,
				  c->qp->qp_num, c->drain_ms);
		rdma_destroy_qp(c->id);
		c->qp = NULL;
	}
	for (i = 0; i < nqp; i++) {
		c = &u->conns[i];
		if (c->id)
			rdma_destroy_id(c->id);
		c->id = NULL;
	}
}

static void wire_teardown(struct wire *u)
{
	struct wire_conn *c;
	int i, j;

	if (u->listen)
		rdma_destroy_id(u->listen);
	u->listen = NULL;
	wire_close_conns(u);
	if (u->srq)
		ib_destroy_srq(u->srq);
	u->srq = NULL;
	for (i = 0; u->cqs && i < u->ncq; i++)
		if (u->cqs[i])
			ib_free_cq(u->cqs[i]);
	kfree(u->cqs);
	u->cqs = NULL;
	if (!u->dev)
		return;
	for (i = 0; u->rbuf && i < NRECV; i++)
		wire_buf_free(u, &u->rbuf[i].b);
	kfree(u->rbuf);
	u->rbuf = NULL;
	wire_pages_free(u, &u->slots);
	for (i = 0; i < nqp; i++) {
		c = &u->conns[i];
		wire_buf_free(u, &c->ctl_tx);
		wire_buf_free(u, &c->lbuf);
		for (j = 0; j < WINDOW; j++)
			wire_buf_free(u, &c->sbuf[j]);
		for (j = 0; j < NCTL_RX; j++)
			wire_buf_free(u, &c->rx[j].b);
		wire_pages_free(u, &c->fr);
	}
	if (u->pd)
		ib_dealloc_pd(u->pd);
	u->pd = NULL;
}

/* The server */

static int wire_connect_request(struct wire *u, struct rdma_cm_id *id,
				struct rdma_cm_event *ev)
{
	const struct wire_hello *h = ev->param.conn.private_data;
	struct rdma_conn_param cp = {};
	struct ib_qp_init_attr qa;
	struct wire_conn *c;
	u32 idx;
	int err;

	if (!u->server || !h || ev->param.conn.private_data_len < sizeof(*h) ||
	    be32_to_cpu(h->magic) != WIRE_MAGIC || be32_to_cpu(h->version) != WIRE_VERSION ||
	    be32_to_cpu(h->nqp) != nqp || be32_to_cpu(h->msgs) != msgs) {
		pr_err(ULP ": connect request without this module's header (or other nqp/msgs): rejected\n");
		return -EINVAL;	/* non-zero: rdma_cm rejects and destroys the new ID */
	}
	idx = be32_to_cpu(h->idx);
	if (idx >= nqp || u->conns[idx].id) {
		pr_err(ULP ": connect request for connection %u: out of range or taken, rejected\n", idx);
		return -EINVAL;
	}
	c = &u->conns[idx];
	c->id = id;
	id->context = c;
	qa = wire_qp_attr(u, c);
	err = rdma_create_qp(id, u->pd, &qa);
	if (err) {
		c->id = NULL;
		wire_fail(u, "connection %u: rdma_create_qp: %d", idx, err);
		return err;
	}
	c->qp = id->qp;
	cp.responder_resources = min_t(u32, ev->param.conn.initiator_depth,
				       u->dev->attrs.max_qp_rd_atom);
	cp.initiator_depth = min_t(u32, ev->param.conn.responder_resources,
				   u->dev->attrs.max_qp_init_rd_atom);
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	err = rdma_accept(id, &cp);
	if (err) {
		rdma_destroy_qp(id);
		c->qp = NULL;
		c->id = NULL;
		wire_fail(u, "connection %u: rdma_accept: %d", idx, err);
		return err;
	}
	pr_info(ULP ": server: connection %u from %pISp accepted, QP 0x%x on CQ %d, SRQ\n", idx,
		&id->route.addr.dst_addr, c->qp->qp_num, idx % u->ncq);
	wire_kick(u);
	return 0;
}

/* S1 */
static int wire_server_start(struct wire *u)
{
	int i, err;

	u->listen = rdma_create_id(&init_net, wire_cm_handler, u, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(u->listen)) {
		err = PTR_ERR(u->listen);
		u->listen = NULL;
		wire_fail(u, "rdma_create_id: %d", err);
		return err;
	}
	err = rdma_bind_addr(u->listen, (struct sockaddr *)&u->sin);
	if (err || !u->listen->device) {
		wire_fail(u, "rdma_bind_addr %pISp: %d%s", &u->sin, err,
			  err ? "" : " (no RDMA device owns the address)");
		return err ?: -ENODEV;
	}
	err = wire_common_setup(u, u->listen->device);
	if (err)
		return err;
	{
		struct ib_srq_init_attr sa = {
			.event_handler = wire_srq_event,
			.srq_context = u,
			.attr = { .max_wr = NRECV, .max_sge = 1 },
			.srq_type = IB_SRQT_BASIC,
		};

		u->srq = ib_create_srq(u->pd, &sa);
	}
	if (IS_ERR(u->srq)) {
		err = PTR_ERR(u->srq);
		u->srq = NULL;
		wire_fail(u, "ib_create_srq: %d", err);
		return err;
	}
	u->rbuf = kcalloc(NRECV, sizeof(*u->rbuf), GFP_KERNEL);
	if (!u->rbuf)
		return -ENOMEM;
	for (i = 0; i < NRECV; i++) {
		struct wire_cqe *r = &u->rbuf[i];

		r->u = u;
		r->cqe.done = wire_srq_done;
		err = wire_buf_alloc(u, &r->b, MAX_MSG, DMA_FROM_DEVICE);
		if (err)
			return err;
		memset(r->b.va, SRV_FILL, MAX_MSG);
		err = wire_post_srq(u, r);
		if (err) {
			wire_fail(u, "ib_post_srq_recv %d: %d", i, err);
			return err;
		}
	}
	err = wire_pages_alloc(u, &u->slots, nqp * SLOT_SIZE / PAGE_SIZE, SRV_FILL);
	if (err)
		return err;
	err = rdma_listen(u->listen, 2 * nqp);
	if (err) {
		wire_fail(u, "rdma_listen: %d", err);
		return err;
	}
	pr_info(ULP ": server: listening on %pISp (%s), PD, %d CQs, SRQ of %d x %d B, %d slots of %d B for RDMA\n",
		&u->sin, dev_name(&u->dev->dev), u->ncq, NRECV, MAX_MSG, nqp, SLOT_SIZE);
	return 0;
}

/* S5: the RDMA slots: each region the client wrote holds its pattern, the rest SRV_FILL. */
static void wire_check_slots(struct wire *u)
{
	u32 off, end;
	long bad;
	int i, k;
	u8 *s;

	wire_pages_sync(u, &u->slots, true);
	for (i = 0; i < nqp && !u->why[0]; i++) {
		s = u->slots.va + (size_t)i * SLOT_SIZE;
		off = 0;
		for (k = 0; k <= NOPS; k++) {
			end = k < NOPS ? wire_op_off(k) : SLOT_SIZE;
			if (memchr_inv(s + off, SRV_FILL, end - off)) {
				u8 *p = memchr_inv(s + off, SRV_FILL, end - off);

				wire_fail(u, "slot %d: byte %ld outside the written regions is 0x%02x",
					  i, (long)(p - s), *p);
				return;
			}
			if (k == NOPS)
				break;
			bad = wire_check(s + end, wire_tag(2, i, k), rdma_ops[k].len);
			if (bad >= 0) {
				wire_fail(u, "slot %d: RDMA WRITE %d (%u bytes at %u): byte %ld is 0x%02x, expected 0x%02x",
					  i, k, rdma_ops[k].len, end, bad, s[end + bad],
					  wire_pat(wire_tag(2, i, k), bad));
				return;
			}
			u->slot_bytes += rdma_ops[k].len;
			off = end + rdma_ops[k].len;
		}
	}
}

static void wire_server_work(struct work_struct *w)
{
	struct wire *u = container_of(w, struct wire, work);
	struct ib_reg_wr reg;
	struct ib_send_wr inv;
	struct wire_conn *c0 = &u->conns[0];
	unsigned int drain = 0, lastwqe = 0;
	int i, ok;

	/* S3 */
	if (!wire_wait(u, wire_all_flag, F_EST, "waiting for the connections"))
		goto out;
	rdma_destroy_id(u->listen);
	u->listen = NULL;
	pr_info(ULP ": server: %d connections established\n", nqp);
	ib_update_fast_reg_key(u->slots.mr, ib_inc_rkey(u->slots.mr->rkey) & 0xff);
	reg = (struct ib_reg_wr){
		.wr = { .opcode = IB_WR_REG_MR, .send_flags = IB_SEND_SIGNALED,
			.wr_cqe = &wire_tx(c0, IB_WC_REG_MR)->cqe },
		.mr = u->slots.mr, .key = u->slots.mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ };
	wire_pages_sync(u, &u->slots, false);
	if (wire_post(c0, &reg.wr, 1, "REG_MR") ||
	    !wire_wait(u, wire_sq_idle, 0, "registering the RDMA buffer"))
		goto out;
	for (i = 0; i < nqp; i++)
		if (wire_send_ctl(&u->conns[i], CTL_SLOT, 0,
				  u->slots.mr->iova + (u64)i * SLOT_SIZE, u->slots.mr->rkey,
				  SLOT_SIZE, 0, 0))
			goto out;
	if (!wire_wait(u, wire_sq_idle, 0, "sending the slots"))
		goto out;
	pr_info(ULP ": server: RDMA buffer registered by FRWR (%d pages, rkey 0x%x, iova 0x%llx), slots sent\n",
		u->slots.n, u->slots.mr->rkey, u->slots.mr->iova);

	/* S4, S5 */
	if (!wire_wait(u, wire_all_flag, F_DONE, "waiting for the clients' SENDs and DONE"))
		goto out;
	for (i = 0; i < nqp; i++)
		if (u->conns[i].done_sends != msgs || u->conns[i].done_ops != NOPS)
			wire_fail(u, "connection %d: the client reports %u SENDs and %u RDMA pairs, expected %d and %zu",
				  i, u->conns[i].done_sends, u->conns[i].done_ops, msgs, NOPS);
	wire_check_slots(u);
	ok = !u->why[0];
	if (ok)
		pr_info(ULP ": server: %d SENDs checked byte by byte (%d connections), %llu bytes of RDMA WRITEs in %d slots checked, the rest of the buffer untouched\n",
			atomic_read(&u->sends_ok), nqp, u->slot_bytes, nqp);
	inv = (struct ib_send_wr){ .opcode = IB_WR_LOCAL_INV, .send_flags = IB_SEND_SIGNALED,
				   .ex.invalidate_rkey = u->slots.mr->rkey,
				   .wr_cqe = &wire_tx(c0, IB_WC_LOCAL_INV)->cqe };
	if (wire_post(c0, &inv, 1, "LOCAL_INV") ||
	    !wire_wait(u, wire_sq_idle, 0, "invalidating the RDMA buffer's key"))
		goto out;
	for (i = 0; i < nqp; i++)	/* a client disconnects once it has its verdict */
		set_bit(F_DISC_OK, &u->conns[i].flags);
	for (i = 0; i < nqp; i++)
		if (wire_send_ctl(&u->conns[i], CTL_VERDICT, !ok, 0, 0, 0, u->conns[i].next_seq,
				  (u32)(u->slot_bytes / nqp)))
			goto out;
	if (!wire_wait(u, wire_sq_idle, 0, "sending the verdicts"))
		goto out;
	pr_info(ULP ": server: LOCAL_INV of rkey 0x%x done, verdicts sent\n", u->slots.mr->rkey);

	/* S6: the client disconnects first */
	wire_wait(u, wire_all_flag, F_DISC, "waiting for the clients' disconnects");
out:
	wire_close_conns(u);
	for (i = 0; i < nqp; i++) {
		drain = max(drain, u->conns[i].drain_ms);
		lastwqe += atomic_read(&u->conns[i].last_wqe);
	}
	wire_teardown(u);
	if (u->why[0]) {
		snprintf(result, sizeof(result), "FAIL server: %s", u->why);
		pr_err(ULP ": %s\n", result);
		return;
	}
	pr_info(ULP ": server: disconnected, %d QPs drained (longest %u ms, %u last-WQE events), everything destroyed\n",
		nqp, drain, lastwqe);
	snprintf(result, sizeof(result),
		 "PASS server: %d connections on %s, %d SENDs into one SRQ and %llu RDMA bytes checked, disconnected",
		 nqp, u->dev ? dev_name(&u->dev->dev) : "?", atomic_read(&u->sends_ok), u->slot_bytes);
	pr_info(ULP ": %s\n", result);
}

/* The client */

static int wire_client_conn_setup(struct wire *u, struct wire_conn *c)
{
	struct ib_qp_init_attr qa;
	int j, err;

	for (j = 0; j < WINDOW; j++) {
		err = wire_buf_alloc(u, &c->sbuf[j], MAX_MSG, DMA_TO_DEVICE);
		if (err)
			return err;
	}
	err = wire_buf_alloc(u, &c->lbuf, LBUF_SIZE, DMA_BIDIRECTIONAL);
	if (err)
		return err;
	err = wire_pages_alloc(u, &c->fr, LBUF_SIZE / PAGE_SIZE, CLI_FILL);
	if (err)
		return err;
	qa = wire_qp_attr(u, c);
	err = rdma_create_qp(c->id, u->pd, &qa);
	if (err) {
		wire_fail(u, "connection %d: rdma_create_qp: %d", c->idx, err);
		return err;
	}
	c->qp = c->id->qp;
	for (j = 0; j < NCTL_RX; j++) {
		struct wire_cqe *r = &c->rx[j];

		r->c = c;
		r->u = u;
		r->cqe.done = wire_rx_done;
		err = wire_buf_alloc(u, &r->b, CTL_SIZE, DMA_FROM_DEVICE);
		if (err)
			return err;
		err = wire_post_rx(c, r);
		if (err) {
			wire_fail(u, "connection %d: ib_post_recv: %d", c->idx, err);
			return err;
		}
	}
	return 0;
}

/* C2: SENDs seq base .. base + WINDOW - 1 on connection c. */
static int wire_client_sends(struct wire *u, struct wire_conn *c, u32 base)
{
	struct ib_send_wr wr = { .opcode = IB_WR_SEND_WITH_IMM, .send_flags = IB_SEND_SIGNALED,
				 .num_sge = 1 };
	struct ib_sge sge;
	u32 seq;
	int err;

	for (seq = base; seq < base + WINDOW && seq < msgs; seq++) {
		struct wire_buf *b = &c->sbuf[seq - base];

		wire_fill(b->va, wire_tag(1, c->idx, seq), wire_send_size(seq));
		wire_buf_dev(u, b);
		sge = (struct ib_sge){ .addr = b->dma, .length = wire_send_size(seq),
				       .lkey = u->pd->local_dma_lkey };
		wr.sg_list = &sge;
		wr.ex.imm_data = cpu_to_be32(c->idx << 24 | seq);
		wr.wr_cqe = &wire_tx(c, IB_WC_SEND)->cqe;
		err = wire_post(c, &wr, 1, "SEND");
		if (err)
			return err;
	}
	return 0;
}

/* C3: post rdma_ops[k] on connection c: [REG_MR,] WRITE, READ. */
static int wire_client_rdma(struct wire *u, struct wire_conn *c, int k)
{
	u32 len = rdma_ops[k].len, src = 3 * k, dst = LBUF_DST + 5 * k;
	bool frwr = rdma_ops[k].frwr;
	u8 *va = frwr ? c->fr.va : c->lbuf.va;
	u64 base = frwr ? c->fr.mr->iova : c->lbuf.dma;
	u64 raddr = c->raddr + wire_op_off(k);
	struct ib_sge wsge = { .addr = base + src, .length = len },
		      rsge = { .addr = base + dst, .length = len };
	struct ib_rdma_wr r = { .wr = { .opcode = IB_WR_RDMA_READ, .sg_list = &rsge,
					.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
				.remote_addr = raddr, .rkey = c->rkey };
	struct ib_rdma_wr w = { .wr = { .opcode = IB_WR_RDMA_WRITE, .sg_list = &wsge,
					.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
					.next = &r.wr },
				.remote_addr = raddr, .rkey = c->rkey };
	struct ib_reg_wr reg = { .wr = { .opcode = IB_WR_REG_MR, .next = &w.wr,
					 .send_flags = IB_SEND_SIGNALED },
				 .mr = c->fr.mr, .access = IB_ACCESS_LOCAL_WRITE };

	if (wire_op_off(k) + len > c->rlen) {
		wire_fail(u, "connection %d: slot of %u bytes too small", c->idx, c->rlen);
		return -EINVAL;
	}
	wire_fill(va + src, wire_tag(2, c->idx, k), len);
	memset(va + dst, CLI_FILL, len + GUARD);
	if (frwr) {	/* a new key byte each time; the WRITE and the READ use it */
		ib_update_fast_reg_key(c->fr.mr, ib_inc_rkey(c->fr.mr->rkey) & 0xff);
		reg.key = c->fr.mr->rkey;
		wsge.lkey = rsge.lkey = c->fr.mr->lkey;
		wire_pages_sync(u, &c->fr, false);
		reg.wr.wr_cqe = &wire_tx(c, IB_WC_REG_MR)->cqe;
	} else {
		wsge.lkey = rsge.lkey = u->pd->local_dma_lkey;
		wire_buf_dev(u, &c->lbuf);
	}
	w.wr.wr_cqe = &wire_tx(c, IB_WC_RDMA_WRITE)->cqe;
	r.wr.wr_cqe = &wire_tx(c, IB_WC_RDMA_READ)->cqe;
	return wire_post(c, frwr ? &reg.wr : &w.wr, frwr ? 3 : 2, "REG_MR/WRITE/READ");
}

/* C3: the READ of rdma_ops[k] brought the WRITE's bytes back; the guard is untouched. */
static int wire_client_rdma_check(struct wire *u, struct wire_conn *c, int k)
{
	u32 len = rdma_ops[k].len, dst = LBUF_DST + 5 * k;
	bool frwr = rdma_ops[k].frwr;
	u8 *va = frwr ? c->fr.va : c->lbuf.va, *p;
	long bad;

	if (frwr)
		wire_pages_sync(u, &c->fr, true);
	else
		wire_buf_cpu(u, &c->lbuf);
	bad = wire_check(va + dst, wire_tag(2, c->idx, k), len);
	if (bad >= 0) {
		wire_fail(u, "connection %d: RDMA READ %d (%u bytes%s): byte %ld is 0x%02x, expected 0x%02x",
			  c->idx, k, len, frwr ? ", FRWR" : "", bad, va[dst + bad],
			  wire_pat(wire_tag(2, c->idx, k), bad));
		return -EIO;
	}
	p = memchr_inv(va + dst + len, CLI_FILL, GUARD);
	if (p) {
		wire_fail(u, "connection %d: RDMA READ %d (%u bytes) wrote past its end (byte %ld)",
			  c->idx, k, len, (long)(p - (va + dst)));
		return -EIO;
	}
	if (frwr) {
		struct ib_send_wr inv = { .opcode = IB_WR_LOCAL_INV, .send_flags = IB_SEND_SIGNALED,
					  .ex.invalidate_rkey = c->fr.mr->rkey };

		inv.wr_cqe = &wire_tx(c, IB_WC_LOCAL_INV)->cqe;
		return wire_post(c, &inv, 1, "LOCAL_INV");
	}
	return 0;
}

static int wire_client_run(struct wire *u)
{
	struct wire_hello hello[MAX_NQP];
	struct rdma_conn_param cp = {};
	struct wire_conn *c;
	u32 base;
	int i, k, err, nfrwr;
	ktime_t t0;

	/* C1 */
	for (i = 0; i < nqp; i++) {
		c = &u->conns[i];
		c->id = rdma_create_id(&init_net, wire_cm_handler, c, RDMA_PS_TCP, IB_QPT_RC);
		if (IS_ERR(c->id)) {
			err = PTR_ERR(c->id);
			c->id = NULL;
			wire_fail(u, "rdma_create_id %d: %d", i, err);
			return err;
		}
		err = rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&u->sin, 5000);
		if (err) {
			wire_fail(u, "connection %d: rdma_resolve_addr %pISp: %d", i, &u->sin, err);
			return err;
		}
	}
	if (!wire_wait(u, wire_all_flag, F_ADDR, "resolving the address"))
		return -ETIMEDOUT;
	for (i = 0; i < nqp; i++) {
		if (u->conns[i].id->device != u->conns[0].id->device) {
			wire_fail(u, "connections on two devices");
			return -EINVAL;
		}
		err = rdma_resolve_route(u->conns[i].id, 5000);
		if (err) {
			wire_fail(u, "connection %d: rdma_resolve_route: %d", i, err);
			return err;
		}
	}
	if (!wire_wait(u, wire_all_flag, F_ROUTE, "resolving the route"))
		return -ETIMEDOUT;
	err = wire_common_setup(u, u->conns[0].id->device);
	if (err)
		return err;
	cp.initiator_depth = min_t(u32, 4, u->dev->attrs.max_qp_init_rd_atom);
	cp.responder_resources = min_t(u32, 4, u->dev->attrs.max_qp_rd_atom);
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	cp.flow_control = 1;
	cp.private_data_len = sizeof(hello[0]);
	for (i = 0; i < nqp; i++) {
		c = &u->conns[i];
		err = wire_client_conn_setup(u, c);
		if (err)
			return err;
		hello[i] = (struct wire_hello){
			.magic = cpu_to_be32(WIRE_MAGIC), .version = cpu_to_be32(WIRE_VERSION),
			.idx = cpu_to_be32(i), .nqp = cpu_to_be32(nqp), .msgs = cpu_to_be32(msgs),
		};
		cp.private_data = &hello[i];
		err = rdma_connect(c->id, &cp);
		if (err) {
			wire_fail(u, "connection %d: rdma_connect: %d", i, err);
			return err;
		}
	}
	if (!wire_wait(u, wire_all_flag, F_EST, "connecting"))
		return -ETIMEDOUT;
	pr_info(ULP ": client: %d connections to %pISp on %s established (QPs 0x%x ... 0x%x)\n",
		nqp, &u->sin, dev_name(&u->dev->dev), u->conns[0].qp->qp_num,
		u->conns[nqp - 1].qp->qp_num);
	if (!wire_wait(u, wire_all_flag, F_SLOT, "waiting for the server's slots"))
		return -ETIMEDOUT;

	/* C2 */
	t0 = ktime_get();
	for (base = 0; base < msgs; base += WINDOW) {
		for (i = 0; i < nqp; i++) {
			err = wire_client_sends(u, &u->conns[i], base);
			if (err)
				return err;
		}
		if (!wire_wait(u, wire_sq_idle, 0, "SENDs"))
			return -EIO;
	}
	pr_info(ULP ": client: %d SEND_WITH_IMM per connection (1 to %d bytes) sent in %lld ms\n",
		msgs, MAX_MSG, ktime_ms_delta(ktime_get(), t0));

	/* C3 */
	t0 = ktime_get();
	for (k = 0; k < NOPS; k++) {
		for (i = 0; i < nqp; i++) {
			err = wire_client_rdma(u, &u->conns[i], k);
			if (err)
				return err;
		}
		if (!wire_wait(u, wire_sq_idle, 0, "RDMA WRITE and READ"))
			return -EIO;
		for (i = 0; i < nqp; i++) {
			err = wire_client_rdma_check(u, &u->conns[i], k);
			if (err)
				return err;
		}
		if (!wire_wait(u, wire_sq_idle, 0, "LOCAL_INV"))
			return -EIO;
	}
	for (k = 0, nfrwr = 0; k < NOPS; k++)
		nfrwr += rdma_ops[k].frwr;
	pr_info(ULP ": client: %zu RDMA WRITEs read back and compared per connection (1 to %d bytes, %d through FRWR keys) in %lld ms\n",
		NOPS, MAX_MSG, nfrwr, ktime_ms_delta(ktime_get(), t0));

	/* C4 */
	for (i = 0; i < nqp; i++) {
		err = wire_send_ctl(&u->conns[i], CTL_DONE, 0, 0, 0, 0, msgs, NOPS);
		if (err)
			return err;
	}
	if (!wire_wait(u, wire_all_flag, F_VERDICT, "waiting for the server's verdict"))
		return -ETIMEDOUT;
	for (i = 0; i < nqp; i++) {
		c = &u->conns[i];
		if (c->verdict_status || c->verdict_sends != msgs) {
			wire_fail(u, "connection %d: the server's verdict is FAIL (%u SENDs checked): see its log",
				  i, c->verdict_sends);
			return -EIO;
		}
	}
	pr_info(ULP ": client: the server checked every SEND and RDMA byte: ok on all %d connections\n",
		nqp);
	return 0;
}

static int __init wire_init(void)
{
	struct wire *u;
	unsigned int drain = 0;
	int i, err;

	if (nqp < 1 || nqp > MAX_NQP || msgs < 1 || msgs > (1 << 20) || port < 1 ||
	    port > 65535 || wait_s < 1 || wait_s > 600 || wire_op_off(NOPS) > SLOT_SIZE) {
		pr_err(ULP ": bad parameters\n");
		return -EINVAL;
	}
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return -ENOMEM;
	init_waitqueue_head(&u->wq);
	for (i = 0; i < MAX_NQP; i++) {
		u->conns[i].u = u;
		u->conns[i].idx = i;
	}
	u->sin.sin_family = AF_INET;
	u->sin.sin_port = htons(port);
	if (!in4_pton(addr, -1, (u8 *)&u->sin.sin_addr.s_addr, -1, NULL)) {
		pr_err(ULP ": addr=%s is not an IPv4 address\n", addr);
		kfree(u);
		return -EINVAL;
	}
	if (!strcmp(role, "server")) {
		u->server = true;
	} else if (strcmp(role, "client")) {
		pr_err(ULP ": role=%s: server or client\n", role);
		kfree(u);
		return -EINVAL;
	}
	the_wire = u;
	if (u->server) {
		err = wire_server_start(u);
		if (!err) {
			snprintf(result, sizeof(result), "running: server on %pISp (%s)", &u->sin,
				 dev_name(&u->dev->dev));
			INIT_WORK(&u->work, wire_server_work);
			u->work_queued = true;
			queue_work(system_long_wq, &u->work);
			return 0;
		}
		wire_teardown(u);
	} else {
		err = wire_client_run(u);
		if (err && !u->why[0])
			wire_fail(u, "step failed: %d", err);
		wire_close_conns(u);
		if (u->why[0] && !err)
			err = -EIO;
		for (i = 0; i < nqp; i++)
			drain = max(drain, u->conns[i].drain_ms);
		wire_teardown(u);
		if (!err) {
			pr_info(ULP ": client: disconnected (DREP on every connection), %d QPs drained (longest %u ms), everything destroyed\n",
				nqp, drain);
			snprintf(result, sizeof(result),
				 "PASS client: %d connections to %pISp on %s, %d SENDs, %zu WRITE+READ pairs each, server verdict ok, disconnected",
				 nqp, &u->sin, dev_name(&u->dev->dev), msgs, NOPS);
			pr_info(ULP ": %s\n", result);
			kfree(u);
			the_wire = NULL;
			return 0;
		}
	}
	if (!u->why[0])
		wire_fail(u, "setup failed: %d", err);
	snprintf(result, sizeof(result), "FAIL %s: %s", role, u->why);
	pr_err(ULP ": %s\n", result);
	kfree(u);
	the_wire = NULL;
	return err ?: -EIO;
}

static void __exit wire_exit(void)
{
	struct wire *u = the_wire;

	if (!u)
		return;
	if (u->work_queued) {
		WRITE_ONCE(u->abort, true);
		wake_up(&u->wq);
		flush_work(&u->work);
	}
	kfree(u);
	the_wire = NULL;
}

module_init(wire_init);
module_exit(wire_exit);
MODULE_DESCRIPTION("vcx kernel verbs test: a ULP over rdma_cm between two machines (SRQ, FRWR, payload checks)");
MODULE_LICENSE("GPL");
