/* test-validation: the published-results suite (validation/, `ddlsim
 * validation`) against its ratchet, and the command's bad input.
 *
 * validation/ratchet.json records, per family and overall, the mean
 * absolute error of ddlsim's predictions against the published figures at
 * the time it was recorded (rounded up by about one percentage point).
 * The suite fails when an error rises above it; when the model improves,
 * lower the level. Every published run fitted on its GPUs, so a case the
 * memory anatomy reports as not fitting fails too. Never fit a constant to these cases (validation/README.md). */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* True if table row line (n bytes) is a run of testutil.h's known_not_fitting. */
static bool is_known_not_fitting(const char *line, size_t n)
{
	for (int i = 0; known_not_fitting[i]; i++) {
		size_t k = strlen(known_not_fitting[i]);
		if (n > k && !strncmp(line, known_not_fitting[i], k) && line[k] == ' ')
			return true;
	}
	return false;
}

/* Every row of table out reported as not fitting ("  NO" at its end) is
 * on the known list, and every listed run is among them. */
static void expect_fit_column(const char *out)
{
	int listed = 0, want = 0;
	for (const char *l = out; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		if (n > 4 && !strncmp(l + n - 4, "  NO", 4)) {
			bool known = is_known_not_fitting(l, n);
			cr_expect(known, "a published run is reported as not fitting:\n%.*s", (int)n, l);
			listed += known;
		}
		l = e ? e + 1 : NULL;
	}
	while (known_not_fitting[want])
		want++;
	cr_expect_eq(listed, want, "%d of the %d known non-fitting runs still do not fit: update the list",
		     listed, want);
}

Test(validation, suite_stays_within_the_ratchet_and_matches_the_shipped_bands, .timeout = 590)
{
	char args[4096], *out = NULL, *err = NULL;
	/* and the error bands compiled into ddlsim (validation/bands.json,
	 * sim/band.h) are what the suite gives now */
	snprintf(args, sizeof(args), "validation '%s' -j 2 --quiet --ratchet '%s' --check-bands '%s'",
		 src_path("validation"), src_path("validation/ratchet.json"), src_path("validation/bands.json"));
	int rc = run_ddlsim(args, &out, &err);
	cr_log_info("%s", out ? out : "");
	cr_assert_eq(rc, 0, "exit %d:\n%s\n%s", rc, out, err);
	cr_assert(strstr(out, "overall"), "%s", out);
	/* every case ran on its hardware: none may be reported as not fitting
	 * (the table's last column) but the known ones above */
	expect_fit_column(out);
	free(out);
	free(err);
}

/* A copy of the cheapest shipped case, with the published block given. */
static char *write_case(const char *dir, const char *published)
{
	char text[4096];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"parallel\": {\"tp\": 8, \"recompute\": \"full\"},\n"
		 " \"training\": {\"seq_len\": 2048, \"global_batch\": 4, \"micro_batch\": 4,\n"
		 "   \"precision\": \"fp16\", \"attention\": \"unfused\"}%s}\n",
		 src_path("models/zoo/megatron/gpt-22b.json"), src_path("topologies/dgx-a100.json"),
		 published);
	return write_file(dir, "case.json", text);
}

Test(validation, case_without_a_published_figure_is_invalid)
{
	char *dir = tmp_dir(), *err = NULL, args[2048], want[2048];
	char *path = write_case(dir, ", \"published\": {\"source\": \"nowhere\"}");
	snprintf(args, sizeof(args), "validation '%s'", path);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	snprintf(want, sizeof(want), "%s: /published: error: a validation case needs a published figure "
		 "(one of tflops_per_gpu, model_tflops_per_gpu, mfu, tokens_per_s, iteration_time_s, peak_memory_GiB)\n"
		 "ddlsim: 1 invalid validation input; nothing was simulated\n", path);
	cr_assert_str_eq(err, want);
	free(err);
	free(path);
	free(dir);
}

Test(validation, mfu_above_one_is_rejected)
{
	char *dir = tmp_dir(), *err = NULL, args[2048];
	char *path = write_case(dir, ", \"published\": {\"mfu\": 41.5, \"source\": \"x\"}");
	snprintf(args, sizeof(args), "validation '%s'", path);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	cr_assert(strstr(err, ": /published/mfu: error: expected a fraction in (0, 1], got 41.5\n"), "%s", err);
	free(err);
	free(path);
	free(dir);
}

Test(validation, exceeding_the_ratchet_exits_1_and_says_which)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, args[4096];
	char *path = write_case(dir, ", \"published\": {\"iteration_time_s\": 1.42, \"source\": \"x\"}");
	/* the family is the case's folder: the temporary directory's name */
	const char *fam = strrchr(dir, '/') + 1;
	char text[1024];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.validation-ratchet\", \"schema_version\": \"1.0\",\n"
		 " \"mean_abs_error_pct\": {\"%s\": 0.01, \"overall\": 100}}\n", fam);
	char *r = write_file(dir, "ratchet.json", text);
	snprintf(args, sizeof(args), "validation '%s' --quiet --ratchet '%s'", path, r);
	cr_assert_eq(run_ddlsim(args, &out, &err), 1, "%s%s", out, err);
	char want[1024];
	snprintf(want, sizeof(want), "ddlsim: ratchet: family '%s': mean absolute error ", fam);
	cr_assert(strstr(err, want) && strstr(err, "exceeds the recorded 0.01%\n"), "%s", err);
	cr_assert(strstr(out, "iteration_time_s"), "%s", out);
	free(out);
	free(err);
	free(r);
	free(path);
	free(dir);
}

Test(validation, ratchet_without_a_family_that_ran_is_invalid)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, args[4096], want[2048];
	char *path = write_case(dir, ", \"published\": {\"iteration_time_s\": 1.42, \"source\": \"x\"}");
	char *r = write_file(dir, "ratchet.json",
			     "{\"schema\": \"ddlsim.validation-ratchet\", \"schema_version\": \"1.0\",\n"
			     " \"mean_abs_error_pct\": {\"overall\": 100}}\n");
	snprintf(args, sizeof(args), "validation '%s' --quiet --ratchet '%s'", path, r);
	cr_assert_eq(run_ddlsim(args, &out, &err), 3, "%s%s", out, err);
	snprintf(want, sizeof(want), "%s: /mean_abs_error_pct: error: no level for family '%s', "
		 "which ran (record one)\n", r, strrchr(dir, '/') + 1);
	cr_assert(strstr(err, want), "%s", err);
	free(out);
	free(err);
	free(r);
	free(path);
	free(dir);
}

/* The bands a suite writes check clean against itself; a file that says
 * otherwise (a hand edit, or a model change without re-writing it) fails
 * with the family, both rows and how to re-write it. */
Test(validation, stale_bands_fail_the_check_and_say_which_family)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, args[4096], want[4096];
	char *path = write_case(dir, ", \"published\": {\"iteration_time_s\": 1.42, \"source\": \"x\"}");
	char bands[1200];
	snprintf(bands, sizeof(bands), "%s/bands.json", dir);
	snprintf(args, sizeof(args), "validation '%s' --quiet --write-bands '%s'", path, bands);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s%s", out, err);
	free(out);
	free(err);
	snprintf(args, sizeof(args), "validation '%s' --quiet --check-bands '%s'", path, bands);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s%s", out, err);
	free(out);
	free(err);
	/* one family's runs edited by hand */
	char text[8192];
	FILE *f = fopen(bands, "r");
	cr_assert(f);
	text[fread(text, 1, sizeof(text) - 1, f)] = 0;
	fclose(f);
	char *runs = strstr(text, "\"runs\": 1,");
	cr_assert(runs, "%s", text);
	runs[8] = '7';
	free(write_file(dir, "bands.json", text));
	cr_assert_eq(run_ddlsim(args, &out, &err), 1, "%s%s", out, err);
	snprintf(want, sizeof(want), "ddlsim: bands: family '%s': the suite gives {\"family\":\"%s\",\"runs\":1,",
		 strrchr(dir, '/') + 1, strrchr(dir, '/') + 1);
	cr_expect(strstr(err, want), "%s", err);
	cr_expect(strstr(err, "has {\"family\":\"") && strstr(err, "\"runs\":7,"), "%s", err);
	snprintf(want, sizeof(want), "ddlsim: bands: re-write them: ddlsim validation --write-bands %s", bands);
	cr_expect(strstr(err, want), "%s", err);
	free(out);
	free(err);
	free(path);
	free(dir);
}

/* A case that publishes only a peak memory figure is a memory case: it
 * is held against the anatomy's PyTorch-reserved figure in the memory
 * table (not the time table, not the bands), its family's statistics
 * under "<family>:memory"; its CSV row has the memory columns. */
Test(validation, a_memory_case_goes_to_the_memory_table, .timeout = 120)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, args[2048], csv[1200];
	char *path = write_case(dir, ", \"published\": {\"peak_memory_GiB\": 40, \"memory_measure\": \"reserved\", "
				     "\"source\": \"x\"}");
	snprintf(csv, sizeof(csv), "%s/v.csv", dir);
	snprintf(args, sizeof(args), "validation '%s' --quiet --csv '%s'", path, csv);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	const char *mem = strstr(out, "\nmemory (published peak per GPU");
	cr_assert(mem, "%s", out);
	cr_assert(strstr(mem, "reserved       40.00"), "%s", out);
	cr_assert(strstr(out, ":memory         1      0"), "%s", out);
	/* the time table's overall line counts no case */
	cr_assert(strstr(out, "\noverall                           0      0"), "%s", out);
	char *text = test_file_text(csv);
	cr_assert(text);
	cr_assert(strstr(text, ",memory_measure,published_memory_GiB,predicted_memory_GiB,memory_error\n"), "%s", text);
	cr_assert(strstr(text, ",reserved,40,"), "%s", text);
	free(text);
	free(out);
	free(err);
	free(path);
	free(dir);
}

Test(validation, a_memory_measure_needs_a_peak)
{
	char *dir = tmp_dir(), *err = NULL, args[2048];
	char *path = write_case(dir, ", \"published\": {\"mfu\": 0.4, \"memory_measure\": \"active\", \"source\": \"x\"}");
	snprintf(args, sizeof(args), "validation '%s'", path);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	cr_assert(strstr(err, ": /published/memory_measure: error: says what published.peak_memory_GiB counts, "
			      "but the block publishes no peak_memory_GiB\n"), "%s", err);
	free(err);
	free(path);
	free(dir);
}
