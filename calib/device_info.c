/* device_info.c - what the profile records about the GPU and its software stack.
 *
 * The "gpu" object of the profile: name, compute capability, SM count, peak
 * SM and memory clocks, bus width, memory and L2 sizes (all from the CUDA
 * runtime), and the versions of the driver, runtime, cuBLAS and cuDNN.  The
 * driver's own version string ("580.65.06") comes from NVML, which is
 * loaded with dlopen so that the tool still starts - and can say "no CUDA
 * GPU found" - on a machine without the NVIDIA driver; without NVML the
 * CUDA version the driver supports is recorded instead.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "calib.h"

int device_info_count(int *count, char *why, size_t why_size)
{
	cudaError_t err = cudaGetDeviceCount(count);

	if (err != cudaSuccess) {
		snprintf(why, why_size, "%s", cudaGetErrorString(err));
		*count = 0;
		return -1;
	}
	if (*count <= 0) {
		snprintf(why, why_size, "0 devices");
		return -1;
	}
	return 0;
}

int device_info_read(struct calib *c)
{
	int l2 = 0;

	if (cuda_failed(cudaGetDeviceProperties(&c->prop, c->device),
			"cudaGetDeviceProperties"))
		return -1;
	if (cuda_failed(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, c->device),
			"cudaDeviceGetAttribute L2CacheSize"))
		return -1;
	c->l2_bytes = l2 > 0 ? (size_t)l2 : (size_t)50 << 20;
	return 0;
}

/* Driver version string from NVML, or "" when NVML is unavailable. */
static void nvml_driver_version(char *out, size_t size)
{
	int (*init)(void);
	int (*version)(char *, unsigned);
	int (*shutdown)(void);
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);

	out[0] = '\0';
	if (!lib)
		return;
	*(void **)&init = dlsym(lib, "nvmlInit_v2");
	*(void **)&version = dlsym(lib, "nvmlSystemGetDriverVersion");
	*(void **)&shutdown = dlsym(lib, "nvmlShutdown");
	if (init && version && shutdown && init() == 0) {
		if (version(out, (unsigned)size) != 0)
			out[0] = '\0';
		shutdown();
	}
	dlclose(lib);
}

static json_t *version_string(int v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d.%d", v / 1000, (v % 1000) / 10);
	return json_string(buf);
}

json_t *device_info_json(const struct calib *c)
{
	char buf[96];
	int sm_khz = 0, mem_khz = 0, bus = 0, drv = 0, rt = 0;
	int maj = 0, min = 0, pat = 0;
	json_t *o = json_object();

	if (!o)
		return NULL;
	cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, c->device);
	cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, c->device);
	cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, c->device);
	cudaDriverGetVersion(&drv);
	cudaRuntimeGetVersion(&rt);

	json_object_set_new(o, "name", json_string(c->prop.name));
	snprintf(buf, sizeof(buf), "%d.%d", c->prop.major, c->prop.minor);
	json_object_set_new(o, "compute_capability", json_string(buf));
	json_object_set_new(o, "sm_count", json_integer(c->prop.multiProcessorCount));
	json_object_set_new(o, "sm_clock_max_MHz", json_integer(sm_khz / 1000));
	json_object_set_new(o, "mem_clock_max_MHz", json_integer(mem_khz / 1000));
	json_object_set_new(o, "mem_bus_width_bits", json_integer(bus));
	json_object_set_new(o, "hbm_bytes", json_integer((json_int_t)c->prop.totalGlobalMem));
	json_object_set_new(o, "l2_bytes", json_integer((json_int_t)c->l2_bytes));

	nvml_driver_version(buf, sizeof(buf));
	if (buf[0])
		json_object_set_new(o, "driver_version", json_string(buf));
	else
		json_object_set_new(o, "driver_version", version_string(drv));
	json_object_set_new(o, "cuda_runtime_version", version_string(rt));

	cublasGetProperty(MAJOR_VERSION, &maj);
	cublasGetProperty(MINOR_VERSION, &min);
	cublasGetProperty(PATCH_LEVEL, &pat);
	snprintf(buf, sizeof(buf), "%d.%d.%d", maj, min, pat);
	json_object_set_new(o, "cublas_version", json_string(buf));
#ifdef HAVE_CUDNN
	{
		size_t v = cudnnGetVersion();	/* 9.x: major*10000 + minor*100 + patch */

		snprintf(buf, sizeof(buf), "%zu.%zu.%zu", v / 10000, (v % 10000) / 100, v % 100);
		json_object_set_new(o, "cudnn_version", json_string(buf));
	}
#else
	json_object_set_new(o, "cudnn_version", json_null());
#endif
	return o;
}
