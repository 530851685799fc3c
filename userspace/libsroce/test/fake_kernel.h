/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A stand-in for the sroce kernel driver, living inside the test process.
 * It interposes the system calls libibverbs and libsroce make on the uverbs
 * device (open, stat, ioctl, write, mmap) and answers them the way the
 * kernel would, so the real libibverbs 44.0 and the real plugin run
 * unmodified on top of it.
 */
#ifndef SROCE_FAKE_KERNEL_H
#define SROCE_FAKE_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include <rdma/sroce-abi.h>

#define FK_MAX_OBJ	64
#define FK_MAX_LOG	256

struct fk_ring {
	int memfd;
	void *map;		/* the "kernel" view of the shared pages */
	uint32_t size, num, stride;
	uint64_t offset;	/* mmap offset handed to userspace */
	uint32_t kidx;		/* the kernel's private index */
	int user_maps;		/* live userspace mappings (mmap count) */
};

struct fk_cmd_rec {
	uint32_t command;
	uint32_t in_bytes;
	uint32_t out_bytes;
};

struct fk_qp {
	bool used;
	uint32_t qpn;
	uint32_t send_cq, recv_cq;
	uint8_t qp_type;
	uint8_t state;
	struct fk_ring sq, rq;
};

struct fk_state {
	/* knobs the test sets */
	uint32_t abi_version;	/* sent in alloc_ucontext_resp */
	uint32_t uctx_flags;	/* ... and these SROCE_UCTX_F_* */
	bool sq_paused;		/* doorbell does not drain the SQ */
	uint32_t ah_num_next;
	bool ioctl_mode;	/* answer CQ/QP create by ioctl, rest EPROTONOSUPPORT */

	/* what happened */
	uint32_t writes;	/* every write() on the device */
	uint32_t ioctls;
	uint32_t ioctl_creates;	/* objects created through the ioctl path */
	uint32_t ioctl_driver_id;	/* driver_id of the last ioctl header */
	uint32_t ioctl_uhw_in, ioctl_uhw_out;	/* UHW lengths seen last */
	uint32_t doorbells;
	uint32_t notify_armed, notify_solicited;
	uint32_t cq_overflows;
	struct fk_cmd_rec cmds[FK_MAX_LOG];
	uint32_t ncmds;
	/* SQ WQEs the doorbell drained, copied whole */
	uint8_t wqe_log[FK_MAX_LOG][256];
	uint32_t wqe_qpn[FK_MAX_LOG];
	uint32_t nwqe;

	/* objects */
	struct fk_ring cq[FK_MAX_OBJ];
	bool cq_used[FK_MAX_OBJ];
	struct fk_qp qp[FK_MAX_OBJ];
	struct fk_ring srq[FK_MAX_OBJ];
	bool srq_used[FK_MAX_OBJ];
	uint32_t next_offset_pages;
	int dev_fd;
};

extern struct fk_state fk;

void fk_reset(void);
/* Produce one completion into CQ 'handle' as the kernel would. */
int fk_cq_push(uint32_t handle, const struct sroce_cqe *cqe);
/* Last command record with this number, or NULL. */
const struct fk_cmd_rec *fk_last_cmd(uint32_t command);
/* The kernel side of a ring, for byte-exact checks. */
struct fk_ring *fk_cq_ring(uint32_t handle);
struct fk_qp *fk_qp_by_handle(uint32_t handle);
struct fk_ring *fk_srq_ring(uint32_t handle);
/* Run the doorbell work now (after sq_paused was cleared). */
void fk_drain_sq(uint32_t qp_handle);
/* The kernel's background progress: drain under its lock, return WQEs left. */
uint32_t fk_kick_sq(uint32_t qp_handle);
/* Set up a fake sysfs tree under dir; returns 0 on success. */
int fk_make_sysfs(const char *dir);

#endif /* SROCE_FAKE_KERNEL_H */
