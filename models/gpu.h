/* gpu: what one accelerator can do, as a topology file describes it.
 *
 * Peak rates are dense (no sparsity). The roofline cost source reads the
 * efficiency fields; the memory anatomy reads capacity and reserve. */
#ifndef DDLSIM_GPU_H
#define DDLSIM_GPU_H

enum dtype { DTYPE_FP32, DTYPE_TF32, DTYPE_FP16, DTYPE_BF16, DTYPE_FP8, DTYPE_N };

/* "fp32", "tf32", ... */
const char *dtype_name(enum dtype t);
/* Storage size of one element (tf32 is stored as fp32). */
double dtype_bytes(enum dtype t);

struct gpu_spec {
	char name[96];
	double peak_flops[DTYPE_N];   /* FLOP/s per dtype, dense; 0 = unsupported */
	double hbm_bytes;             /* capacity */
	double hbm_bw_Bps;            /* peak memory bandwidth */
	long sm_count;                /* streaming multiprocessors (wave quantization) */
	/* Roofline efficiency curves: eff(work) = max_eff * work / (work + half_work). */
	double gemm_eff_max;          /* best fraction of peak a large GEMM reaches */
	double gemm_half_flops;       /* GEMM work at which it reaches half of max */
	double mem_eff_max;           /* best fraction of HBM bandwidth */
	double mem_half_bytes;        /* traffic at which a kernel reaches half of max */
	double attn_eff_max;          /* fraction of peak for the attention core */
	double kernel_launch_s;       /* fixed overhead per kernel */
	double gemm_tile_m, gemm_tile_n;  /* output tile of one CTA (wave quantization) */
	double mem_reserved_bytes;    /* CUDA context + allocator reserve, not usable */
};

#endif
