/* cmd_calib: `ddlsim calib [ARGS...]` runs the CUDA calibration tool.
 *
 * The tool (calib/, built when meson finds CUDA) measures GEMMs,
 * convolutions, memory-bound kernels and bandwidths on the local GPU and
 * writes a versioned profile; this command finds it and runs it with the
 * same arguments. Without a GPU the tool says so and exits 4, writing
 * nothing; without the tool (no CUDA at build time) this command says so
 * and exits 1. $DDLSIM_CALIB overrides the tool's path. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "ddlsim-config.h"

/* The tool's options, for --help only: the arguments go on to the tool
 * unparsed (it checks them), so this table is documentation. */
struct calib_opts {
	const char *out, *csv;
	unsigned only;
	bool quick, self_test, no_sdpa;
	long device;
};

static const char *const sections[] = { "gemm", "conv", "mem", "attn", "bw", NULL };

static const struct opt calib_options[] = {
	OPT_FILE(0, "out", struct calib_opts, out, "PROFILE.json",
		 "JSON profile to write (default: <gpu-name>.json here)"),
	OPT_FILE(0, "csv", struct calib_opts, csv, "RAW.csv", "also write one CSV row per measured point"),
	OPT_FLAG(0, "quick", struct calib_opts, quick, "reduced grid (about a minute on an H100)"),
	OPT_BITS(0, "only", struct calib_opts, only, "gemm,conv,mem,attn,bw", sections,
		 "comma-separated sections to run (default: all)"),
	OPT_LONG(0, "device", struct calib_opts, device, "N", 0, 1024, "CUDA device index (default 0)"),
	OPT_FLAG(0, "self-test", struct calib_opts, self_test,
		 "run only the correctness checks, at small sizes, and\n"
		 "print one line per check and a summary; writes nothing"),
	OPT_FLAG(0, "no-sdpa", struct calib_opts, no_sdpa,
		 "skip cuDNN fused attention (the attention section then\n"
		 "holds the unfused entries only)"),
	OPT_END(),
};

const struct opt_cmd cmd_calib_opts = {
	.name = "calib",
	.summary = "measure this GPU with the CUDA calibration tool and write a profile",
	.description =
		"Runs ddlsim-calib, which times cuBLAS GEMMs, convolutions, memory-bound\n"
		"kernels, attention (unfused, and fused by cuDNN's SDPA graphs where cuDNN\n"
		"runs them; --no-sdpa skips those) and memory/PCIe bandwidth on the local\n"
		"NVIDIA GPU (CUDA events, median of repeated runs after warm-up, results\n"
		"checked against a reference first) and writes a profile that scenarios\n"
		"name with \"compute\": {\"cost\": \"profile\", \"profile\": PATH}. See calib/README.md.\n"
		"The arguments go on to the tool, which checks them. Without a GPU, `ddlsim\n"
		"calib-trace` makes a profile from a PyTorch profiler trace of your own job.\n",
	.options = calib_options,
	.epilogue =
		"examples:\n"
		"  ddlsim calib --self-test\n"
		"  ddlsim calib --out calib/profiles/h100-sxm.json --csv calib/profiles/h100-sxm.csv\n\n"
		"exit codes: 0 ok, 1 failure or tool not built, 2 usage, 4 no GPU\n",
	.size = sizeof(struct calib_opts),
	.passthrough = true,
};

static const char *tool_path(void)
{
	const char *env = getenv("DDLSIM_CALIB");
	if (env && *env)
		return env;
#if DDLSIM_HAVE_CALIB
	if (access(DDLSIM_CALIB_BUILD_PATH, X_OK) == 0)
		return DDLSIM_CALIB_BUILD_PATH;
	if (access(DDLSIM_CALIB_INSTALL_PATH, X_OK) == 0)
		return DDLSIM_CALIB_INSTALL_PATH;
#endif
	return NULL;
}

int cmd_calib(int argc, char **argv)
{
	const char *tool = tool_path();
	if (!tool) {
		fprintf(stderr, "ddlsim: error: the calibration tool was not built (meson found no CUDA "
				"toolkit); rebuild with nvcc and cuBLAS, or set DDLSIM_CALIB\n");
		return EXIT_FAIL;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ddlsim: error: cannot start '%s': %s\n", tool, strerror(errno));
		return EXIT_FAIL;
	}
	if (pid == 0) {
		argv[0] = (char *)tool;
		execv(tool, argv);
		fprintf(stderr, "ddlsim: error: cannot run '%s': %s\n", tool, strerror(errno));
		_exit(EXIT_FAIL);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return EXIT_FAIL;
	(void)argc;
	return WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_FAIL;
}
