/* cmd_calib: `ddlsim calib [ARGS...]` runs the CUDA calibration tool.
 *
 * The tool (calib/, built when meson finds CUDA) measures GEMMs,
 * convolutions, memory-bound kernels and bandwidths on the local GPU and
 * writes a versioned profile; this command finds it and runs it with the
 * same arguments. Without a GPU the tool says so and exits 4, writing
 * nothing; without the tool (no CUDA at build time) this command says so
 * and exits 1. $DDLSIM_CALIB overrides the tool's path. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "ddlsim-config.h"

void cmd_calib_usage(FILE *f)
{
	fprintf(f, "usage: ddlsim calib [--out PROFILE.json] [--csv RAW.csv] [--quick]\n"
		   "                    [--only gemm,conv,mem,attn,bw] [--device N] [--self-test]\n"
		   "                    [--no-sdpa]\n\n"
		   "Runs ddlsim-calib, which times cuBLAS GEMMs, convolutions, memory-bound\n"
		   "kernels, attention (unfused, and fused by cuDNN's SDPA graphs where cuDNN\n"
		   "runs them; --no-sdpa skips those) and memory/PCIe bandwidth on the local\n"
		   "NVIDIA GPU (CUDA events, median of repeated runs after warm-up, results\n"
		   "checked against a reference first) and writes a profile that scenarios\n"
		   "name with \"compute\": {\"cost\": \"profile\", \"profile\": PATH}. See calib/README.md.\n\n"
		   "examples:\n"
		   "  ddlsim calib --self-test\n"
		   "  ddlsim calib --out calib/profiles/h100-sxm.json --csv calib/profiles/h100-sxm.csv\n\n"
		   "exit codes: 0 ok, 1 failure or tool not built, 2 usage, 4 no GPU\n");
}

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
