/* gpu: what one accelerator can do, as a topology file describes it.
 *
 * Peak rates are dense (no sparsity). The roofline cost source reads the
 * efficiency fields; the memory anatomy reads capacity and reserve. Every
 * efficiency is a fraction of a datasheet peak measured by a public
 * micro-benchmark (GEMM, attention kernel, bandwidth test), cited in the
 * topology file's gpu.efficiency.source; none is fitted to an end-to-end
 * training result. */
#ifndef DDLSIM_GPU_H
#define DDLSIM_GPU_H

#include <stdbool.h>

#include "precision.h"

struct gpu_spec {
	char name[96];
	double peak_flops[DTYPE_N];   /* FLOP/s per dtype, dense; 0 = unsupported */
	double hbm_bytes;             /* capacity as the device reports it (cudaMemGetInfo total) */
	double hbm_bw_Bps;            /* peak memory bandwidth */
	long sm_count;                /* streaming multiprocessors (wave quantization) */
	/* Roofline efficiency curves: eff(work) = max_eff * work / (work + half_work). */
	double gemm_eff_max;          /* best fraction of peak a large GEMM reaches */
	double gemm_eff_max_fp8;      /* the same for fp8 GEMMs; 0 = gemm_eff_max */
	double gemm_half_flops;       /* GEMM work at which it reaches half of max */
	double mem_eff_max;           /* best fraction of HBM bandwidth */
	double mem_half_bytes;        /* traffic at which a kernel reaches half of max */
	double attn_eff_max;          /* fraction of peak for the unfused attention core's GEMMs */
	/* Fused (flash) attention: fraction of the 16-bit peak at head dim 128
	 * and long sequences, forward and backward; 0 = no flash kernel. */
	double flash_fwd_max, flash_bwd_max;
	double kernel_launch_s;       /* fixed overhead per kernel */
	double gemm_tile_m, gemm_tile_n;  /* output tile of one CTA (wave quantization) */
	double mem_reserved_bytes;    /* CUDA context and library workspaces, not usable */
	double tdp_W, idle_W;         /* board power: limit and idle; 0 = not given */
};

/* Best GEMM efficiency for dtype dt (fp8 has its own). */
double gpu_gemm_eff_max(const struct gpu_spec *g, enum dtype dt);
/* True if a fused (flash) attention kernel is known for this GPU: the
 * topology gives its efficiency (FlashAttention-2 needs sm80, Ampere+). */
bool gpu_has_flash(const struct gpu_spec *g);

#endif
