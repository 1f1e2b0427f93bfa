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

/* The library a stack's 16-bit GEMMs ran on (models/stack.h gemm_lib):
 * the one behind gemm_max (a recent cuBLAS, as its micro-benchmark ran
 * it), or an older one a GPU preset measured apart
 * (efficiency.gemm_libraries): cublas11, the cuBLAS 11.x of the CUDA 11
 * toolkits (on sm_90 only 11.11, CUDA 11.8's: earlier ones have no
 * Hopper kernels). */
/* Points of a GPU's clock-versus-power-limit table (gpu.power.cap_clock_ratio). */
#define GPU_CAP_POINTS_MAX 16

enum gemm_lib { GEMM_LIB_CURRENT, GEMM_LIB_CUBLAS11, GEMM_LIB_N };
/* "current", "cublas11", NULL */
extern const char *const gemm_lib_names[GEMM_LIB_N + 1];

struct gpu_spec {
	char name[96];
	double peak_flops[DTYPE_N];   /* FLOP/s per dtype, dense; 0 = unsupported */
	double hbm_bytes;             /* capacity as the device reports it (cudaMemGetInfo total) */
	double hbm_bw_Bps;            /* peak memory bandwidth */
	long sm_count;                /* streaming multiprocessors (wave quantization) */
	double compute_capability;    /* CUDA compute capability (8.0 A100, 9.0 H100); 0 = unknown */
	double l2_bytes;              /* L2 that caches one SM's accesses (one partition where the
					 L2 is split); 0 = unknown (models/rowwise.h) */
	/* Roofline efficiencies (cost_roofline.c): a GEMM's tile runs at
	 * gemm_eff_max of an SM's share of the peak, the GEMM in waves of
	 * tiles; a memory-bound kernel at a fraction of HBM bandwidth that
	 * depends on its class (element-wise or row-wise). */
	double gemm_eff_max;          /* best fraction of peak a large GEMM reaches */
	double gemm_eff_max_fp8;      /* the same for fp8 GEMMs; 0 = gemm_eff_max */
	double gemm_eff_max_mxfp8;    /* the same for MXFP8 and NVFP4 GEMMs, of their peaks */
	double gemm_eff_max_nvfp4;    /* (peak_flops[DTYPE_MXFP8], [DTYPE_NVFP4]); 0 = gemm_eff_max */
	double gemm_lib_max[GEMM_LIB_N]; /* the same for 16-bit and tf32 GEMMs on an older
					    library (enum gemm_lib); 0 = not measured: gemm_eff_max */
	double mem_eff_max;           /* element-wise kernels: fraction of HBM bandwidth */
	double mem_rowwise_max;       /* row-wise kernels (norms, softmax, loss): a measured
					 override; 0 = mem_eff_max over the bytes their passes
					 move (models/rowwise.h) */
	/* (gemm_half_GFLOP, mem_half_MB, attention_max of topologies before
	 * 1.5 are read and checked, not kept: fabric/topology.h) */
	/* Fused (flash) attention: fraction of the 16-bit peak at head dim 128
	 * and long sequences, forward and backward, of the best kernel known
	 * on this GPU; 0 = no flash kernel. flash_be_* give it per backend
	 * (attention.h enum attn_backend; 0 = not measured: the best). */
	double flash_fwd_max, flash_bwd_max;
	double flash_be_fwd[8], flash_be_bwd[8];
	/* Keys a query row sees at which backend be's backward reaches half
	 * its maximum, where its preset measured one (attention_backends.
	 * <be>.bwd_seq_half); 0 = flash_seq_half, the forward's. */
	double flash_be_bwd_half[8];
	/* Keys a query row sees at which flash reaches half its maximum
	 * (attention.h's length factor); 0 = 239, FlashAttention-3's H100 fit. */
	double flash_seq_half;
	/* Compute clock inside a training step over the clock of the
	 * micro-benchmarks behind gemm_max and flash_*_max (power cap and
	 * heat under sustained load, communication kernels beside compute):
	 * compute-bound kernels run this much slower in situ; 1 = as
	 * measured alone. */
	double sustained_clock_ratio;
	/* Flash attention's throughput inside a steady training step over
	 * its throughput in the burst benchmarks its efficiencies come from
	 * (the board at its boost clock, not yet at the power cap): on top of
	 * sustained_clock_ratio for OP_ATTN; 1 = no difference known. */
	double flash_sustained_ratio;
	/* The same while communication kernels run beside compute (their
	 * traffic pushes the board to its power limit): the engine applies
	 * it to compute-bound kernels that overlap a collective, beside its
	 * own terms for the SMs and HBM the collective takes (engine.h);
	 * 1 = no drop known. */
	double comm_overlap_clock_ratio;
	double kernel_launch_s;       /* fixed latency of every kernel (launch, fill, drain) */
	/* The GPU's GEMM kernels write each CTA's output tile after its
	 * mainloop, with no later tile's mainloop to hide it behind: one tile
	 * per CTA, not persistent (CUTLASS 2.x include/cutlass/gemm/kernel/
	 * gemm.h, the sm80 kernels cuBLAS's ampere_* and sm80_xmma_* follow).
	 * Hopper's and Blackwell's warp-specialized persistent kernels overlap
	 * one tile's epilogue with the next tile's mainloop (CUTLASS 3.x
	 * sm90_gemm_tma_warpspecialized_pingpong.hpp): false. The roofline
	 * then prices a GEMM max(compute, input bytes) + output bytes
	 * (cost_roofline.c); gpu.efficiency.gemm_epilogue.serial. */
	bool gemm_epilogue_serial;
	/* With it, the fraction of peak the mainloop of a 16-bit or tf32
	 * GEMM runs at: gemm_max's micro-benchmark re-derived with its own
	 * output write taken out (gpu.efficiency.gemm_epilogue.mainloop_max);
	 * 0 = gemm_eff_max. Used only with gemm_epilogue_serial; convolutions
	 * keep gemm_eff_max. */
	double gemm_mainloop_max;
	double gemm_tile_m, gemm_tile_n;  /* output tile of one CTA (wave quantization) */
	double mem_reserved_bytes;    /* CUDA context and library workspaces, not usable */
	double tdp_W, idle_W;         /* board power: limit and idle; 0 = not given */
	/* A board power limit below tdp_W (nvidia-smi -pl; gpu.power.power_cap_W);
	 * 0 = none, the board at tdp_W. It slows the compute-bound kernels by
	 * the clock ratio gpu_power_cap_clock_ratio() reads off cap_clock (the
	 * SM clock at cap_W[i] over the clock at tdp_W, measured, ascending,
	 * the last point tdp_W at 1; gpu.power.cap_clock_ratio), linear between
	 * points and never extrapolated (the loader refuses a cap below the
	 * first point). Memory-bound kernels keep their rate: no measured HBM
	 * bandwidth under a cap was found. The relation on the one preset that
	 * has it (h100-sxm5-96gb-hbm2e.json) is the average SM clock of a TF32
	 * tensor-core workload at 200-700 W on that part (Ujeniya et al., arXiv
	 * 2604.11391v2, Fig. 6b), taken for a training step's GEMMs and
	 * attention: an assumption its source string states (gpus/README.md). */
	double power_cap_W;
	int cap_n;
	double cap_W[GPU_CAP_POINTS_MAX], cap_clock[GPU_CAP_POINTS_MAX];
};

/* Best GEMM efficiency for dtype dt (fp8 has its own; tf32 takes the
 * 16-bit gemm_eff_max, which the public TF32 GEMM measurements reach
 * within about 1 % on A100 and H100: validation/kernels/README.md). */
double gpu_gemm_eff_max(const struct gpu_spec *g, enum dtype dt);
/* The same on GEMM library lib: the preset's figure for lib where it
 * measured one (not for fp8: no older library's fp8 GEMM is priced),
 * else gpu_gemm_eff_max(). */
double gpu_gemm_eff_max_lib(const struct gpu_spec *g, enum dtype dt, enum gemm_lib lib);
/* The fraction of peak the mainloop of a GEMM of dtype dt on library
 * lib runs at when the GPU writes its output after it
 * (gemm_epilogue_serial): gemm_mainloop_max where the preset derives one
 * and no fp8 or older-library figure applies, else
 * gpu_gemm_eff_max_lib(). */
double gpu_gemm_mainloop_max(const struct gpu_spec *g, enum dtype dt, enum gemm_lib lib);
/* The compute clock of g under its power limit over the clock at its TDP:
 * cap_clock interpolated linearly at power_cap_W; 1 with no cap, no table
 * or a cap at or above tdp_W, and the first point's ratio below it (the
 * loader refuses such a cap). */
double gpu_power_cap_clock_ratio(const struct gpu_spec *g);
/* True if a fused (flash) attention kernel is known for this GPU: the
 * topology gives its efficiency (FlashAttention-2 needs sm80, Ampere+). */
bool gpu_has_flash(const struct gpu_spec *g);

/* The time factor of a compute-bound kernel launched on sm_count -
 * margin_sms of the GPU's SMs, as Transformer Engine launches a GEMM
 * whose userbuffers communication kernel holds margin_sms SMs with
 * set_sm_margin (TE v1.8 pytorch/csrc/comm_gemm_overlap.h lines 184, 675:
 * _math_sms = multiProcessorCount - num_comm_sm; common/gemm/
 * cublaslt_gemm.cu line 133: CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET):
 * sm_count / (sm_count - margin_sms), throughput proportional to the
 * SMs. 1 when margin_sms <= 0 or not below sm_count. */
double gpu_sm_margin_slowdown(long sm_count, long margin_sms);

#endif
