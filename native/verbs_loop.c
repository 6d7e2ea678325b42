/*
 * verbs_loop.c - gdrdiag's native RDMA provider: libibverbs objects and the timed RDMA WRITE
 * loop, with no Python between two ibv_post_send calls.
 *
 * Loaded with ctypes by gdrdiag/hw/verbs_native.py (the only caller); built by
 * scripts/build_native.sh into build/native/libgdr_verbs.so.
 *
 * Conventions (the ctypes side relies on them):
 *   - Every gd_* call that can fail returns 0 or a positive errno value and writes a one-line
 *     message into the caller's buffer (err, errlen). Nothing here exits, aborts or prints.
 *   - Objects are returned as opaque pointers (the ibv_* objects themselves, or small structs
 *     around them); the caller releases each with the matching gd_* call, children first.
 *   - Every function releases what it allocated on each failure path before returning.
 *
 * Return-value rules of libibverbs this file depends on (rdma-core man pages):
 *   - ibv_post_send / ibv_post_recv / ibv_modify_qp / ibv_query_port / ibv_query_device /
 *     ibv_destroy_* / ibv_dereg_mr return 0 or the errno value itself (not -1);
 *     ibv_post_send(3): "return value of errno on failure".
 *   - ibv_open_device / ibv_alloc_pd / ibv_reg_mr / ibv_create_cq / ibv_create_qp return NULL
 *     and set errno.
 *   - ibv_poll_cq returns the number of completions, or a negative value on error.
 *   - ibv_get_device_list returns NULL and sets errno (ENOSYS: the kernel has no RDMA support).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#define GD_ABI_VERSION 2

/* Our own codes, above every errno value. */
#define GD_ECOMPLETION 1001 /* a work completion carried an error status (see result->bad_wc) */
#define GD_ETIMEDOUT 1002   /* no completion for timeout_ns */
#define GD_ESTOPPED 1003    /* the caller set *stop (Ctrl-C); outstanding WRs were drained */

#define GD_F_SIGNALED 1u
#define GD_F_IMM 2u

#define GD_LOOP_TIME_CALLS 1u /* time every post and poll call (adds ~2 clock reads per call) */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static inline uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int gd_abi_version(void)
{
	return GD_ABI_VERSION;
}

/* ------------------------------------------------------------------------------------------ */
/* devices                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/*
 * Device names, comma separated, into names[len]. ENODEV when libibverbs lists none; the errno
 * of ibv_get_device_list when it cannot list at all (ENOSYS: no RDMA support in the kernel).
 */
int gd_list_devices(char *names, size_t len, int *count, char *err, size_t errlen)
{
	struct ibv_device **list;
	int n = 0, i;
	size_t used = 0;

	if (!names || !len || !count) {
		set_err(err, errlen, "gd_list_devices: null argument");
		return EINVAL;
	}
	names[0] = '\0';
	*count = 0;
	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list) {
		int e = errno ? errno : ENODEV;

		set_err(err, errlen, "ibv_get_device_list failed: %s", strerror(e));
		return e;
	}
	for (i = 0; i < n; i++) {
		const char *nm = ibv_get_device_name(list[i]);
		int w = snprintf(names + used, len - used, "%s%s", i ? "," : "", nm ? nm : "?");

		if (w < 0 || (size_t)w >= len - used)
			break; /* truncated list: the names that fit are complete */
		used += (size_t)w;
	}
	*count = n;
	ibv_free_device_list(list);
	if (n == 0) {
		set_err(err, errlen, "libibverbs lists no RDMA devices");
		return ENODEV;
	}
	return 0;
}

/* What Python needs about the opened device and port (filled by gd_open). */
struct gd_dev_info {
	char name[64];
	uint32_t port;
	uint32_t phys_port_cnt;
	uint32_t state;       /* enum ibv_port_state */
	uint32_t lid;
	uint32_t link_layer;  /* IBV_LINK_LAYER_* */
	uint32_t active_mtu;  /* enum ibv_mtu (1..5) */
	uint32_t max_msg_sz;
	uint32_t gid_tbl_len;
	int32_t gid_index;
	uint32_t gid_type;    /* enum ibv_gid_type of the chosen GID (IB, RoCE v1, RoCE v2) */
	uint8_t gid[16];
	uint32_t max_qp;
	uint32_t max_qp_wr;
	uint32_t max_cqe;
	uint32_t max_sge;
	uint64_t max_mr_size;
};

struct gd_dev {
	struct ibv_context *ctx;
	uint8_t port;
};

static int gid_is_zero(const union ibv_gid *g)
{
	static const uint8_t zero[16];

	return memcmp(g->raw, zero, sizeof(zero)) == 0;
}

/* ::ffff:a.b.c.d - the RoCE v2 GID of an IPv4 address (RFC 4291 sec. 2.5.5.2). */
static int gid_is_v4_mapped(const union ibv_gid *g)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(g->raw, prefix, sizeof(prefix)) == 0;
}

/*
 * The GID index rules of the pyverbs provider (gdrdiag/hw/verbs.py, PyverbsDevice._pick_gid):
 * a requested index is checked against the table; on InfiniBand index 0 (the port GID); on
 * Ethernet (RoCE) the first RoCE v2 GID holding an IPv4-mapped address, else the first non-zero
 * GID. ibv_query_gid_ex (rdma-core v36+) gives the GID type with the entry.
 */
static int pick_gid(struct ibv_context *ctx, uint8_t port, const struct ibv_port_attr *pa,
		    int requested, struct gd_dev_info *info, char *err, size_t errlen)
{
	int tbl = pa->gid_tbl_len, idx, best = -1, rc;
	struct ibv_gid_entry ent;
	union ibv_gid gid;

	if (requested >= 0) {
		if (requested >= (tbl > 0 ? tbl : 1)) {
			set_err(err, errlen, "GID index %d out of range (port table has %d)", requested, tbl);
			return ERANGE;
		}
		best = requested;
	} else if (pa->link_layer != IBV_LINK_LAYER_ETHERNET) {
		best = 0;
	} else {
		for (idx = 0; idx < tbl; idx++) {
			if (ibv_query_gid(ctx, port, idx, &gid) || gid_is_zero(&gid))
				continue;
			memset(&ent, 0, sizeof(ent));
			if (ibv_query_gid_ex(ctx, port, idx, &ent, 0) == 0 &&
			    ent.gid_type == IBV_GID_TYPE_ROCE_V2 && gid_is_v4_mapped(&gid)) {
				best = idx;
				break;
			}
			if (best < 0)
				best = idx;
		}
		if (best < 0) {
			set_err(err, errlen,
				"port %u of %s has no usable GID (no IP address on the RoCE netdev?)",
				port, info->name);
			return ENOENT;
		}
	}
	rc = ibv_query_gid(ctx, port, best, &gid);
	if (rc) {
		set_err(err, errlen, "ibv_query_gid(port %u, index %d) failed: %s", port, best,
			strerror(rc > 0 ? rc : errno));
		return rc > 0 ? rc : (errno ? errno : EIO);
	}
	memcpy(info->gid, gid.raw, 16);
	info->gid_index = best;
	memset(&ent, 0, sizeof(ent));
	info->gid_type = ibv_query_gid_ex(ctx, port, best, &ent, 0) == 0 ? ent.gid_type
									 : IBV_GID_TYPE_IB;
	return 0;
}

/* ibv_open_device; on failure *rc is its errno and the message says which device. */
static struct ibv_context *open_by_device(struct ibv_device *d, int *rc, char *err, size_t errlen)
{
	struct ibv_context *ctx;

	errno = 0;
	ctx = ibv_open_device(d);
	if (!ctx) {
		*rc = errno ? errno : EIO; /* read before anything else can change errno */
		set_err(err, errlen, "ibv_open_device(%s) failed: %s", ibv_get_device_name(d),
			strerror(*rc));
	}
	return ctx;
}

/*
 * Open device `name` (NULL or "": the first whose `port` is ACTIVE), query it and pick the GID.
 * On success *out is a struct gd_dev (release with gd_close) and *info is filled.
 */
int gd_open(const char *name, int port, int gid_index, struct gd_dev_info *info, void **out,
	    char *err, size_t errlen)
{
	struct ibv_device **list = NULL;
	struct ibv_context *ctx = NULL;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct gd_dev *dev = NULL;
	int n = 0, i, rc = 0;

	if (!info || !out) {
		set_err(err, errlen, "gd_open: null argument");
		return EINVAL;
	}
	*out = NULL;
	memset(info, 0, sizeof(*info));
	if (port < 1 || port > 255) {
		set_err(err, errlen, "port %d out of range 1..255", port);
		return EINVAL;
	}
	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list) {
		rc = errno ? errno : ENODEV;
		set_err(err, errlen, "ibv_get_device_list failed: %s", strerror(rc));
		return rc;
	}
	for (i = 0; i < n && !ctx; i++) {
		const char *nm = ibv_get_device_name(list[i]);

		if (name && *name) {
			if (strcmp(nm, name) != 0)
				continue;
			ctx = open_by_device(list[i], &rc, err, errlen);
			if (!ctx)
				goto out;
			continue;
		}
		/* First device with the port ACTIVE (the pyverbs provider's rule). */
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			continue;
		if (ibv_query_port(ctx, (uint8_t)port, &pa) || pa.state != IBV_PORT_ACTIVE) {
			ibv_close_device(ctx);
			ctx = NULL;
		}
	}
	if (!ctx) {
		if (!rc) {
			rc = ENODEV;
			if (name && *name)
				set_err(err, errlen, "RDMA device '%s' not found", name);
			else
				set_err(err, errlen, "no RDMA device has port %d ACTIVE (%d device(s))",
					port, n);
		}
		goto out;
	}
	snprintf(info->name, sizeof(info->name), "%s", ibv_get_device_name(ctx->device));
	rc = ibv_query_device(ctx, &da);
	if (rc) {
		set_err(err, errlen, "ibv_query_device(%s) failed: %s", info->name, strerror(rc));
		goto out;
	}
	if (port > da.phys_port_cnt) {
		rc = ERANGE;
		set_err(err, errlen, "%s has no port %d (ports 1..%u)", info->name, port,
			da.phys_port_cnt);
		goto out;
	}
	rc = ibv_query_port(ctx, (uint8_t)port, &pa);
	if (rc) {
		set_err(err, errlen, "ibv_query_port(%s, %d) failed: %s", info->name, port,
			strerror(rc));
		goto out;
	}
	info->port = (uint32_t)port;
	info->phys_port_cnt = da.phys_port_cnt;
	info->state = pa.state;
	info->lid = pa.lid;
	info->link_layer = pa.link_layer;
	info->active_mtu = pa.active_mtu;
	info->max_msg_sz = pa.max_msg_sz;
	info->gid_tbl_len = (uint32_t)pa.gid_tbl_len;
	info->max_qp = (uint32_t)da.max_qp;
	info->max_qp_wr = (uint32_t)da.max_qp_wr;
	info->max_cqe = (uint32_t)da.max_cqe;
	info->max_sge = (uint32_t)da.max_sge;
	info->max_mr_size = da.max_mr_size;
	if (pa.state != IBV_PORT_ACTIVE) {
		rc = ENETDOWN;
		set_err(err, errlen, "port %d of %s is not ACTIVE (state %d); check the cable/link",
			port, info->name, (int)pa.state);
		goto out;
	}
	rc = pick_gid(ctx, (uint8_t)port, &pa, gid_index, info, err, errlen);
	if (rc)
		goto out;
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		rc = ENOMEM;
		set_err(err, errlen, "out of memory");
		goto out;
	}
	dev->ctx = ctx;
	dev->port = (uint8_t)port;
	*out = dev;
	ctx = NULL; /* owned by dev now */
out:
	if (ctx)
		ibv_close_device(ctx);
	ibv_free_device_list(list);
	return rc;
}

int gd_close(void *handle, char *err, size_t errlen)
{
	struct gd_dev *dev = handle;
	int rc;

	if (!dev)
		return 0;
	rc = ibv_close_device(dev->ctx);
	free(dev);
	if (rc)
		set_err(err, errlen, "ibv_close_device failed: %s", strerror(rc > 0 ? rc : errno));
	return rc ? (rc > 0 ? rc : EIO) : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* PD, MR, CQ                                                                                 */
/* ------------------------------------------------------------------------------------------ */

int gd_alloc_pd(void *handle, void **out, char *err, size_t errlen)
{
	struct gd_dev *dev = handle;
	struct ibv_pd *pd;

	*out = NULL;
	pd = ibv_alloc_pd(dev->ctx);
	if (!pd) {
		set_err(err, errlen, "ibv_alloc_pd failed: %s", strerror(errno));
		return errno ? errno : EIO;
	}
	*out = pd;
	return 0;
}

int gd_dealloc_pd(void *pd, char *err, size_t errlen)
{
	int rc = pd ? ibv_dealloc_pd(pd) : 0;

	if (rc)
		set_err(err, errlen, "ibv_dealloc_pd failed: %s (objects still use it?)", strerror(rc));
	return rc;
}

/*
 * ibv_reg_mr with the caller's access flags, optional ones (IBV_ACCESS_RELAXED_ORDERING)
 * included. verbs.h turns ibv_reg_mr with a non-constant access mask into
 * ibv_reg_mr_iova2(pd, addr, len, addr, access): the path that knows optional flags and, per
 * ibv_reg_mr(3), drops them where the kernel/device cannot honour them, still registering.
 */
int gd_reg_mr(void *pd, uint64_t addr, uint64_t length, int access, void **out, uint32_t *lkey,
	      uint32_t *rkey, char *err, size_t errlen)
{
	struct ibv_mr *mr;

	*out = NULL;
	errno = 0;
	mr = ibv_reg_mr((struct ibv_pd *)pd, (void *)(uintptr_t)addr, (size_t)length,
			(unsigned int)access);
	if (!mr) {
		int e = errno ? errno : EIO;

		set_err(err, errlen, "ibv_reg_mr failed: %s", strerror(e));
		return e;
	}
	*lkey = mr->lkey;
	*rkey = mr->rkey;
	*out = mr;
	return 0;
}

/*
 * ibv_reg_dmabuf_mr(pd, offset, length, iova, fd, access) (rdma-core v34+, kernel 5.12+): the
 * MR covers [offset, offset+length) of the dma-buf and is addressed by the peer from `iova`.
 * gdrdiag passes iova == offset, as the pyverbs provider's DmaBufMR does.
 */
int gd_reg_dmabuf_mr(void *pd, uint64_t offset, uint64_t length, uint64_t iova, int fd,
		     int access, void **out, uint32_t *lkey, uint32_t *rkey, char *err,
		     size_t errlen)
{
	struct ibv_mr *mr;

	*out = NULL;
	errno = 0;
	mr = ibv_reg_dmabuf_mr((struct ibv_pd *)pd, offset, (size_t)length, iova, fd, access);
	if (!mr) {
		int e = errno ? errno : EIO;

		set_err(err, errlen, "ibv_reg_dmabuf_mr failed: %s", strerror(e));
		return e;
	}
	*lkey = mr->lkey;
	*rkey = mr->rkey;
	*out = mr;
	return 0;
}

int gd_dereg_mr(void *mr, char *err, size_t errlen)
{
	int rc = mr ? ibv_dereg_mr(mr) : 0;

	if (rc)
		set_err(err, errlen, "ibv_dereg_mr failed: %s", strerror(rc));
	return rc;
}

int gd_create_cq(void *handle, int depth, void **out, char *err, size_t errlen)
{
	struct gd_dev *dev = handle;
	struct ibv_cq *cq;

	*out = NULL;
	if (depth < 1) {
		set_err(err, errlen, "CQ depth %d must be >= 1", depth);
		return EINVAL;
	}
	cq = ibv_create_cq(dev->ctx, depth, NULL, NULL, 0);
	if (!cq) {
		set_err(err, errlen, "ibv_create_cq(depth %d) failed: %s", depth, strerror(errno));
		return errno ? errno : EIO;
	}
	*out = cq;
	return 0;
}

int gd_destroy_cq(void *cq, char *err, size_t errlen)
{
	int rc = cq ? ibv_destroy_cq(cq) : 0;

	if (rc)
		set_err(err, errlen, "ibv_destroy_cq failed: %s (QPs still use it?)", strerror(rc));
	return rc;
}

/* One work completion, flattened for ctypes. imm is in host order (ibv_wc.imm_data is big endian). */
struct gd_wc {
	uint64_t wr_id;
	uint32_t status;
	uint32_t opcode;
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t imm;
	uint32_t wc_flags;
	uint32_t vendor_err;
	uint32_t pad;
};

static void flatten_wc(const struct ibv_wc *w, struct gd_wc *o)
{
	o->wr_id = w->wr_id;
	o->status = w->status;
	o->opcode = w->opcode;
	o->byte_len = w->byte_len;
	o->qp_num = w->qp_num;
	/* ibv_poll_cq(3): imm_data is valid with IBV_WC_WITH_IMM and is in network byte order. */
	o->imm = (w->wc_flags & IBV_WC_WITH_IMM) ? ntohl(w->imm_data) : 0;
	o->wc_flags = w->wc_flags;
	o->vendor_err = w->vendor_err;
	o->pad = 0;
}

int gd_poll_cq(void *cq, int max, struct gd_wc *out, int *got, char *err, size_t errlen)
{
	struct ibv_wc wc[64];
	int n, i;

	*got = 0;
	if (max > 64)
		max = 64;
	n = ibv_poll_cq((struct ibv_cq *)cq, max, wc);
	if (n < 0) {
		set_err(err, errlen, "ibv_poll_cq failed (%d)", n);
		return EIO;
	}
	for (i = 0; i < n; i++)
		flatten_wc(&wc[i], &out[i]);
	*got = n;
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* RC QPs                                                                                     */
/* ------------------------------------------------------------------------------------------ */

int gd_create_qp(void *pd, void *scq, void *rcq, uint32_t max_send_wr, uint32_t max_recv_wr,
		 uint32_t max_inline, void **out, uint32_t *qp_num, uint32_t *inline_granted,
		 uint32_t *send_granted, char *err, size_t errlen)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	*out = NULL;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = scq;
	ia.recv_cq = rcq ? rcq : scq;
	ia.qp_type = IBV_QPT_RC;
	ia.sq_sig_all = 0; /* selective signalling: only WRs with IBV_SEND_SIGNALED complete */
	ia.cap.max_send_wr = max_send_wr;
	ia.cap.max_recv_wr = max_recv_wr;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = max_inline;
	qp = ibv_create_qp((struct ibv_pd *)pd, &ia);
	if (!qp) {
		set_err(err, errlen, "ibv_create_qp(RC, max_send_wr %u, max_inline %u) failed: %s",
			max_send_wr, max_inline, strerror(errno));
		return errno ? errno : EIO;
	}
	/* ibv_create_qp(3): cap is updated with the values actually granted. */
	*inline_granted = ia.cap.max_inline_data;
	/* The send queue may hold more than asked: rxe makes its queues a power of two minus one,
	 * so 16 becomes 31 (drivers/infiniband/sw/rxe/rxe_queue.c), and ibv_create_qp's cap does not
	 * always say so; ibv_query_qp(IBV_QP_CAP) reports what the QP holds (seen on rxe in the lab). */
	*send_granted = ia.cap.max_send_wr;
	{
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qi;

		memset(&qa, 0, sizeof(qa));
		memset(&qi, 0, sizeof(qi));
		if (ibv_query_qp(qp, &qa, IBV_QP_CAP, &qi) == 0 && qa.cap.max_send_wr > *send_granted)
			*send_granted = qa.cap.max_send_wr;
	}
	*qp_num = qp->qp_num;
	*out = qp;
	return 0;
}

int gd_destroy_qp(void *qp, char *err, size_t errlen)
{
	int rc = qp ? ibv_destroy_qp(qp) : 0;

	if (rc)
		set_err(err, errlen, "ibv_destroy_qp failed: %s", strerror(rc));
	return rc;
}

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *what, char *err,
		  size_t errlen)
{
	int rc = ibv_modify_qp(qp, a, mask);

	if (rc)
		set_err(err, errlen, "ibv_modify_qp(%s) on QP %u failed: %s", what, qp->qp_num,
			strerror(rc > 0 ? rc : errno));
	return rc > 0 ? rc : (rc ? EIO : 0);
}

/* RESET -> INIT with the attributes the pyverbs provider uses (pkey 0, the responder's access). */
int gd_qp_init(void *qp, int port, int access, char *err, size_t errlen)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = (uint8_t)port;
	a.qp_access_flags = (unsigned int)access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC);
	return modify(qp, &a,
		      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
		      "RESET->INIT", err, errlen);
}

/*
 * INIT -> RTR: path MTU, peer QPN and PSN, 1 outstanding RDMA read/atomic, RNR timer 12
 * (0.64 ms, IB spec table 45), and the address vector. dgid NULL: no GRH (InfiniBand LID
 * routing); RoCE always needs the GRH (the peer's GID, our sgid_index). hop_limit 1 as the
 * pyverbs GlobalRoute default.
 */
int gd_qp_rtr(void *qp, int port, int sgid_index, uint32_t mtu_enum, uint32_t dest_qpn,
	      uint32_t rq_psn, uint32_t dlid, const uint8_t *dgid, char *err, size_t errlen)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = (enum ibv_mtu)mtu_enum;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = (uint8_t)port;
	a.ah_attr.dlid = (uint16_t)dlid;
	a.ah_attr.sl = 0;
	a.ah_attr.src_path_bits = 0;
	if (dgid) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, dgid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)sgid_index;
		a.ah_attr.grh.hop_limit = 1;
		a.ah_attr.grh.traffic_class = 0;
		a.ah_attr.grh.flow_label = 0;
	}
	return modify(qp, &a,
		      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
		      "INIT->RTR", err, errlen);
}

/* RTR -> RTS: local ACK timeout 14 (4.096 us * 2^14 = 67 ms), 7 retries, 7 RNR retries (infinite). */
int gd_qp_rts(void *qp, uint32_t sq_psn, char *err, size_t errlen)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = 1;
	return modify(qp, &a,
		      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
		      "RTR->RTS", err, errlen);
}

int gd_qp_err(void *qp, char *err, size_t errlen)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	return modify(qp, &a, IBV_QP_STATE, "->ERR", err, errlen);
}

/* ------------------------------------------------------------------------------------------ */
/* post lists                                                                                 */
/* ------------------------------------------------------------------------------------------ */

/* One RDMA WRITE as Python describes it. */
struct gd_wr {
	uint64_t wr_id;
	uint64_t local_addr;
	uint64_t remote_addr;
	uint32_t length;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t flags; /* GD_F_SIGNALED | GD_F_IMM */
	uint32_t imm;   /* host order */
	uint32_t pad;
};

/* A prepared chain of ibv_send_wr (built once, posted many times, as perftest does). */
struct gd_wrlist {
	int n;
	uint64_t bytes;
	struct ibv_send_wr *wr;
	struct ibv_sge *sge;
};

/*
 * Build a linked ibv_send_wr chain. WRs of at most `inline_max` bytes (0: none) are posted with
 * IBV_SEND_INLINE: ibv_post_send(3) copies their payload into the WQE, so the lkey is not used.
 */
int gd_wrlist_create(const struct gd_wr *d, int n, uint32_t inline_max, void **out, char *err,
		     size_t errlen)
{
	struct gd_wrlist *l;
	int i;

	*out = NULL;
	if (n < 1) {
		set_err(err, errlen, "an empty post list");
		return EINVAL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		goto nomem;
	l->wr = calloc((size_t)n, sizeof(*l->wr));
	l->sge = calloc((size_t)n, sizeof(*l->sge));
	if (!l->wr || !l->sge)
		goto nomem;
	l->n = n;
	for (i = 0; i < n; i++) {
		struct ibv_send_wr *w = &l->wr[i];

		l->sge[i].addr = d[i].local_addr;
		l->sge[i].length = d[i].length;
		l->sge[i].lkey = d[i].lkey;
		w->wr_id = d[i].wr_id;
		w->next = i + 1 < n ? &l->wr[i + 1] : NULL;
		w->sg_list = &l->sge[i];
		w->num_sge = 1;
		w->opcode = (d[i].flags & GD_F_IMM) ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
		w->send_flags = (d[i].flags & GD_F_SIGNALED) ? IBV_SEND_SIGNALED : 0;
		if (inline_max && d[i].length <= inline_max)
			w->send_flags |= IBV_SEND_INLINE;
		/* ibv_post_send(3): imm_data is in network byte order. */
		if (d[i].flags & GD_F_IMM)
			w->imm_data = htonl(d[i].imm);
		w->wr.rdma.remote_addr = d[i].remote_addr;
		w->wr.rdma.rkey = d[i].rkey;
		l->bytes += d[i].length;
	}
	*out = l;
	return 0;
nomem:
	if (l) {
		free(l->wr);
		free(l->sge);
		free(l);
	}
	set_err(err, errlen, "out of memory for a post list of %d WRs", n);
	return ENOMEM;
}

void gd_wrlist_free(void *list)
{
	struct gd_wrlist *l = list;

	if (!l)
		return;
	free(l->wr);
	free(l->sge);
	free(l);
}

/* One ibv_post_send of a prepared list; *bad_index = position of the WR that failed (or -1). */
int gd_post(void *qp, void *list, int *bad_index, char *err, size_t errlen)
{
	struct gd_wrlist *l = list;
	struct ibv_send_wr *bad = NULL;
	int rc;

	*bad_index = -1;
	rc = ibv_post_send((struct ibv_qp *)qp, l->wr, &bad);
	if (rc) {
		if (bad)
			*bad_index = (int)(bad - l->wr);
		set_err(err, errlen, "ibv_post_send on QP %u failed at WR %d of %d: %s",
			((struct ibv_qp *)qp)->qp_num, *bad_index, l->n, strerror(rc));
	}
	return rc;
}

/* `count` receives with one SGE of length 0 (consumed by RDMA WRITE_WITH_IMM). */
int gd_post_recv(void *qp, int count, uint64_t addr, uint32_t lkey, uint64_t wr_id, char *err,
		 size_t errlen)
{
	struct ibv_sge sge = {.addr = addr, .length = 0, .lkey = lkey};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .next = NULL, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad = NULL;
	int i, rc;

	for (i = 0; i < count; i++) {
		rc = ibv_post_recv((struct ibv_qp *)qp, &wr, &bad);
		if (rc) {
			set_err(err, errlen, "ibv_post_recv %d of %d failed: %s", i + 1, count,
				strerror(rc));
			return rc;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the timed loop                                                                             */
/* ------------------------------------------------------------------------------------------ */

/*
 * One requester QP and the post lists it cycles through: plain[k] and signaled[k] hold the same
 * WRs; in signaled[k] the last one is signalled. Lists may differ in length (a last partial list).
 */
struct gd_lane {
	void *qp;
	void **plain;
	void **signaled;
	uint32_t nlists;
	uint32_t pad;
};

struct gd_bw_params {
	uint32_t tx_depth;
	uint32_t signal_every;  /* one list in N is posted signalled */
	uint64_t lists_total;   /* per lane; 0: run for duration_ns */
	uint64_t duration_ns;
	uint64_t timeout_ns;    /* no completion for this long: GD_ETIMEDOUT */
	uint32_t flags;         /* GD_LOOP_TIME_CALLS */
	uint32_t n_resp;        /* responder QPs that need receives re-posted (WRITE_WITH_IMM) */
	void *recv_cq;
	void **resp_qps;
	uint32_t *resp_qpns;
	uint64_t recv_addr;
	uint32_t recv_lkey;
	uint32_t pad;
};

/* One timestamp per retired signalled list: when it was polled, WRs completed so far (all lanes). */
struct gd_sample {
	uint64_t t_ns;
	uint64_t completed;
};

struct gd_bw_result {
	uint64_t messages;     /* WRs completed */
	uint64_t bytes;
	uint64_t posts;        /* ibv_post_send calls */
	uint64_t t_start_ns;   /* CLOCK_MONOTONIC before the first post */
	uint64_t t_end_ns;     /* after the last completion */
	uint64_t cpu_ns;       /* CLOCK_THREAD_CPUTIME_ID of the calling thread */
	uint64_t post_ns;      /* time inside ibv_post_send (GD_LOOP_TIME_CALLS) */
	uint64_t poll_ns;      /* time inside ibv_poll_cq, send CQ (GD_LOOP_TIME_CALLS) */
	uint64_t polls;
	uint64_t empty_polls;
	uint64_t recv_reposted;
	uint64_t n_samples;
	uint64_t samples_dropped;
	uint64_t outstanding;  /* WRs still outstanding when the loop returned */
	struct gd_wc bad_wc;   /* the failing completion (GD_ECOMPLETION) */
	int32_t bad_wc_is_recv;
	int32_t pad;
};

/*
 * The provider operations the loop calls. The real ones are libibverbs' inline dispatchers
 * (verbs.h: ibv_post_send -> qp->context->ops.post_send); the null ones (below) complete every
 * signalled WR at once, to measure the loop itself. run_loop is always inlined with a constant
 * ops table, so the real loop calls ibv_post_send/ibv_poll_cq directly.
 */
struct loop_ops {
	int (*post)(void *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
	int (*poll)(void *cq, int n, struct ibv_wc *wc);
	int (*post_recv)(void *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
};

static int real_post(void *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	return ibv_post_send((struct ibv_qp *)qp, wr, bad);
}

static int real_poll(void *cq, int n, struct ibv_wc *wc)
{
	return ibv_poll_cq((struct ibv_cq *)cq, n, wc);
}

static int real_post_recv(void *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return ibv_post_recv((struct ibv_qp *)qp, wr, bad);
}

static const struct loop_ops REAL_OPS = {real_post, real_poll, real_post_recv};

/* Per-lane loop state; `pending` is a ring of (WRs, bytes) per signalled list not yet polled. */
struct lane_state {
	struct gd_wrlist **plain, **sig;
	uint32_t nlists, max_len;
	uint64_t posted_lists;
	uint64_t outstanding;
	uint64_t since_wrs, since_bytes;
	uint64_t *pend_wrs, *pend_bytes;
	uint32_t pend_head, pend_len, pend_cap;
	int done_posting;
};

#define POLL_BATCH 64

static inline __attribute__((always_inline)) int
run_loop(const struct loop_ops *ops, const struct gd_lane *lanes, int nlanes, void *cq,
	 const struct gd_bw_params *p, struct gd_bw_result *r, struct gd_sample *samples,
	 uint64_t samples_cap, volatile int32_t *stop, char *err, size_t errlen)
{
	const int timed = (p->flags & GD_LOOP_TIME_CALLS) != 0;
	struct lane_state *ls;
	struct ibv_wc wc[POLL_BATCH];
	uint64_t now, last_progress, deadline = 0, cpu0, t = 0;
	int active, i, k, n, rc = 0;

	memset(r, 0, sizeof(*r));
	if (nlanes < 1 || !lanes || !cq || p->tx_depth < 1 || p->signal_every < 1 ||
	    (p->lists_total == 0 && p->duration_ns == 0) || p->timeout_ns == 0) {
		set_err(err, errlen,
			"bad loop parameters (lanes %d, tx_depth %u, signal_every %u, lists %llu, "
			"duration %llu ns, timeout %llu ns)",
			nlanes, p->tx_depth, p->signal_every, (unsigned long long)p->lists_total,
			(unsigned long long)p->duration_ns, (unsigned long long)p->timeout_ns);
		return EINVAL;
	}
	if (p->n_resp && (!p->recv_cq || !p->resp_qps || !p->resp_qpns)) {
		set_err(err, errlen, "receive re-posting needs a CQ and the responder QPs");
		return EINVAL;
	}
	ls = calloc((size_t)nlanes, sizeof(*ls));
	if (!ls) {
		set_err(err, errlen, "out of memory");
		return ENOMEM;
	}
	for (i = 0; i < nlanes; i++) {
		uint32_t j, min_len = UINT32_MAX;

		ls[i].plain = (struct gd_wrlist **)lanes[i].plain;
		ls[i].sig = (struct gd_wrlist **)lanes[i].signaled;
		ls[i].nlists = lanes[i].nlists;
		if (!lanes[i].qp || !ls[i].plain || !ls[i].sig || !ls[i].nlists) {
			set_err(err, errlen, "lane %d: missing QP or post lists", i);
			rc = EINVAL;
			goto out;
		}
		for (j = 0; j < ls[i].nlists; j++) {
			struct gd_wrlist *a = ls[i].plain[j], *b = ls[i].sig[j];

			if (!a || !b || a->n != b->n) {
				set_err(err, errlen, "lane %d list %u: missing, or plain/signalled differ", i, j);
				rc = EINVAL;
				goto out;
			}
			if ((uint64_t)a->n > p->tx_depth) {
				set_err(err, errlen,
					"lane %d: a post list of %d WRs does not fit the TX depth %u", i,
					a->n, p->tx_depth);
				rc = EINVAL;
				goto out;
			}
			if ((uint32_t)a->n < min_len)
				min_len = (uint32_t)a->n;
			if ((uint32_t)a->n > ls[i].max_len)
				ls[i].max_len = (uint32_t)a->n;
		}
		/* Only a signalled list retires WRs: if signal_every lists do not fit the send
		 * queue, it fills before any completion can come and the loop would stall. */
		if ((uint64_t)p->signal_every * ls[i].max_len > p->tx_depth) {
			set_err(err, errlen,
				"lane %d: one signalled list in %u of up to %u WRs does not fit the TX depth "
				"%u (the send queue would fill before any completion)",
				i, p->signal_every, ls[i].max_len, p->tx_depth);
			rc = EINVAL;
			goto out;
		}
		/* At most tx_depth / (shortest list) signalled lists are outstanding, plus one. */
		ls[i].pend_cap = p->tx_depth / min_len + 2;
		ls[i].pend_wrs = calloc(ls[i].pend_cap, sizeof(uint64_t));
		ls[i].pend_bytes = calloc(ls[i].pend_cap, sizeof(uint64_t));
		if (!ls[i].pend_wrs || !ls[i].pend_bytes) {
			set_err(err, errlen, "out of memory");
			rc = ENOMEM;
			goto out;
		}
	}

	cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	now = now_ns(CLOCK_MONOTONIC);
	r->t_start_ns = now;
	last_progress = now;
	if (p->lists_total == 0)
		deadline = now + p->duration_ns;
	active = nlanes;
	while (active > 0) {
		int stopping = stop && *stop;

		/* 1. Post: every lane fills its send queue up to tx_depth WRs. */
		for (i = 0; i < nlanes; i++) {
			struct lane_state *s = &ls[i];

			if (s->done_posting)
				continue;
			if (stopping) {
				/* Ctrl-C: post nothing more; the signalled lists already posted
				 * retire everything posted before them (selective signalling). An
				 * unsignalled tail is flushed when the caller destroys the QP. */
				s->done_posting = 1;
				continue;
			}
			for (;;) {
				uint32_t li = (uint32_t)(s->posted_lists % s->nlists);
				uint64_t len = (uint64_t)s->plain[li]->n;
				uint64_t nth = s->posted_lists + 1;
				int last, sig;
				struct gd_wrlist *l;
				struct ibv_send_wr *bad = NULL;

				if (s->outstanding + len > p->tx_depth)
					break;
				last = p->lists_total ? nth >= p->lists_total : now >= deadline;
				sig = last || nth % p->signal_every == 0;
				l = sig ? s->sig[li] : s->plain[li];

				if (timed)
					t = now_ns(CLOCK_MONOTONIC);
				rc = ops->post(lanes[i].qp, l->wr, &bad);
				if (timed)
					r->post_ns += now_ns(CLOCK_MONOTONIC) - t;
				if (rc) {
					set_err(err, errlen,
						"ibv_post_send on lane %d failed after %llu lists: %s%s",
						i, (unsigned long long)s->posted_lists, strerror(rc),
						rc == ENOMEM ? " (send queue full)" : "");
					goto done;
				}
				r->posts++;
				s->posted_lists = nth;
				s->outstanding += len;
				s->since_wrs += len;
				s->since_bytes += l->bytes;
				if (sig) {
					uint32_t slot = (s->pend_head + s->pend_len) % s->pend_cap;

					s->pend_wrs[slot] = s->since_wrs;
					s->pend_bytes[slot] = s->since_bytes;
					s->pend_len++;
					s->since_wrs = s->since_bytes = 0;
				}
				if (last) {
					s->done_posting = 1;
					break;
				}
			}
		}

		/* 2. Poll the send CQ once; one completion retires its lane's oldest signalled list. */
		if (timed)
			t = now_ns(CLOCK_MONOTONIC);
		n = ops->poll(cq, POLL_BATCH, wc);
		now = now_ns(CLOCK_MONOTONIC);
		if (timed)
			r->poll_ns += now - t;
		r->polls++;
		if (n < 0) {
			set_err(err, errlen, "ibv_poll_cq failed (%d)", n);
			rc = EIO;
			goto done;
		}
		if (n == 0) {
			r->empty_polls++;
			if (now - last_progress > p->timeout_ns) {
				rc = GD_ETIMEDOUT;
				goto done;
			}
		} else {
			last_progress = now;
		}
		for (k = 0; k < n; k++) {
			struct lane_state *s;

			if (wc[k].status != IBV_WC_SUCCESS) {
				flatten_wc(&wc[k], &r->bad_wc);
				set_err(err, errlen, "RDMA WRITE completed with status %d (%s)",
					wc[k].status, ibv_wc_status_str(wc[k].status));
				rc = GD_ECOMPLETION;
				goto done;
			}
			if (wc[k].wr_id >= (uint64_t)nlanes) {
				set_err(err, errlen, "completion with unknown wr_id %llu",
					(unsigned long long)wc[k].wr_id);
				rc = EPROTO;
				goto done;
			}
			s = &ls[wc[k].wr_id];
			if (!s->pend_len) {
				set_err(err, errlen, "lane %llu: completion without a signalled list",
					(unsigned long long)wc[k].wr_id);
				rc = EPROTO;
				goto done;
			}
			s->outstanding -= s->pend_wrs[s->pend_head];
			r->messages += s->pend_wrs[s->pend_head];
			r->bytes += s->pend_bytes[s->pend_head];
			s->pend_head = (s->pend_head + 1) % s->pend_cap;
			s->pend_len--;
			if (samples && r->n_samples < samples_cap) {
				samples[r->n_samples].t_ns = now;
				samples[r->n_samples].completed = r->messages;
				r->n_samples++;
			} else {
				r->samples_dropped++;
			}
		}

		/* 3. WRITE_WITH_IMM: re-post one receive per consumed one, until the responder's CQ
		 * is empty (a round can consume more than one poll batch; a responder short of
		 * receives answers RNR NAKs, which stalls or fails the requester). */
		while (p->n_resp) {
			struct ibv_sge sge = {.addr = p->recv_addr, .length = 0, .lkey = p->recv_lkey};
			struct ibv_recv_wr rwr = {.wr_id = 0, .next = NULL, .sg_list = &sge, .num_sge = 1};
			struct ibv_recv_wr *rbad = NULL;
			int m = ops->poll(p->recv_cq, POLL_BATCH, wc);
			uint32_t q;

			if (m < 0) {
				set_err(err, errlen, "ibv_poll_cq on the receive CQ failed (%d)", m);
				rc = EIO;
				goto done;
			}
			if (m == 0)
				break;
			for (k = 0; k < m; k++) {
				if (wc[k].status != IBV_WC_SUCCESS) {
					flatten_wc(&wc[k], &r->bad_wc);
					r->bad_wc_is_recv = 1;
					set_err(err, errlen, "receive of WRITE_WITH_IMM completed with %s",
						ibv_wc_status_str(wc[k].status));
					rc = GD_ECOMPLETION;
					goto done;
				}
				for (q = 0; q < p->n_resp && p->resp_qpns[q] != wc[k].qp_num; q++)
					;
				if (q == p->n_resp) {
					set_err(err, errlen, "receive completion on unknown QP %u",
						wc[k].qp_num);
					rc = EPROTO;
					goto done;
				}
				rc = ops->post_recv(p->resp_qps[q], &rwr, &rbad);
				if (rc) {
					set_err(err, errlen, "ibv_post_recv failed: %s", strerror(rc));
					goto done;
				}
				r->recv_reposted++;
			}
		}

		active = 0;
		for (i = 0; i < nlanes; i++)
			if (!(ls[i].done_posting && (ls[i].outstanding == 0 || ls[i].pend_len == 0)))
				active++;
	}
	if (stop && *stop)
		rc = GD_ESTOPPED;
done:
	r->t_end_ns = now_ns(CLOCK_MONOTONIC);
	r->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	for (i = 0; i < nlanes; i++)
		r->outstanding += ls[i].outstanding;
	if (rc == GD_ETIMEDOUT)
		set_err(err, errlen,
			"no RDMA completion for %.3g s with %llu WRs outstanding (peer gone, link "
			"down, or wrong GID/QP number)",
			(double)p->timeout_ns / 1e9, (unsigned long long)r->outstanding);
	else if (rc == GD_ESTOPPED)
		set_err(err, errlen, "stopped by the caller after %llu WRs",
			(unsigned long long)r->messages);
out:
	for (i = 0; i < nlanes; i++) {
		free(ls[i].pend_wrs);
		free(ls[i].pend_bytes);
	}
	free(ls);
	return rc;
}

/*
 * sizeof of each struct shared with Python (0 dev_info, 1 wc, 2 wr, 3 lane, 4 bw_params,
 * 5 sample, 6 bw_result): verbs_native.py refuses a library whose layout differs from its own.
 */
size_t gd_struct_size(int which)
{
	switch (which) {
	case 0: return sizeof(struct gd_dev_info);
	case 1: return sizeof(struct gd_wc);
	case 2: return sizeof(struct gd_wr);
	case 3: return sizeof(struct gd_lane);
	case 4: return sizeof(struct gd_bw_params);
	case 5: return sizeof(struct gd_sample);
	case 6: return sizeof(struct gd_bw_result);
	default: return 0;
	}
}

/*
 * The ib_write_bw-style loop (same rules as gdrdiag/bench/rdma_loop.py:run_bw): each lane keeps
 * up to tx_depth WRs outstanding, posting its prepared list; one list in signal_every is
 * signalled and its completion retires every WR posted before it on that QP; wr_id of the
 * signalled WR is the lane index. The clock runs from the first post to the last completion.
 * A lane is finished when it posted everything and no signalled list is pending (the last list
 * is always signalled, so that is "all completed" except after a stop request).
 */
int gd_run_bw(const struct gd_lane *lanes, int nlanes, void *cq, const struct gd_bw_params *p,
	      struct gd_bw_result *r, struct gd_sample *samples, uint64_t samples_cap,
	      volatile int32_t *stop, char *err, size_t errlen)
{
	return run_loop(&REAL_OPS, lanes, nlanes, cq, p, r, samples, samples_cap, stop, err, errlen);
}

/*
 * One signalled WRITE at a time; samples_ns[i] = post -> its completion polled (as
 * rdma_loop.run_latency). Returns GD_ECOMPLETION with *bad filled on an error status.
 */
int gd_run_latency(void *qp, void *cq, void *list, uint64_t iterations, uint64_t timeout_ns,
		   uint64_t *samples_ns, struct gd_bw_result *r, volatile int32_t *stop, char *err,
		   size_t errlen)
{
	struct gd_wrlist *l = list;
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc;
	uint64_t i, start, now, cpu0;
	int n, rc = 0;

	memset(r, 0, sizeof(*r));
	if (!l || l->n != 1 || !(l->wr[0].send_flags & IBV_SEND_SIGNALED) || !iterations) {
		set_err(err, errlen, "latency needs one signalled WR and iterations >= 1");
		return EINVAL;
	}
	cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	r->t_start_ns = now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < iterations; i++) {
		if (stop && *stop) {
			rc = GD_ESTOPPED;
			set_err(err, errlen, "stopped by the caller after %llu WRs",
				(unsigned long long)i);
			break;
		}
		start = now_ns(CLOCK_MONOTONIC);
		rc = ibv_post_send((struct ibv_qp *)qp, l->wr, &bad);
		if (rc) {
			set_err(err, errlen, "ibv_post_send failed: %s", strerror(rc));
			break;
		}
		r->posts++;
		do {
			n = ibv_poll_cq((struct ibv_cq *)cq, 1, &wc);
			now = now_ns(CLOCK_MONOTONIC);
			if (n == 0 && now - start > timeout_ns) {
				rc = GD_ETIMEDOUT;
				r->outstanding = 1;
				set_err(err, errlen,
					"no RDMA completion for %.3g s (peer gone or link down)",
					(double)timeout_ns / 1e9);
				goto out;
			}
		} while (n == 0);
		if (n < 0) {
			rc = EIO;
			set_err(err, errlen, "ibv_poll_cq failed (%d)", n);
			break;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			flatten_wc(&wc, &r->bad_wc);
			rc = GD_ECOMPLETION;
			set_err(err, errlen, "RDMA WRITE completed with %s", ibv_wc_status_str(wc.status));
			break;
		}
		samples_ns[i] = now - start;
		r->messages++;
		r->bytes += l->bytes;
	}
out:
	r->n_samples = r->messages;
	r->t_end_ns = now_ns(CLOCK_MONOTONIC);
	r->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* the null provider: the same loop with no verbs underneath (the loop's own cost)            */
/* ------------------------------------------------------------------------------------------ */

/*
 * A QP that "completes" every WR the moment it is posted: post walks the chain as a driver
 * does (reading each WR and its SGE) and queues a success completion for each signalled one;
 * poll hands them back. No device, no bytes moved: what remains is the loop's own work plus
 * walking the WR chain, the counterpart of the soft provider's no-copy mode in Python.
 */
struct null_cq {
	struct ibv_wc *ring;
	uint32_t cap, head, len;
};

struct null_qp {
	struct null_cq *cq;
	uint32_t qp_num;
	uint64_t touched; /* sum of SGE lengths, so the walk is not optimised away */
};

static int null_post(void *qpv, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct null_qp *qp = qpv;
	struct null_cq *cq = qp->cq;

	for (; wr; wr = wr->next) {
		qp->touched += wr->sg_list[0].length + wr->wr.rdma.rkey;
		if (wr->send_flags & IBV_SEND_SIGNALED) {
			struct ibv_wc *w;

			if (cq->len == cq->cap) {
				*bad = wr;
				return ENOMEM; /* a CQ overrun: the loop sized the CQ wrongly */
			}
			w = &cq->ring[(cq->head + cq->len) % cq->cap];
			memset(w, 0, sizeof(*w));
			w->wr_id = wr->wr_id;
			w->status = IBV_WC_SUCCESS;
			w->opcode = IBV_WC_RDMA_WRITE;
			w->qp_num = qp->qp_num;
			w->byte_len = wr->sg_list[0].length;
			cq->len++;
		}
	}
	return 0;
}

static int null_poll(void *cqv, int n, struct ibv_wc *wc)
{
	struct null_cq *cq = cqv;
	int got = 0;

	while (got < n && cq->len) {
		wc[got++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->cap;
		cq->len--;
	}
	return got;
}

static int null_post_recv(void *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)qp;
	(void)wr;
	(void)bad;
	return 0;
}

static const struct loop_ops NULL_OPS = {null_post, null_poll, null_post_recv};

/*
 * Run the loop on `nlanes` null QPs, each posting lists of `list_len` WRs of `size` bytes with
 * the given parameters (p->n_resp must be 0). Same result struct as gd_run_bw.
 */
int gd_null_loop(int nlanes, int list_len, uint32_t size, const struct gd_bw_params *p,
		 struct gd_bw_result *r, struct gd_sample *samples, uint64_t samples_cap,
		 volatile int32_t *stop, char *err, size_t errlen)
{
	struct null_cq cq = {0};
	struct null_qp *qps = NULL;
	struct gd_lane *lanes = NULL;
	void **lists = NULL;
	struct gd_wr *d = NULL;
	int i, j, rc = 0;

	memset(r, 0, sizeof(*r));
	if (nlanes < 1 || nlanes > 4096 || list_len < 1 || p->n_resp) {
		set_err(err, errlen, "null loop: need 1..4096 lanes, a post list >= 1, no receives");
		return EINVAL;
	}
	cq.cap = (uint32_t)nlanes * (p->tx_depth + 1u);
	cq.ring = calloc(cq.cap, sizeof(*cq.ring));
	qps = calloc((size_t)nlanes, sizeof(*qps));
	lanes = calloc((size_t)nlanes, sizeof(*lanes));
	lists = calloc(2 * (size_t)nlanes, sizeof(*lists));
	d = calloc((size_t)list_len, sizeof(*d));
	if (!cq.ring || !qps || !lanes || !lists || !d) {
		set_err(err, errlen, "out of memory");
		rc = ENOMEM;
		goto out;
	}
	for (i = 0; i < nlanes; i++) {
		qps[i].cq = &cq;
		qps[i].qp_num = 0x100u + (uint32_t)i;
		for (j = 0; j < list_len; j++) {
			d[j].wr_id = (uint64_t)i;
			d[j].local_addr = 0x10000u + (uint64_t)j * size;
			d[j].remote_addr = 0x20000u + (uint64_t)j * size;
			d[j].length = size;
			d[j].lkey = 1;
			d[j].rkey = 2;
			d[j].flags = 0;
		}
		d[list_len - 1].flags = 0;
		rc = gd_wrlist_create(d, list_len, 0, &lists[2 * i], err, errlen);
		if (rc)
			goto out;
		d[list_len - 1].flags = GD_F_SIGNALED;
		rc = gd_wrlist_create(d, list_len, 0, &lists[2 * i + 1], err, errlen);
		if (rc)
			goto out;
		lanes[i].qp = &qps[i];
		lanes[i].plain = &lists[2 * i];
		lanes[i].signaled = &lists[2 * i + 1];
		lanes[i].nlists = 1;
	}
	rc = run_loop(&NULL_OPS, lanes, nlanes, &cq, p, r, samples, samples_cap, stop, err, errlen);
out:
	if (lists)
		for (i = 0; i < 2 * nlanes; i++)
			gd_wrlist_free(lists[i]);
	free(lists);
	free(lanes);
	free(qps);
	free(d);
	free(cq.ring);
	return rc;
}
