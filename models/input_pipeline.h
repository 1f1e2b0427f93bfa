/* input_pipeline: the images a CNN's data loader can supply per second.
 *
 * A training step needs the images of its batch decoded and augmented
 * (JPEG decode, RandomResizedCrop, flip, normalize, collate, copy to the
 * GPU). A prefetching loader prepares the next batch while the GPUs run
 * this one, so a step takes max(the GPUs' step, the loader's time for one
 * batch): the loader binds only when it is slower.
 *
 *   loader          where the images are prepared
 *   none            not modelled (the default: synthetic data, as before)
 *   pytorch-pil     torch.utils.data.DataLoader workers on the host's CPU
 *                   cores, torchvision's ImageFolder with Pillow: a node
 *                   prepares cores x INPUT_PIL_CORE_IMG_PER_S images/s
 *                   (cores: min(cpu_cores, workers_per_gpu x GPUs used
 *                   on the node) when workers_per_gpu is given), shared
 *                   by the node's GPUs
 *   dali-gpu        NVIDIA DALI, mixed decode (nvJPEG, A100's hardware JPEG
 *                   decoder): each GPU's own pipeline supplies
 *                   INPUT_DALI_A100_IMG_PER_S images/s, run beside training
 *                   on its own stream and the decoder engine
 *
 * Rates (images/s, ImageNet JPEGs to 224 x 224 training crops):
 *   INPUT_PIL_CORE_IMG_PER_S 145: obilaniu/Benzina README (github.com/
 *     obilaniu/Benzina, table "Data Loader | CPU | CPU Workers"), PyTorch
 *     ImageFolder, 2 workers at 100 % CPU on an Intel Xeon E5-2698 v4 @
 *     2.20GHz: 290 images/s, i.e. 145 per worker (one core each); 4
 *     workers gave 395 and 6 gave 425 as the V100 behind them began to
 *     bind, so the 2-worker row is the loader's own rate.
 *   INPUT_DALI_A100_IMG_PER_S 7000: NVIDIA, "Loading Data Fast with DALI
 *     and the New Hardware JPEG Decoder in NVIDIA A100 GPUs" (developer.
 *     nvidia.com/blog/loading-data-fast-with-dali-and-new-jpeg-decoder-
 *     in-a100/), the ResNet-50 preprocessing pipeline on one A100 with
 *     hw_decoder_load 0.75: about 7000 images/s (about 6000 with the
 *     CUDA decoder alone, 5000 with the hardware decoder alone), as
 *     quoted in NVIDIA/DALI issue 5362. Read off a chart: +-5 %.
 * Other CPUs and GPUs: give core_img_per_s / gpu_img_per_s; no rate is
 * assumed for hardware nobody measured (Pillow-SIMD: no public per-core
 * figure with its CPU named was found, so it is not offered). */
#ifndef DDLSIM_INPUT_PIPELINE_H
#define DDLSIM_INPUT_PIPELINE_H

#include <stdbool.h>

struct jobj;

#define INPUT_PIL_CORE_IMG_PER_S 145.0
#define INPUT_DALI_A100_IMG_PER_S 7000.0

enum input_loader { INPUT_NONE, INPUT_PYTORCH_PIL, INPUT_DALI_GPU, INPUT_N };
extern const char *const input_loader_names[];  /* NULL-terminated, enum order */

struct input_pipeline {
	enum input_loader loader;
	long cpu_cores;             /* per node; 0: the topology's node.cpu_cores */
	long workers_per_gpu;       /* DataLoader workers per GPU; 0: every core */
	double core_img_per_s;      /* per core; 0: INPUT_PIL_CORE_IMG_PER_S */
	double gpu_img_per_s;       /* per GPU (dali-gpu); 0: the A100 rate */
};

/* The loader's figures for one step (input_pipeline_step()). */
struct input_step {
	double supply_img_per_s;    /* per node (pytorch-pil) or per GPU (dali-gpu) */
	double demand_img_per_s;    /* what the GPUs' step consumes, same unit */
	double loader_s;            /* the loader's time for one step's images */
	double step_s;              /* max(gpu_s, loader_s) */
	bool bound;                 /* the loader is slower than the GPUs */
};

/* Read training.input_pipeline from jo into out (zeroed first); errors
 * name the JSON path. Returns 0, or -1 after reporting. */
int input_pipeline_load(struct jobj *jo, struct input_pipeline *out);

/* The step with the loader: gpu_s the GPUs' step, images the step's
 * images on one node (pytorch-pil) or one GPU (dali-gpu), cores the node's
 * cores (resolved: > 0 for pytorch-pil), gpus_on_node the GPUs the job uses
 * on a node. Rates left 0 take the defaults above. */
struct input_step input_pipeline_step(const struct input_pipeline *ip, double gpu_s, double images,
				      long cores, int gpus_on_node);

#endif
