/* builders: the program builder of each model architecture (see
 * builders.h). */
#include "builders.h"

#include "build_cnn.h"
#include "build_transformer.h"

const struct program_builder builder_registry[MODEL_ARCH_N + 1] = {
	[MODEL_ARCH_DECODER] = { "decoder_transformer",
				 "layers, TP/SP/CP/EP collectives, pipeline schedules, ZeRO, offload",
				 build_transformer_program, build_transformer_hardware_flops },
	[MODEL_ARCH_CNN] = { "cnn", "data-parallel residual blocks, DDP buckets overlapped",
			     build_cnn_program, build_cnn_hardware_flops },
	[MODEL_ARCH_ENCODER] = { "encoder_transformer",
				 "the decoder's layers with bidirectional attention, post-LN, MLM / NSP heads",
				 build_transformer_program, build_transformer_hardware_flops },
	[MODEL_ARCH_VIT] = { "vit", "patch embedding GEMM, pre-LN bidirectional layers, class-token classifier",
			     build_transformer_program, build_transformer_hardware_flops },
	[MODEL_ARCH_N] = { NULL, NULL, NULL, NULL },
};

const struct program_builder *builders_find(const struct model *m)
{
	return &builder_registry[m->arch];
}
