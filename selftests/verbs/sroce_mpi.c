// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * A small MPI program for two ranks: point-to-point messages from 1 byte
 * to 4 MiB each way, every byte checked, then MPI_Allreduce and
 * MPI_Bcast of a large array whose results are known exactly.  Run by
 * selftests/mpi_two_vm.sh with Open MPI's UCX PML over sroce0.
 *
 * Prints "sroce_mpi: N checks passed" on rank 0 and exits 0, or aborts
 * the job naming the first check that failed.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MSG		(4u << 20)
#define NREDUCE		(1u << 18)

static int rank, checks;

static void check(int ok, const char *what, unsigned int arg)
{
	checks++;
	if (ok)
		return;
	fprintf(stderr, "sroce_mpi: rank %d: %s (%u) failed\n", rank, what,
		arg);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 131 + seed * 29 + (i >> 11));
}

/* rank 0 sends @len bytes; rank 1 checks them and sends them back inverted. */
static void pingpong(unsigned char *buf, unsigned char *want, unsigned int len)
{
	size_t i;

	fill(want, len, len);
	if (rank == 0) {
		memcpy(buf, want, len);
		MPI_Send(buf, (int)len, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
		memset(buf, 0, len);
		MPI_Recv(buf, (int)len, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		for (i = 0; i < len; i++)
			want[i] ^= 0xff;
		check(!memcmp(buf, want, len), "reply", len);
	} else {
		memset(buf, 0, len);
		MPI_Recv(buf, (int)len, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		check(!memcmp(buf, want, len), "message", len);
		for (i = 0; i < len; i++)
			buf[i] ^= 0xff;
		MPI_Send(buf, (int)len, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
	}
}

int main(int argc, char **argv)
{
	unsigned char *buf = malloc(MAX_MSG), *want = malloc(MAX_MSG);
	int64_t *in = malloc(NREDUCE * sizeof(*in));
	int64_t *out = malloc(NREDUCE * sizeof(*out));
	unsigned int len, i;
	int size, ok;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	check(buf && want && in && out, "memory", 0);
	check(size == 2, "two ranks", (unsigned int)size);

	for (len = 1; len <= MAX_MSG; len *= 4)
		pingpong(buf, want, len);
	pingpong(buf, want, 65537);
	pingpong(buf, want, 1000003);

	/* element i: rank 0 gives i, rank 1 gives 3i + 7 */
	for (i = 0; i < NREDUCE; i++)
		in[i] = rank ? 3 * (int64_t)i + 7 : (int64_t)i;
	MPI_Allreduce(in, out, NREDUCE, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (ok = 1, i = 0; i < NREDUCE; i++)
		ok &= out[i] == 4 * (int64_t)i + 7;
	check(ok, "allreduce", NREDUCE);

	for (i = 0; i < NREDUCE; i++)
		out[i] = rank ? 0 : (int64_t)i * i;
	MPI_Bcast(out, NREDUCE, MPI_INT64_T, 0, MPI_COMM_WORLD);
	for (ok = 1, i = 0; i < NREDUCE; i++)
		ok &= out[i] == (int64_t)i * i;
	check(ok, "bcast", NREDUCE);

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("sroce_mpi: %d checks passed on rank 0\n", checks);
	MPI_Finalize();
	free(buf);
	free(want);
	free(in);
	free(out);
	return 0;
}
