/* input_pipeline: the images a CNN's data loader supplies (input_pipeline.h). */
#include "input_pipeline.h"

#include <string.h>

#include "jload.h"

const char *const input_loader_names[] = { "none", "pytorch-pil", "dali-gpu", NULL };

int input_pipeline_load(struct jobj *jo, struct input_pipeline *out)
{
	int e = INPUT_NONE, bad = 0;

	memset(out, 0, sizeof(*out));
	if (jobj_enum(jo, "loader", input_loader_names, &e, JREQ) < 0)
		bad = 1;
	out->loader = e;
	bad |= jobj_int(jo, "cpu_cores", &out->cpu_cores, 1, 0) < 0;
	bad |= jobj_int(jo, "workers_per_gpu", &out->workers_per_gpu, 1, 0) < 0;
	bad |= jobj_num(jo, "core_img_per_s", &out->core_img_per_s, JPOS) < 0;
	bad |= jobj_num(jo, "gpu_img_per_s", &out->gpu_img_per_s, JPOS) < 0;
	if (out->loader != INPUT_PYTORCH_PIL) {
		const char *cpu_keys[] = { "cpu_cores", "workers_per_gpu", "core_img_per_s" };
		for (int i = 0; i < 3; i++)
			if (jobj_has(jo, cpu_keys[i]))
				bad |= jobj_err(jo, cpu_keys[i], "applies to loader 'pytorch-pil' only, "
						"the loader is '%s'", input_loader_names[out->loader]) < 0;
	}
	if (out->loader != INPUT_DALI_GPU && jobj_has(jo, "gpu_img_per_s"))
		bad |= jobj_err(jo, "gpu_img_per_s", "applies to loader 'dali-gpu' only, the loader "
				"is '%s'", input_loader_names[out->loader]) < 0;
	return bad ? -1 : 0;
}

struct input_step input_pipeline_step(const struct input_pipeline *ip, double gpu_s, double images,
				      long cores, int gpus_on_node)
{
	struct input_step st = { .step_s = gpu_s };

	if (ip->loader == INPUT_PYTORCH_PIL) {
		long used = cores;
		if (ip->workers_per_gpu > 0 && ip->workers_per_gpu * gpus_on_node < used)
			used = ip->workers_per_gpu * gpus_on_node;
		double rate = ip->core_img_per_s > 0 ? ip->core_img_per_s : INPUT_PIL_CORE_IMG_PER_S;
		st.supply_img_per_s = (double)used * rate;
	} else if (ip->loader == INPUT_DALI_GPU) {
		st.supply_img_per_s = ip->gpu_img_per_s > 0 ? ip->gpu_img_per_s : INPUT_DALI_A100_IMG_PER_S;
	} else {
		return st;
	}
	st.demand_img_per_s = gpu_s > 0 ? images / gpu_s : 0;
	st.loader_s = images / st.supply_img_per_s;
	st.bound = st.loader_s > gpu_s;
	if (st.bound)
		st.step_s = st.loader_s;
	return st;
}
