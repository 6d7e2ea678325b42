/*
 * fake_ibverbs.c - a stand-in libibverbs.so.1 for testing gdrdiag's native provider on machines
 * with no RDMA device (compiled by tests/unit/test_verbs_native_fake_hca.py, put first on
 * LD_LIBRARY_PATH of a child process). NOT part of gdrdiag and never a measurement.
 *
 * It exports exactly the entry points build/native/libgdr_verbs.so imports (see `nm -D
 * --undefined-only`), with the ABI of rdma-core's <infiniband/verbs.h>, and implements the
 * context ops the header's inline functions dispatch to (ibv_post_send -> ops.post_send,
 * ibv_poll_cq -> ops.poll_cq, ibv_post_recv -> ops.post_recv). The context is not a
 * verbs_context (abi_compat NULL), so the header's ibv_query_port falls back to the exported
 * symbol.
 *
 * The devices ("fake0", "fake1"; FAKE_VERBS_DOWN=<name> makes that port DOWN) are Ethernet
 * (RoCE) ports with a four-entry GID table in which only index 3 is a RoCE v2 IPv4-mapped GID.
 * An RC QP enforces what an HCA does, with the completions an HCA gives (IB spec vol. 1 ch. 10/11
 * and the libibverbs man pages): state machine RESET->INIT->RTR->RTS with the mandatory attribute
 * masks (EINVAL otherwise), posting only in RTS (EINVAL) or ERR (every WR flushes), send queue
 * depth (ENOMEM), lkey/bounds (IBV_WC_LOC_PROT_ERR), an unreachable peer
 * (IBV_WC_RETRY_EXC_ERR), rkey/bounds/REMOTE_WRITE (IBV_WC_REM_ACCESS_ERR), WRITE_WITH_IMM
 * without a receive (IBV_WC_RNR_RETRY_EXC_ERR), and it moves the bytes with memcpy. Objects that
 * are still used refuse to be destroyed with EBUSY, as the kernel does; live objects are counted
 * and printed at exit when FAKE_VERBS_REPORT is set.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#define NDEV 2
#define GIDS 4
#define MAXOBJ 4096

static struct ibv_device devs[NDEV];
static int live_ctx, live_pd, live_mr, live_cq, live_qp;

struct fctx { struct ibv_context c; int idx; int pds, cqs; };
struct fpd { struct ibv_pd p; int mrs, qps; };
struct fmr { struct ibv_mr m; uint64_t iova; int access; char *va; };
struct ent { struct ibv_wc wc; uint32_t qpn; int retire; };
struct fcq { struct ibv_cq c; struct ent *ring; int cap, head, len, qps; };
struct fqp {
	struct ibv_qp q;
	int access, max_send, max_recv, max_inline, outstanding, since, recvs, recv_head;
	uint64_t recv_ids[1024]; /* wr_ids of posted receives, consumed in order */
	uint32_t dest_qpn;
	union ibv_gid dgid;
	uint8_t port;
};

static struct fmr *mrs[MAXOBJ];
static struct fqp *qps[MAXOBJ];
static uint32_t next_qpn = 0x40, next_key = 0x1000;

__attribute__((destructor)) static void report(void)
{
	if (getenv("FAKE_VERBS_REPORT"))
		fprintf(stderr, "fake-verbs live: ctx=%d pd=%d mr=%d cq=%d qp=%d\n", live_ctx, live_pd,
			live_mr, live_cq, live_qp);
}

static void init_devs(void)
{
	for (int i = 0; i < NDEV; i++) {
		snprintf(devs[i].name, sizeof(devs[i].name), "fake%d", i);
		snprintf(devs[i].dev_name, sizeof(devs[i].dev_name), "uverbs%d", i);
		devs[i].node_type = IBV_NODE_CA;
		devs[i].transport_type = IBV_TRANSPORT_IB;
	}
}

/* verbs.h wraps these two in macros over inline helpers; the exported symbols are defined here. */
#undef ibv_get_device_list
#undef ibv_query_port

struct ibv_device **ibv_get_device_list(int *num)
{
	struct ibv_device **l = calloc(NDEV + 1, sizeof(*l));

	init_devs();
	for (int i = 0; i < NDEV; i++)
		l[i] = &devs[i];
	if (num)
		*num = NDEV;
	return l;
}

void ibv_free_device_list(struct ibv_device **l) { free(l); }
const char *ibv_get_device_name(struct ibv_device *d) { return d->name; }
const char *ibv_wc_status_str(enum ibv_wc_status s) { return s == IBV_WC_SUCCESS ? "success" : "fake error"; }

static int dev_index(struct ibv_context *c) { return ((struct fctx *)c)->idx; }

static void gid_of(int dev, int idx, union ibv_gid *g)
{
	memset(g, 0, sizeof(*g));
	if (idx < 2) { /* fe80::<dev> link-local: RoCE v1 (0) and v2 (1) */
		g->raw[0] = 0xfe;
		g->raw[1] = 0x80;
		g->raw[15] = (uint8_t)(dev + 1);
	} else { /* ::ffff:10.0.0.<dev+1>: RoCE v1 (2) and v2 (3) */
		g->raw[10] = g->raw[11] = 0xff;
		g->raw[12] = 10;
		g->raw[15] = (uint8_t)(dev + 1);
	}
}

static int post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
static int post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
static int poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);

struct ibv_context *ibv_open_device(struct ibv_device *d)
{
	struct fctx *f = calloc(1, sizeof(*f));

	f->c.device = d;
	f->idx = (int)(d - devs);
	f->c.ops.post_send = post_send;
	f->c.ops.post_recv = post_recv;
	f->c.ops.poll_cq = poll_cq;
	f->c.abi_compat = NULL;
	live_ctx++;
	return &f->c;
}

int ibv_close_device(struct ibv_context *c)
{
	struct fctx *f = (struct fctx *)c;

	if (f->pds || f->cqs)
		return EBUSY;
	free(f);
	live_ctx--;
	return 0;
}

int ibv_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
	(void)c;
	memset(a, 0, sizeof(*a));
	a->max_qp = 64;
	a->max_qp_wr = 1024;
	a->max_cqe = 65536;
	a->max_mr_size = 1ull << 40;
	a->max_sge = 4;
	a->phys_port_cnt = 1;
	return 0;
}

int ibv_query_port(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *compat)
{
	/* The header's inline ___ibv_query_port passes a full ibv_port_attr, zeroed. */
	struct ibv_port_attr *a = (struct ibv_port_attr *)compat;
	const char *down = getenv("FAKE_VERBS_DOWN");

	if (port != 1)
		return EINVAL;
	memset(a, 0, sizeof(*a));
	a->state = down && !strcmp(down, c->device->name) ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	a->active_mtu = IBV_MTU_1024;
	a->max_mtu = IBV_MTU_4096;
	a->max_msg_sz = 1u << 31;
	a->gid_tbl_len = GIDS;
	return 0;
}

int ibv_query_gid(struct ibv_context *c, uint8_t port, int idx, union ibv_gid *g)
{
	if (port != 1 || idx < 0 || idx >= GIDS)
		return -1;
	gid_of(dev_index(c), idx, g);
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t idx, struct ibv_gid_entry *e,
		      uint32_t flags, size_t size)
{
	(void)flags;
	if (port != 1 || idx >= GIDS || size < sizeof(*e))
		return EINVAL;
	gid_of(dev_index(c), (int)idx, &e->gid);
	e->gid_index = idx;
	e->port_num = port;
	e->gid_type = idx % 2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
	return 0;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *c)
{
	struct fpd *p = calloc(1, sizeof(*p));

	p->p.context = c;
	((struct fctx *)c)->pds++;
	live_pd++;
	return &p->p;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct fpd *p = (struct fpd *)pd;

	if (p->mrs || p->qps)
		return EBUSY;
	((struct fctx *)pd->context)->pds--;
	free(p);
	live_pd--;
	return 0;
}

static struct ibv_mr *new_mr(struct ibv_pd *pd, char *va, size_t len, uint64_t iova, int access)
{
	struct fmr *m;
	int i;

	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL; /* ibv_reg_mr(3): remote write/atomic need local write */
		return NULL;
	}
	for (i = 0; i < MAXOBJ && mrs[i]; i++)
		;
	if (i == MAXOBJ || !len) {
		errno = ENOMEM;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	m->m.context = pd->context;
	m->m.pd = pd;
	m->m.addr = va;
	m->m.length = len;
	m->m.lkey = next_key++;
	m->m.rkey = next_key++ ^ 0x00a50000;
	m->iova = iova;
	m->access = access;
	m->va = va;
	mrs[i] = m;
	((struct fpd *)pd)->mrs++;
	live_mr++;
	return &m->m;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova,
				unsigned int access)
{
	if (!addr) {
		errno = EFAULT;
		return NULL;
	}
	return new_mr(pd, addr, len, iova, (int)access);
}

/* The bytes of a dma-buf are not reachable here: the MR gets a private shadow buffer. */
struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova,
				 int fd, int access)
{
	struct ibv_mr *m;
	char *shadow;

	(void)offset;
	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	shadow = calloc(1, len ? len : 1);
	m = new_mr(pd, shadow, len, iova, access);
	if (!m)
		free(shadow);
	else
		((struct fmr *)m)->access |= 1 << 30; /* marks the shadow for freeing */
	return m;
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct fmr *m = (struct fmr *)mr;

	for (int i = 0; i < MAXOBJ; i++)
		if (mrs[i] == m)
			mrs[i] = NULL;
	((struct fpd *)mr->pd)->mrs--;
	if (m->access & (1 << 30))
		free(m->va);
	free(m);
	live_mr--;
	return 0;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *c, int cqe, void *ctx, struct ibv_comp_channel *ch,
			     int vec)
{
	struct fcq *q;

	(void)ctx;
	(void)ch;
	(void)vec;
	if (cqe < 1 || cqe > 65536) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	q->c.context = c;
	q->c.cqe = cqe;
	q->cap = cqe;
	q->ring = calloc((size_t)cqe, sizeof(*q->ring));
	((struct fctx *)c)->cqs++;
	live_cq++;
	return &q->c;
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct fcq *q = (struct fcq *)cq;

	if (q->qps)
		return EBUSY;
	((struct fctx *)cq->context)->cqs--;
	free(q->ring);
	free(q);
	live_cq--;
	return 0;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	struct fqp *f;
	int i;

	if (a->qp_type != IBV_QPT_RC || !a->send_cq || !a->recv_cq || a->cap.max_send_wr < 1 ||
	    a->cap.max_send_wr > 1024 || a->cap.max_recv_wr > 1024) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < MAXOBJ && qps[i]; i++)
		;
	f = calloc(1, sizeof(*f));
	f->q.context = pd->context;
	f->q.pd = pd;
	f->q.send_cq = a->send_cq;
	f->q.recv_cq = a->recv_cq;
	f->q.qp_num = next_qpn++;
	f->q.state = IBV_QPS_RESET;
	f->q.qp_type = IBV_QPT_RC;
	/* Like rxe (drivers/infiniband/sw/rxe/rxe_queue.c): the send queue is a power of two minus one
	 * that holds what was asked; as seen on rxe, only ibv_query_qp reports what was granted. */
	f->max_send = 1;
	while (f->max_send < (int)a->cap.max_send_wr)
		f->max_send = f->max_send * 2 + 1;
	f->max_recv = (int)a->cap.max_recv_wr;
	f->max_inline = a->cap.max_inline_data > 256 ? 256 : (int)a->cap.max_inline_data;
	a->cap.max_inline_data = (uint32_t)f->max_inline;
	qps[i] = f;
	((struct fpd *)pd)->qps++;
	((struct fcq *)a->send_cq)->qps++;
	if (a->recv_cq != a->send_cq)
		((struct fcq *)a->recv_cq)->qps++;
	live_qp++;
	return &f->q;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init)
{
	struct fqp *f = (struct fqp *)qp;

	(void)mask;
	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = qp->state;
	attr->cap.max_send_wr = (uint32_t)f->max_send;
	attr->cap.max_recv_wr = (uint32_t)f->max_recv;
	attr->cap.max_inline_data = (uint32_t)f->max_inline;
	init->cap = attr->cap;
	return 0;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct fqp *f = (struct fqp *)qp;

	for (int i = 0; i < MAXOBJ; i++)
		if (qps[i] == f)
			qps[i] = NULL;
	((struct fpd *)qp->pd)->qps--;
	((struct fcq *)qp->send_cq)->qps--;
	if (qp->recv_cq != qp->send_cq)
		((struct fcq *)qp->recv_cq)->qps--;
	free(f);
	live_qp--;
	return 0;
}

/* ibv_modify_qp(3): the attributes each transition of an RC QP requires. */
int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct fqp *f = (struct fqp *)qp;
	const int init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	const int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	const int rts = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;

	if (!(mask & IBV_QP_STATE))
		return EINVAL;
	if (a->qp_state == IBV_QPS_ERR) {
		qp->state = IBV_QPS_ERR;
		return 0;
	}
	if (a->qp_state == IBV_QPS_INIT && qp->state == IBV_QPS_RESET && (mask & init) == init &&
	    a->port_num == 1) {
		f->access = (int)a->qp_access_flags;
		f->port = a->port_num;
	} else if (a->qp_state == IBV_QPS_RTR && qp->state == IBV_QPS_INIT && (mask & rtr) == rtr &&
		   a->path_mtu >= IBV_MTU_256 && a->path_mtu <= IBV_MTU_1024 &&
		   a->ah_attr.is_global && a->ah_attr.grh.sgid_index < GIDS && a->ah_attr.port_num == 1) {
		/* RoCE needs the GRH: without it an HCA cannot address the peer. */
		f->dest_qpn = a->dest_qp_num;
		f->dgid = a->ah_attr.grh.dgid;
	} else if (a->qp_state == IBV_QPS_RTS && qp->state == IBV_QPS_RTR && (mask & rts) == rts) {
		/* ok */
	} else {
		return EINVAL;
	}
	qp->state = a->qp_state;
	return 0;
}

static int push(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op,
		uint32_t len, uint32_t qpn, int retire, int with_imm, uint32_t imm)
{
	struct fcq *q = (struct fcq *)cq;
	struct ent *e;

	if (q->len == q->cap)
		return ENOSPC; /* a CQ overrun: the caller sized its CQ wrongly */
	e = &q->ring[(q->head + q->len) % q->cap];
	memset(e, 0, sizeof(*e));
	e->wc.wr_id = wr_id;
	e->wc.status = st;
	e->wc.opcode = op;
	e->wc.byte_len = len;
	e->wc.qp_num = qpn;
	e->wc.wc_flags = with_imm ? IBV_WC_WITH_IMM : 0;
	e->wc.imm_data = imm;
	e->qpn = qpn;
	e->retire = retire;
	q->len++;
	return 0;
}

static struct fqp *qp_by_num(uint32_t qpn)
{
	for (int i = 0; i < MAXOBJ; i++)
		if (qps[i] && qps[i]->q.qp_num == qpn)
			return qps[i];
	return NULL;
}

static struct fmr *mr_by(uint32_t key, int remote, struct ibv_pd *pd, uint64_t addr, uint64_t len)
{
	for (int i = 0; i < MAXOBJ; i++) {
		struct fmr *m = mrs[i];

		if (!m || (remote ? m->m.rkey : m->m.lkey) != key)
			continue;
		if (m->m.pd != pd || addr < m->iova || addr + len > m->iova + m->m.length)
			return NULL;
		return m;
	}
	return NULL;
}

static int post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fqp *f = (struct fqp *)qp;

	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_ERR) {
		*bad = wr;
		return EINVAL;
	}
	for (; wr; wr = wr->next) {
		enum ibv_wc_status st = IBV_WC_SUCCESS;
		uint32_t len = wr->num_sge ? wr->sg_list[0].length : 0;
		struct fqp *peer;
		struct fmr *l = NULL, *r;
		int imm = wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;

		if (f->outstanding + 1 > f->max_send) {
			*bad = wr;
			return ENOMEM;
		}
		if ((wr->send_flags & IBV_SEND_INLINE) && (int)len > f->max_inline) {
			*bad = wr;
			return EINVAL;
		}
		f->outstanding++;
		f->since++;
		if (qp->state == IBV_QPS_ERR) {
			push(qp->send_cq, wr->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE, 0, qp->qp_num,
			     f->since, 0, 0);
			f->since = 0;
			continue;
		}
		if (!(wr->send_flags & IBV_SEND_INLINE))
			l = mr_by(wr->sg_list[0].lkey, 0, qp->pd, wr->sg_list[0].addr, len);
		peer = qp_by_num(f->dest_qpn);
		if (!(wr->send_flags & IBV_SEND_INLINE) && !l)
			st = IBV_WC_LOC_PROT_ERR;
		else if (!peer || (peer->q.state != IBV_QPS_RTR && peer->q.state != IBV_QPS_RTS))
			st = IBV_WC_RETRY_EXC_ERR;
		else if (!(peer->access & IBV_ACCESS_REMOTE_WRITE) ||
			 !(r = mr_by(wr->wr.rdma.rkey, 1, peer->q.pd, wr->wr.rdma.remote_addr, len)) ||
			 !(r->access & IBV_ACCESS_REMOTE_WRITE))
			st = IBV_WC_REM_ACCESS_ERR;
		else if (imm && !peer->recvs)
			st = IBV_WC_RNR_RETRY_EXC_ERR;
		else {
			const char *src = (wr->send_flags & IBV_SEND_INLINE)
						  ? (const char *)(uintptr_t)wr->sg_list[0].addr
						  : l->va + (wr->sg_list[0].addr - l->iova);
			memcpy(r->va + (wr->wr.rdma.remote_addr - r->iova), src, len);
			if (imm) {
				uint64_t id = peer->recv_ids[peer->recv_head];

				peer->recv_head = (peer->recv_head + 1) % 1024;
				peer->recvs--;
				push(peer->q.recv_cq, id, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, len,
				     peer->q.qp_num, 0, 1, wr->imm_data);
			}
		}
		if (st != IBV_WC_SUCCESS) {
			push(qp->send_cq, wr->wr_id, st, IBV_WC_RDMA_WRITE, 0, qp->qp_num, f->since, 0, 0);
			f->since = 0;
			qp->state = IBV_QPS_ERR;
		} else if (wr->send_flags & IBV_SEND_SIGNALED) {
			if (push(qp->send_cq, wr->wr_id, st, IBV_WC_RDMA_WRITE, len, qp->qp_num, f->since,
				 0, 0)) {
				*bad = wr;
				return ENOSPC;
			}
			f->since = 0;
		}
	}
	return 0;
}

static int post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fqp *f = (struct fqp *)qp;

	for (; wr; wr = wr->next) {
		if (qp->state == IBV_QPS_RESET || f->recvs + 1 > f->max_recv) {
			*bad = wr;
			return qp->state == IBV_QPS_RESET ? EINVAL : ENOMEM;
		}
		if (qp->state == IBV_QPS_ERR)
			push(qp->recv_cq, wr->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV_RDMA_WITH_IMM, 0,
			     qp->qp_num, 0, 0, 0);
		else
			f->recv_ids[(f->recv_head + f->recvs++) % 1024] = wr->wr_id;
	}
	return 0;
}

static int poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct fcq *q = (struct fcq *)cq;
	int got = 0;

	while (got < n && q->len) {
		struct ent *e = &q->ring[q->head];
		struct fqp *f = qp_by_num(e->qpn);

		if (f)
			f->outstanding -= e->retire;
		wc[got++] = e->wc;
		q->head = (q->head + 1) % q->cap;
		q->len--;
	}
	return got;
}
