/* test-rowwise: the passes, bytes and L2 share of row-wise kernels
 * (models/rowwise.h), figures worked by hand. */
#include <criterion/criterion.h>
#include <math.h>

#include "cost.h"
#include "diag.h"
#include "rowwise.h"
#include "testutil.h"
#include "topology.h"

static struct gpu_spec preset(const char *name)
{
	char rel[96];
	snprintf(rel, sizeof(rel), "gpus/%s.json", name);
	struct gpu_spec g = { 0 };
	struct diag d;
	diag_init(&d, NULL);
	cr_assert_eq(topology_gpu_preset_load(src_path(rel), &g, &d), 0, "%s", rel);
	diag_finish(&d);
	return g;
}

static struct op mem_op(enum op_pass pass, enum dtype dt)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = pass, .dtype = dt, .batch = 1 };
	return op;
}

Test(rowwise, aten_softmax_block_size)
{
	/* SoftMax_getBlockSize: min(row / ILP, 1024) / 2, up to a power of 2 */
	cr_expect_eq(rowwise_aten_softmax_threads(2048, 4), 256);   /* 512/2 */
	cr_expect_eq(rowwise_aten_softmax_threads(1280, 4), 256);   /* 320/2 = 160 */
	cr_expect_eq(rowwise_aten_softmax_threads(16384, 4), 512);  /* 1024/2 */
	cr_expect_eq(rowwise_aten_softmax_threads(4096, 2), 256);   /* ILP 8: 512/2 */
	cr_expect_eq(rowwise_aten_softmax_threads(96, 4), 32);      /* at least a warp */
}

Test(rowwise, aten_softmax_passes)
{
	double n = 65536.0 * 1024;
	struct op op = mem_op(PASS_FWD, DTYPE_FP32);
	rowwise_aten_softmax(&op, 65536, 1024);  /* the persistent warp kernel */
	cr_expect_float_eq(op.bytes, 8 * n, 1e-9);
	cr_expect_float_eq(op.reread_bytes, 0, 1e-9);
	cr_expect_eq(op.row_threads, 0);
	cr_expect_eq(op.kernels, 1);

	n = 65536.0 * 2048;
	op = mem_op(PASS_FWD, DTYPE_FP32);
	rowwise_aten_softmax(&op, 65536, 2048);  /* cunn_SoftMaxForward: 3 reads, 1 write */
	cr_expect_float_eq(op.bytes, 8 * n, 1e-9);
	cr_expect_float_eq(op.reread_bytes, 8 * n, 1e-9);
	cr_expect_eq(op.row_threads, 256);
	cr_expect_float_eq(op.row, 2048, 1e-12);

	op = mem_op(PASS_FWD, DTYPE_FP16);
	rowwise_aten_softmax(&op, 1, 2048);  /* 2048 elements, 4096 bytes: still a block */
	cr_expect_eq(op.row_threads, 128);

	op = mem_op(PASS_BWD, DTYPE_FP32);
	rowwise_aten_softmax(&op, 65536, 2048);  /* grad*output, then 1 re-read of tmp */
	cr_expect_float_eq(op.bytes, 24 * n, 1e-9);
	cr_expect_float_eq(op.reread_bytes, 4 * n, 1e-9);
	cr_expect_eq(op.kernels, 2);
}

Test(rowwise, aten_layernorm_and_dropout_bytes)
{
	double n = 8192.0 * 4096;
	struct op op = mem_op(PASS_FWD, DTYPE_BF16);
	rowwise_aten_layernorm(&op, 8192, 4096);
	cr_expect_float_eq(op.bytes, 4 * n, 1e-9);
	cr_expect_float_eq(op.reread_bytes, 2 * n, 1e-9);
	cr_expect_eq(op.row_threads, 128);

	op = mem_op(PASS_FWD, DTYPE_FP32);
	rowwise_aten_dropout(&op, n, true);
	cr_expect_float_eq(op.bytes, 9 * n, 1e-9);  /* x, y, a bool mask */
	op = mem_op(PASS_BWD, DTYPE_FP32);
	rowwise_aten_dropout(&op, n, false);
	cr_expect_float_eq(op.bytes, 9 * n, 1e-9);
	cr_expect_eq(op.kernels, 1);
	rowwise_aten_dropout(&op, n, true);  /* cast 5, scale 8, product 12 */
	cr_expect_float_eq(op.bytes, 25 * n, 1e-9);
	cr_expect_eq(op.kernels, 3);
}

Test(rowwise, l2_hit_closed_form_on_a100)
{
	struct gpu_spec g = preset("a100-sxm4-40gb");
	cr_assert_float_eq(g.l2_bytes, 20e6, 1);
	cr_expect_float_eq(rowwise_resident_rows(&g, 128), 108 * 16, 1e-12);
	cr_expect_float_eq(rowwise_resident_rows(&g, 512), 108 * 4, 1e-12);

	/* layer norm fp32: W = 1728 rows x row x 4 B; hit = 20 MB / W - 1/2 */
	struct op op = mem_op(PASS_FWD, DTYPE_FP32);
	rowwise_aten_layernorm(&op, 8192, 2048);
	double w = 1728.0 * 2048 * 4;
	cr_expect_float_eq(rowwise_l2_hit(&g, &op), 20e6 / w - 0.5, 1e-12);  /* 0.9129 */
	cr_expect_float_eq(rowwise_hbm_bytes(&g, &op),
			   op.bytes + op.reread_bytes * (1.5 - 20e6 / w), 1e-3);
	rowwise_aten_layernorm(&op, 8192, 1024);  /* W 7 MB: all from the L2 */
	cr_expect_float_eq(rowwise_l2_hit(&g, &op), 1, 1e-12);
	cr_expect_float_eq(rowwise_hbm_bytes(&g, &op), op.bytes, 1e-3);
	rowwise_aten_layernorm(&op, 8192, 8192);  /* W 57 MB: all from HBM */
	cr_expect_float_eq(rowwise_l2_hit(&g, &op), 0, 1e-12);
	cr_expect_float_eq(rowwise_hbm_bytes(&g, &op), 12.0 * 8192 * 8192, 1e-3);

	/* no L2 known: every re-read from HBM */
	g.l2_bytes = 0;
	cr_expect_float_eq(rowwise_l2_hit(&g, &op), 0, 1e-12);
}

Test(rowwise, resident_rows_follow_compute_capability)
{
	struct gpu_spec g = { .sm_count = 100, .compute_capability = 8.6 };
	cr_expect_float_eq(rowwise_resident_rows(&g, 128), 100 * 12, 1e-12);  /* 1536 threads */
	cr_expect_float_eq(rowwise_resident_rows(&g, 32), 100 * 16, 1e-12);   /* 16 CTAs */
	g.compute_capability = 9.0;
	cr_expect_float_eq(rowwise_resident_rows(&g, 32), 100 * 32, 1e-12);
	cr_expect_float_eq(rowwise_resident_rows(&g, 0), 0, 1e-12);
}

Test(rowwise, roofline_moves_hbm_bytes_at_mem_max)
{
	struct gpu_spec g = preset("h100-sxm5-80gb");
	cr_assert_float_eq(g.mem_rowwise_max, 0, 1e-12);
	struct op op = mem_op(PASS_FWD, DTYPE_FP32);
	rowwise_aten_softmax(&op, 65536, 16384);  /* W = 132 x 4 x 64 KB = 34.6 MB */
	double w = 132.0 * 4 * 16384 * 4, hit = 25e6 / w - 0.5;
	cr_expect_float_eq(rowwise_l2_hit(&g, &op), hit, 1e-12);
	double bytes = op.bytes + op.reread_bytes * (1 - hit);
	double want = bytes / (g.hbm_bw_Bps * g.mem_eff_max) + g.kernel_launch_s;
	cr_expect_float_eq(cost_roofline_time_isolated(&g, &op), want, 1e-12);
	/* a measured row-wise efficiency, when a preset gives one, over the same bytes */
	g.mem_rowwise_max = 0.5;
	want = bytes / (g.hbm_bw_Bps * 0.5) + g.kernel_launch_s;
	cr_expect_float_eq(cost_roofline_time_isolated(&g, &op), want, 1e-12);
}
