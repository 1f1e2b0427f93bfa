/* record: the best public MFU per GPU generation and model class (see
 * record.h). */
#include "record.h"

#include <stdio.h>

const struct mfu_record mfu_records[] = {
	{ BAND_GEN_AMPERE, BAND_KIND_DENSE, BAND_PREC_16, 0.6423, "llm-foundry MPT-7B on 8 A100 80GB",
	  "validation/llm-foundry-mpt/mpt-7b-a100-80-8gpu.json",
	  "mosaicml/llm-foundry scripts/train/benchmarking/README.md (061f2c7c)" },
	{ BAND_GEN_HOPPER, BAND_KIND_DENSE, BAND_PREC_16, 489.1 / 989.4,
	  "Megatron-Core GPT 16B on 192 H100, 489.1 model TFLOP/s",
	  "validation/megatron-core-h100/mcore-16b-192gpu.json",
	  "NVIDIA/Megatron-LM README.md, images/model_table.png (f2e5db40)" },
};
const int mfu_record_count = (int)(sizeof(mfu_records) / sizeof(mfu_records[0]));

static const char *const kind_words[BAND_KIND_N] = { "a dense decoder", "a mixture of experts", "an encoder",
						     "a CNN", "a ViT", "a LoRA fine-tune" };
static const char *const gen_words[BAND_GEN_N] = { "this GPU", "Volta", "Ampere", "Hopper", "Blackwell" };

const struct mfu_record *record_mfu(const struct inputs *in, const struct plan *pl)
{
	struct band_features f;
	band_features(in, pl, &f);
	for (int i = 0; i < mfu_record_count; i++)
		if (mfu_records[i].gen == f.gen && mfu_records[i].kind == f.kind && mfu_records[i].prec == f.prec)
			return &mfu_records[i];
	return NULL;
}

bool record_check(const struct inputs *in, const struct plan *pl, double mfu, char *buf, size_t n)
{
	const struct mfu_record *r = record_mfu(in, pl);
	if (n)
		buf[0] = 0;
	if (!r || !(mfu > r->mfu))
		return false;
	snprintf(buf, n, "MFU %.1f %% exceeds %.1f %%, the best public MFU the project knows for %s on %s "
		 "(%s; %s)", 100 * mfu, 100 * r->mfu, kind_words[r->kind], gen_words[r->gen], r->run, r->source);
	return true;
}
