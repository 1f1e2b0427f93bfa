/* main.c - the ddlsim-calib command line: options, section order, exit codes.
 *
 * ddlsim-calib runs the selected sections (gemm, conv, mem, attn, bw) in
 * that order on one GPU, then writes the JSON profile and, if asked, the
 * raw CSV.  Any failed correctness check or CUDA error stops the run with
 * exit code 1 before anything is written.  --self-test runs only the
 * checks, at small sizes, and reports each one on stdout.  --help and
 * --version never touch the GPU.  Progress goes to stderr.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "samefile.h"

static const char *const only_names[CALIB_NSECTIONS] = { "gemm", "conv", "mem", "attn", "bw" };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--out PROFILE.json] [--csv RAW.csv] [--quick]\n"
		"                    [--only gemm,conv,mem,attn,bw] [--device N] [--self-test]\n"
		"                    [--no-sdpa] [--help] [--version]\n"
		"\n"
		"Measures GEMMs (cuBLAS/cuBLASLt), convolutions (cuDNN or the project's\n"
		"implicit GEMM), memory-bound kernels, attention (unfused, and fused by\n"
		"cuDNN's SDPA graphs where cuDNN runs them) and copy bandwidth\n"
		"on a local NVIDIA GPU and writes a ddlsim.profile 1.0 JSON file for the\n"
		"simulator.  Every kernel is checked against a CPU reference before it is\n"
		"timed; a failed check writes nothing.\n"
		"\n"
		"  --out PATH      JSON profile to write (default: <gpu-name>.json here)\n"
		"  --csv PATH      also write one CSV row per measured point\n"
		"  --quick         reduced grid (about a minute on an H100)\n"
		"  --only LIST     comma-separated sections to run (default: all)\n"
		"  --device N      CUDA device index (default 0)\n"
		"  --self-test     run only the correctness checks, at small sizes, and\n"
		"                  print one line per check and a summary; writes nothing\n"
		"  --no-sdpa       skip cuDNN fused attention (the attention section then\n"
		"                  holds the unfused entries only)\n"
		"  --help          this text\n"
		"  --version       print the version\n"
		"\n"
		"Examples:\n"
		"  %s --self-test\n"
		"  %s --out calib/profiles/h100-sxm.json --csv h100-sxm.csv\n"
		"  %s --quick --only gemm,bw --out /tmp/quick.json\n"
		"\n"
		"Exit status: 0 ok, 1 failure (failed check, CUDA error, cannot write),\n"
		"2 usage error, 4 no CUDA GPU found.\n",
		CALIB_NAME, CALIB_NAME, CALIB_NAME, CALIB_NAME);
}

static int usage_error(const char *fmt, const char *subject)
{
	fprintf(stderr, "%s: error: ", CALIB_NAME);
	fprintf(stderr, fmt, subject);
	fprintf(stderr, "\nTry '%s --help'.\n", CALIB_NAME);
	return CALIB_EXIT_USAGE;
}

static void say_same(void *ctx, const struct samefile_conflict *c)
{
	(void)ctx;
	fprintf(stderr, "%s: error: %s '%s' is also %s '%s': give it another file (the one would replace "
		"the other)\nTry '%s --help'.\n", CALIB_NAME, c->out_what, c->out_path, c->other_what,
		c->other_path, CALIB_NAME);
}

/* The profile and the raw CSV must be two files (util/samefile.h), said
 * before the GPU is touched. Returns 0 or CALIB_EXIT_USAGE. */
static int check_outputs(const char *out, const char *csv)
{
	struct samefile *sf = samefile_create();
	samefile_output(sf, "--csv", csv);
	samefile_output(sf, "--out", out);
	int n = samefile_check(sf, say_same, NULL);
	samefile_destroy(sf);
	return n ? CALIB_EXIT_USAGE : 0;
}

/* Parses --only's list into a section mask; 0 on an unknown name. */
static unsigned parse_only(const char *list, char *bad, size_t bad_size)
{
	unsigned mask = 0;
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ","), s;
		bool found = false;

		for (s = 0; s < CALIB_NSECTIONS; s++)
			if (strlen(only_names[s]) == len && strncmp(p, only_names[s], len) == 0) {
				mask |= 1u << s;
				found = true;
			}
		if (!found) {
			snprintf(bad, bad_size, "%.*s", (int)len, p);
			return 0;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	if (!mask)
		snprintf(bad, bad_size, "%s", list);
	return mask;
}

/* "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3.json" */
static void default_out(const char *gpu, char *out, size_t size)
{
	size_t n = 0;
	const char *p;

	for (p = gpu; *p && n + 6 < size; p++) {
		if (isalnum((unsigned char)*p))
			out[n++] = (char)tolower((unsigned char)*p);
		else if (n > 0 && out[n - 1] != '-')
			out[n++] = '-';
	}
	while (n > 0 && out[n - 1] == '-')
		n--;
	snprintf(out + n, size - n, "%s.json", n ? "" : "gpu");
}

/* The run goes on after an option (parse_option(), parse_args()). */
#define CALIB_GO_ON (-1)

/* --device N: an index 0..1024 into c->device; CALIB_GO_ON or the usage exit. */
static int parse_device(const char *arg, struct calib *c)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*arg == '\0' || *end != '\0' || v < 0 || v > 1024)
		return usage_error("bad device index '%s'", arg);
	c->device = (int)v;
	return CALIB_GO_ON;
}

/* One option getopt_long() returned, into c, *out and *csv; CALIB_GO_ON or the exit code
 * (--help and --version print and exit 0). */
static int parse_option(int opt, char **argv, struct calib *c, const char **out, const char **csv)
{
	char bad[64];

	switch (opt) {
	case 'o':
		*out = optarg;
		break;
	case 'c':
		*csv = optarg;
		break;
	case 'q':
		c->quick = true;
		break;
	case 'O':
		c->sections = parse_only(optarg, bad, sizeof(bad));
		if (!c->sections)
			return usage_error("unknown section, expected gemm, conv, mem, attn "
					   "or bw '%s'", bad);
		break;
	case 'd':
		return parse_device(optarg, c);
	case 't':
		c->self_test = true;
		break;
	case 'S':
		c->no_sdpa = true;
		break;
	case 'h':
		usage(stdout);
		return CALIB_EXIT_OK;
	case 'V':
		printf("%s %s (profile schema %s %s)\n", CALIB_NAME, DDLSIM_VERSION,
		       CALIB_SCHEMA, CALIB_SCHEMA_VERSION);
		return CALIB_EXIT_OK;
	default:
		return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
	}
	return CALIB_GO_ON;
}

/* The command line into c, *out and *csv, checked before the GPU is touched;
 * CALIB_GO_ON or the exit code. */
static int parse_args(int argc, char **argv, struct calib *c, const char **out, const char **csv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "csv", required_argument, NULL, 'c' },
		{ "quick", no_argument, NULL, 'q' },
		{ "only", required_argument, NULL, 'O' },
		{ "device", required_argument, NULL, 'd' },
		{ "self-test", no_argument, NULL, 't' },
		{ "no-sdpa", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, rc;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1)
		if ((rc = parse_option(opt, argv, c, out, csv)) != CALIB_GO_ON)
			return rc;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (c->self_test && (*out || *csv))
		return usage_error("--self-test writes no files '%s'", *out ? *out : *csv);
	if (*out && *csv && check_outputs(*out, *csv))
		return CALIB_EXIT_USAGE;
	return CALIB_GO_ON;
}

/* Whether c->device names a CUDA GPU of this machine; CALIB_GO_ON or the exit code. */
static int check_device(const struct calib *c)
{
	char bad[64], why[256];
	int count = 0;

	if (device_info_count(&count, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s: error: no CUDA GPU found (cudaGetDeviceCount: %s)\n",
			CALIB_NAME, why);
		return CALIB_EXIT_NO_GPU;
	}
	if (c->device >= count) {
		snprintf(bad, sizeof(bad), "%d", c->device);
		return usage_error("no such device, see nvidia-smi '%s'", bad);
	}
	return CALIB_GO_ON;
}

/* Runs the selected sections in order (and, calibrating GEMMs, the interference
 * bench); -1 at the first that fails. */
static int run_sections(struct calib *c)
{
	int (*const sections[CALIB_NSECTIONS])(struct calib *) = {
		bench_gemm, bench_conv, bench_mem, bench_attn, bench_bw,
	};

	for (int s = 0; s < CALIB_NSECTIONS; s++) {
		double ts = calib_now_s();

		if (!(c->sections & (1u << s)))
			continue;
		calib_progress("section %s", only_names[s]);
		if (sections[s](c) < 0)
			return -1;
		calib_progress("section %s done in %.1f s", only_names[s], calib_now_s() - ts);
	}
	if (!c->self_test && (c->sections & 1u) && bench_interference(c) < 0)
		return -1;
	return 0;
}

/* After the sections: the self-test's summary, or the profile (and the raw CSV)
 * written; the exit code. */
static int finish(struct calib *c, const char *out, const char *csv, double t0)
{
	if (c->self_test) {
		printf("%d passed, %d failed\n", c->checks_passed, c->checks_failed);
		return c->checks_failed ? CALIB_EXIT_FAILURE : CALIB_EXIT_OK;
	}
	if (profile_write_json(c, out) < 0)
		return CALIB_EXIT_FAILURE;
	if (csv && profile_write_csv(c, csv) < 0)
		return CALIB_EXIT_FAILURE;
	calib_progress("%zu points (%d checks passed) in %.1f s written to %s%s%s", c->npoints,
		       c->checks_passed, calib_now_s() - t0, out, csv ? " and " : "", csv ? csv : "");
	return CALIB_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct calib c;
	const char *out = NULL, *csv = NULL;
	char out_buf[256];
	int rc;
	double t0;

	memset(&c, 0, sizeof(c));
	c.sections = (1u << CALIB_NSECTIONS) - 1;
	c.seed = 0x5eedca11b0000001ull;
	if ((rc = parse_args(argc, argv, &c, &out, &csv)) != CALIB_GO_ON)
		return rc;
	c.warmup_runs = c.quick ? 3 : 5;
	c.timed_runs = c.quick ? 10 : 20;

	if ((rc = check_device(&c)) != CALIB_GO_ON)
		return rc;
	rc = CALIB_EXIT_FAILURE;
	if (calib_open(&c) < 0)
		goto out;
	if (!out && !c.self_test) {
		default_out(c.prop.name, out_buf, sizeof(out_buf));
		out = out_buf;
		if (csv && (rc = check_outputs(out, csv)))
			goto out;
		rc = CALIB_EXIT_FAILURE;
	}
	calib_progress("%s on device %d: %s, compute capability %d.%d, %d SMs, L2 %zu MiB%s",
		       c.self_test ? "self-test" : "calibration", c.device, c.prop.name,
		       c.prop.major, c.prop.minor, c.prop.multiProcessorCount, c.l2_bytes >> 20,
		       c.quick ? ", quick" : "");
#ifndef HAVE_CUDNN
	calib_progress("built without cuDNN: convolutions use the project's implicit GEMM");
#endif
	t0 = calib_now_s();
	if (run_sections(&c) < 0)
		goto out;
	rc = finish(&c, out, csv, t0);
out:
	calib_close(&c);
	return rc;
}
