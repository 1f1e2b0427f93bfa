/* cmd_import: `ddlsim import FORMAT INPUT -o OUT.json`: a framework's own
 * configuration read into ddlsim's files (import/import.h).
 *
 * hf: a Hugging Face config.json becomes the model file OUT. megatron:
 * Megatron-LM pretrain_gpt.py arguments (a launch file, or the words after
 * `--`) become the scenario OUT and its model file beside it
 * (OUT less ".json" plus ".model.json"), on the cluster --topology with
 * --nodes (or the nodes the batch implies). torchtitan: a job file (TOML)
 * becomes the scenario OUT on the shipped model of its llama3 flavor
 * (--zoo, default models/zoo), on --topology with --nodes (or the
 * product of its degrees). deepspeed: a DeepSpeed config JSON becomes
 * the scenario OUT on --model (a ddlsim model file, referenced, or a
 * Hugging Face config.json, imported beside OUT as megatron's model) with
 * --seq-len tokens, on --topology with --nodes. nemo: a NeMo 2 recipe
 * printed as YAML (or a Megatron-Bridge config) becomes the scenario OUT
 * and its model beside it, as megatron's. Every key or flag is a row of the mapping table, printed
 * and, with --map, written as CSV.
 *
 * Nothing is written unless every document loads: the model is staged
 * and loaded by model_load(), the scenario by scenario_load_json() (its
 * plan checked against the model and topology), with the staged model's
 * name replaced by the final one in what they report, and each error at a
 * key the import set said at the user's key or flag that set it
 * (import_map_explain(): "launch.sh:8:5: error: --num-layers: ...
 * (ddlsim's model key /layers)"). The outputs are
 * then published together (util/atomic_file.h); an existing output is
 * replaced only with --force. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "cli.h"
#include "diag.h"
#include "import.h"
#include "infile.h"
#include "model.h"
#include "options.h"
#include "samefile.h"
#include "scenario.h"
#include "scenario_write.h"
#include "topology.h"
#include "xalloc.h"

struct import_opts {
	const char *out;            /* -o */
	const char *topology;
	long nodes;
	const char *map;
	const char *zoo;
	const char *model;
	long seq_len;
	bool force;
};

static const struct opt import_options[] = {
	OPT_STRING('o', "output", struct import_opts, out, "OUT.json",
		   "the file to write: the model (hf) or the scenario (megatron,\n"
		   "nemo, deepspeed with a config.json: its model beside it as\n"
		   "OUT.model.json); required"),
	OPT_FILE(0, "topology", struct import_opts, topology, "FILE",
		 "megatron, torchtitan, deepspeed, nemo: the cluster's topology\n"
		 "file (topologies/); required"),
	OPT_LONG(0, "nodes", struct import_opts, nodes, "N", 1, TOPO_MAX_NODES,
		 "megatron, torchtitan, deepspeed, nemo: nodes of the job\n"
		 "(default: megatron tp x pp x cp x dp GPUs, dp = global batch /\n"
		 "micro batch; torchtitan the product of its degrees; deepspeed\n"
		 "train / (micro x accumulation) GPUs; nemo trainer.num_nodes)"),
	OPT_FILE(0, "model", struct import_opts, model, "FILE",
		 "deepspeed: the model, a ddlsim model file (models/zoo/) or a\n"
		 "Hugging Face config.json; required"),
	OPT_LONG(0, "seq-len", struct import_opts, seq_len, "N", 1, 1L << 30,
		 "deepspeed: the training sequence in tokens (the config holds\n"
		 "none); required"),
	OPT_STRING(0, "zoo", struct import_opts, zoo, "DIR",
		   "torchtitan: the folder of the shipped models (default models/zoo)"),
	OPT_FILE(0, "map", struct import_opts, map, "FILE.csv", "also write the mapping table as CSV"),
	OPT_FLAG(0, "force", struct import_opts, force, "replace outputs that exist"),
	OPT_END(),
};

const struct opt_cmd cmd_import_opts = {
	.name = "import",
	.summary = "read a Hugging Face, Megatron-LM, torchtitan, DeepSpeed or NeMo configuration",
	.args = "FORMAT INPUT...",
	.description =
		"FORMAT hf: INPUT is a Hugging Face config.json (llama, mistral, qwen2, qwen3,\n"
		"mixtral, deepseek_v3, gpt2); OUT is a model file (ddlsim.model 1.3).\n"
		"FORMAT megatron: INPUT is a file of Megatron-LM pretrain_gpt.py arguments\n"
		"(shell comments, line continuations and quotes allowed; the words before the\n"
		"script are the launcher's), or the arguments themselves after `--`; OUT is a\n"
		"scenario (framework megatron-core@0.9) and OUT.model.json its model. Flags\n"
		"left out take Megatron-LM core_v0.9.0's defaults (docs/import.md).\n"
		"FORMAT torchtitan: INPUT is a torchtitan job file (--job.config_file, TOML);\n"
		"OUT is a scenario on the shipped model of its llama3 flavor (8B, 70B, 405B).\n"
		"Keys left out take torchtitan v0.1.0's defaults (docs/import.md).\n"
		"FORMAT deepspeed: INPUT is a DeepSpeed config JSON (ds_config); OUT is a\n"
		"scenario (framework deepspeed@0.15) on --model with --seq-len tokens. Keys\n"
		"left out take DeepSpeed v0.15.0's defaults (docs/import.md).\n"
		"FORMAT nemo: INPUT is a NeMo 2 recipe printed as YAML (trainer, model.config,\n"
		"data, optim) or a Megatron-Bridge config (model, train, dataset, ddp,\n"
		"optimizer); OUT is a scenario (framework nemo@2.0) and OUT.model.json its\n"
		"model, read through Megatron-LM's flags and defaults (docs/import.md).\n"
		"The mapping table goes to stdout: each key or flag, its value, the ddlsim key\n"
		"it set and the value written, and its status: mapped, default, derived,\n"
		"ignored (no effect on time or memory) or unknown (not applied). A\n"
		"contradiction the framework itself refuses is an error naming the flag.\n"
		"Nothing is written unless the files load; existing files need --force.\n",
	.options = import_options,
	.epilogue =
		"examples:\n"
		"  ddlsim import hf config.json -o models/mine.json\n"
		"  ddlsim import megatron launch.sh -o run.json --topology topologies/dgx-h100.json --nodes 4\n"
		"  ddlsim import megatron -o run.json --topology topologies/dgx-h100.json -- \\\n"
		"      --num-layers 32 --hidden-size 4096 ...\n"
		"  ddlsim import torchtitan llama3_8b.toml -o run.json --topology topologies/dgx-h100.json --nodes 8\n"
		"  ddlsim import deepspeed ds_config.json -o run.json --topology topologies/dgx-h100.json \\\n"
		"      --model models/zoo/llama2-13b.json --seq-len 4096 --nodes 1\n"
		"  ddlsim import nemo llama3_8b.yaml -o run.json --topology topologies/dgx-h100.json\n\n"
		"exit codes: 0 ok, 1 cannot write an output, 2 usage, 3 invalid input (a key or\n"
		"flag the framework refuses, a file that does not load, an output that exists\n"
		"without --force or is an input)\n",
	.size = sizeof(struct import_opts),
};

/* Replace every occurrence of from in s by to (new string). */
static char *replace_all(const char *s, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to), n = 0;
	for (const char *p = s; (p = strstr(p, from)); p += fl)
		n++;
	char *out = xmalloc(strlen(s) + n * (tl > fl ? tl - fl : 0) + 1), *o = out;
	for (const char *p = s;;) {
		const char *q = strstr(p, from);
		if (!q) {
			strcpy(o, p);
			break;
		}
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, to, tl);
		o += tl;
		p = q + fl;
	}
	return out;
}

/* What a check reported, the staged file's name tmp (NULL: none)
 * replaced by the final one, each error at a key the import set said at
 * the user's key or flag (import_map_explain()), to stderr. */
static void say(const struct diag *q, const char *tmp, const char *final, const struct import_map *map,
		const struct import_inputs *in)
{
	char *s = tmp ? replace_all(diag_text(q), tmp, final) : xstrdup(diag_text(q));
	char *e = import_map_explain(map, s, in);
	fputs(e, stderr);
	free(e);
	free(s);
}

/* Stage doc at path into af. Returns 0, or EXIT_FAIL after saying why. */
static int stage_json(struct atomic_file *af, const char *path, const json_t *doc)
{
	int e = atomic_file_open(af, path);
	if (!e && (json_dumpf(doc, af->f, JSON_INDENT(2)) || fputc('\n', af->f) == EOF))
		e = -EIO;
	if (!e)
		e = atomic_file_stage(af);
	if (e) {
		atomic_file_abort(af);
		fprintf(stderr, "%s: error: cannot write: %s\n", path, atomic_file_strerror(-e));
		return e == -ATOMIC_FILE_ENOTREG ? EXIT_INPUT : EXIT_FAIL;
	}
	return 0;
}

static void samefile_say(void *ctx, const struct samefile_conflict *c)
{
	(void)ctx;
	if (c->other_is_input)
		fprintf(stderr, "ddlsim: %s '%s': error: is an input of this command (%s '%s'); refusing to "
			"overwrite it\n", c->out_what, c->out_path, c->other_what, c->other_path);
	else
		fprintf(stderr, "ddlsim: error: %s '%s' is also %s '%s': give it another file\n", c->out_what,
			c->out_path, c->other_what, c->other_path);
}

/* An output that exists without --force. Returns 0 or EXIT_INPUT. */
static int refuse_existing(const char *path, bool force)
{
	struct stat st;
	if (!path || force || lstat(path, &st))
		return 0;
	fprintf(stderr, "ddlsim: error: '%s' exists; refusing to replace it (give --force)\n", path);
	return EXIT_INPUT;
}

/* The text of a launch file. Caller frees; NULL after saying why. */
static char *read_text(const char *path)
{
	char why[512];
	FILE *f = infile_open(path, why, sizeof(why));
	if (!f) {
		fprintf(stderr, "%s: error: %s\n", path, why);
		return NULL;
	}
	size_t cap = 4096, len = 0, r;
	char *s = xmalloc(cap);
	while ((r = fread(s + len, 1, cap - len - 1, f)) > 0) {
		len += r;
		if (len + 1 == cap)
			s = xreallocarray(s, cap *= 2, 1);
	}
	s[len] = 0;
	fclose(f);
	if (strlen(s) != len) {
		fprintf(stderr, "%s: error: holds a NUL byte, expected text\n", path);
		free(s);
		return NULL;
	}
	return s;
}

/* Stage the model (hf: OUT; megatron: OUT.model.json), check it by
 * loading it (megatron: the scenario, with its plan, naming the staged
 * model), stage the scenario and the CSV, publish them together and print
 * the table. Returns EXIT_OK, EXIT_INPUT (a document does not load) or
 * EXIT_FAIL (a write); nothing is written unless all is. */
static int write_outputs(const struct import_opts *o, const char *model_out, const char *model_path,
			 const json_t *model, const json_t *sc, const struct import_map *map,
			 const struct import_inputs *in)
{
	struct atomic_file af[3] = { { 0 } };
	int naf = 0, rc;
	if (model && (rc = stage_json(&af[naf++], model_out, model)))
		return rc;
	char *staged_model = xstrdup(model ? af[0].tmp : "");
	struct diag q;
	diag_init(&q, NULL);
	if (!model) {
		json_t *copy = json_deep_copy(sc);
		struct scenario *s = scenario_load_json(copy, o->out, NULL, &q);
		scenario_destroy(s);
		json_decref(copy);
	} else if (!sc) {
		struct model *m = model_load(staged_model, &q);
		model_destroy(m);
	} else {
		char *abs = realpath(staged_model, NULL);
		json_t *copy = json_deep_copy(sc);
		json_object_set_new(copy, "model", json_string(abs ? abs : staged_model));
		struct scenario *s = scenario_load_json(copy, o->out, NULL, &q);
		scenario_destroy(s);
		json_decref(copy);
		free(abs);
	}
	int bad = diag_count(&q);
	say(&q, model ? staged_model : NULL, model_out, map, in);
	diag_finish(&q);
	free(staged_model);
	if (bad) {
		fprintf(stderr, "ddlsim: error: the imported %s does not load (above); nothing written\n",
			sc ? "scenario" : "model");
		rc = EXIT_INPUT;
		goto out_abort;
	}
	if (sc && (rc = stage_json(&af[naf++], o->out, sc)))
		goto out_abort;
	if (o->map) {
		struct atomic_file *a = &af[naf++];
		int e = atomic_file_open(a, o->map);
		if (!e && import_map_write_csv(map, a->f))
			e = -EIO;
		if (!e)
			e = atomic_file_stage(a);
		if (e) {
			fprintf(stderr, "%s: error: cannot write: %s\n", o->map, atomic_file_strerror(-e));
			rc = e == -ATOMIC_FILE_ENOTREG ? EXIT_INPUT : EXIT_FAIL;
			goto out_abort;
		}
	}
	int e = atomic_file_publish(af, naf);
	if (e) {
		fprintf(stderr, "ddlsim: error: cannot publish the outputs: %s\n", atomic_file_strerror(-e));
		return EXIT_FAIL;
	}
	import_map_print(map, stdout);
	if (!sc || !model)
		printf("wrote %s\n", o->out);
	else
		printf("wrote %s and its model %s (ddlsim run %s)\n", o->out, model_path, o->out);
	return EXIT_OK;
out_abort:
	for (int i = 0; i < naf; i++)
		atomic_file_abort(&af[i]);
	return rc;
}

/* The formats import reads. */
enum import_format { FMT_HF, FMT_MEGATRON, FMT_TORCHTITAN, FMT_DEEPSPEED, FMT_NEMO };

static const char *const format_names[] = {
	[FMT_HF] = "hf", [FMT_MEGATRON] = "megatron", [FMT_TORCHTITAN] = "torchtitan",
	[FMT_DEEPSPEED] = "deepspeed", [FMT_NEMO] = "nemo",
};

/* What an import holds between its steps; import_job_finish() frees it. */
struct import_job {
	struct import_opts o;
	const char **pos;           /* FORMAT INPUT... */
	int npos;
	enum import_format fmt;
	bool args;                  /* megatron: the arguments themselves after `--` */
	struct diag d;
	struct import_map *map;
	json_t *model, *sc;
	json_t *ds_model;           /* deepspeed --model: a ddlsim model file when its schema says so */
	char *model_path, *text, *topo_ref;
	struct topology *topo;
};

/* FORMAT, or -1 when it names none. */
static int format_find(const char *name)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (!strcmp(name, format_names[i]))
			return (int)i;
	return -1;
}

/* The FORMAT and INPUT words. Returns 0 or EXIT_USAGE after saying why. */
static int check_positionals(struct import_job *j)
{
	if (j->npos < 1)
		return cli_usage_error("import: expected a FORMAT (hf, megatron, torchtitan, deepspeed or nemo) and "
				       "its INPUT");
	int f = format_find(j->pos[0]);
	if (f < 0)
		return cli_usage_error("import: FORMAT: expected hf, megatron, torchtitan, deepspeed or nemo, got '%s'",
				       j->pos[0]);
	j->fmt = (enum import_format)f;
	if (j->npos < 2)
		return cli_usage_error("import %s: expected its INPUT", j->pos[0]);
	/* megatron's arguments after `--` start with a flag; a file does not */
	j->args = j->fmt == FMT_MEGATRON && !strncmp(j->pos[1], "--", 2);
	if (!j->args && j->npos > 2)
		return cli_usage_error("import %s: expected one INPUT file, got %d (the arguments themselves go after "
				       "`--`)", j->pos[0], j->npos - 1);
	return 0;
}

/* What holds no cluster, in the --topology message. */
static const char *const input_lacking_cluster[] = {
	[FMT_MEGATRON] = "arguments", [FMT_TORCHTITAN] = "job file", [FMT_DEEPSPEED] = "config",
	[FMT_NEMO] = "recipe",
};

/* The options against the FORMAT. Returns 0 or EXIT_USAGE after saying
 * why. */
static int check_options(const struct import_job *j)
{
	const struct import_opts *o = &j->o;
	enum import_format f = j->fmt;
	if (!o->out || !strcmp(o->out, "-") || (o->map && !strcmp(o->map, "-")))
		return cli_usage_error("import: -o OUT.json is required, a file (stdout holds the mapping table)");
	if (f == FMT_HF && (o->topology || o->nodes))
		return cli_usage_error("import hf: writes a model file only; --topology and --nodes are megatron's");
	if (f != FMT_HF && !o->topology)
		return cli_usage_error("import %s: --topology FILE is required (the %s holds no cluster)", j->pos[0],
				       input_lacking_cluster[f]);
	if (f != FMT_TORCHTITAN && o->zoo)
		return cli_usage_error("import %s: --zoo is torchtitan's", j->pos[0]);
	if (f != FMT_DEEPSPEED && (o->model || o->seq_len))
		return cli_usage_error("import %s: --model and --seq-len are deepspeed's", j->pos[0]);
	if (f == FMT_DEEPSPEED && (!o->model || !o->seq_len))
		return cli_usage_error("import deepspeed: --model FILE and --seq-len N are required (a DeepSpeed "
				       "config holds neither the model nor the sequence)");
	return 0;
}

/* deepspeed --model: j->ds_model its path when it is a ddlsim model file
 * (schema "ddlsim.model"), else NULL (a Hugging Face config.json). */
static void probe_ds_model(struct import_job *j)
{
	json_error_t je;
	json_t *doc = json_load_file(j->o.model, 0, &je);
	json_t *schema = json_object_get(doc, "schema");
	bool zoo = json_is_string(schema) && !strcmp(json_string_value(schema), "ddlsim.model");
	json_decref(doc);
	if (zoo)
		j->ds_model = json_string(j->o.model);
}

/* OUT less ".json" plus ".model.json". Caller frees. */
static char *model_path_beside(const char *out)
{
	size_t l = strlen(out);
	return l > 5 && !strcmp(out + l - 5, ".json") ? xasprintf("%.*s.model.json", (int)(l - 5), out) :
							xasprintf("%s.model.json", out);
}

/* The INPUT, in what samefile says. */
static const char *const input_what[] = {
	[FMT_HF] = "the config.json", [FMT_MEGATRON] = "the launch", [FMT_TORCHTITAN] = "the job file",
	[FMT_DEEPSPEED] = "the config", [FMT_NEMO] = "the recipe",
};

/* Outputs that are not files, exist without --force, or are an input or
 * one another. Returns 0 or nonzero after saying why. */
static int check_outputs(const struct import_job *j)
{
	const struct import_opts *o = &j->o;
	if (cli_check_output(o->out) || cli_check_output(j->model_path) || cli_check_output(o->map) ||
	    refuse_existing(o->out, o->force) || refuse_existing(j->model_path, o->force) ||
	    refuse_existing(o->map, o->force))
		return 1;
	struct samefile *sf = samefile_create();
	if (!j->args)
		samefile_input(sf, input_what[j->fmt], j->pos[1]);
	samefile_input(sf, "the topology", o->topology);
	if (o->model)
		samefile_input(sf, "the model", o->model);
	samefile_output(sf, "-o", o->out);
	samefile_output(sf, "the model beside -o", j->model_path);
	samefile_output(sf, "--map", o->map);
	int conflicts = samefile_check(sf, samefile_say, NULL);
	samefile_destroy(sf);
	return conflicts;
}

/* Path from where the scenario is written (caller frees), or NULL after
 * saying why. */
static char *ref_from_out(const char *out, const char *path)
{
	char *ref = scenario_path_from(out, path);
	if (!ref)
		fprintf(stderr, "%s: error: cannot name it from '%s': %s\n", path, out, strerror(errno));
	return ref;
}

/* Load --topology into j->topo and fill *c, the scenario naming its
 * topology from where it is written. Returns 0 or -1 after saying why. */
static int load_cluster(struct import_job *j, struct import_cluster *c)
{
	if (!(j->topo = topology_load(j->o.topology, &j->d)))
		return -1;
	if (!(j->topo_ref = ref_from_out(j->o.out, j->o.topology)))
		return -1;
	*c = (struct import_cluster){ .topology = j->topo_ref, .gpus_per_node = j->topo->gpus_per_node,
				      .nodes = j->o.nodes };
	return 0;
}

/* The model's name in the scenario: the model path's last component, or
 * NULL without one. */
static const char *model_ref(const struct import_job *j)
{
	if (!j->model_path)
		return NULL;
	const char *slash = strrchr(j->model_path, '/');
	return slash ? slash + 1 : j->model_path;
}

static int import_run_nemo(struct import_job *j)
{
	struct import_cluster c;
	if (load_cluster(j, &c))
		return -1;
	if (!(j->text = read_text(j->pos[1])))
		return -1;
	return import_nemo(j->text, j->pos[1], &c, model_ref(j), j->map, &j->model, &j->sc, &j->d);
}

static int import_run_deepspeed(struct import_job *j)
{
	struct import_cluster c;
	if (load_cluster(j, &c))
		return -1;
	if (!j->ds_model && !(j->model = import_hf(j->o.model, j->map, &j->d)))
		return -1;
	if (import_deepspeed(j->pos[1], &c, j->o.seq_len, j->map, &j->sc, &j->d))
		return -1;
	char *ref = j->ds_model ? ref_from_out(j->o.out, j->o.model) : xstrdup(model_ref(j));
	if (!ref)
		return -1;
	json_object_set_new(j->sc, "model", json_string(ref));
	if (j->ds_model)
		import_map_add(j->map, IMPORT_MAPPED, "(--model)", j->o.model, "scenario: /model", ref,
			       "a ddlsim model file, referenced");
	free(ref);
	return 0;
}

static int import_run_torchtitan(struct import_job *j)
{
	struct import_cluster c;
	if (load_cluster(j, &c))
		return -1;
	const char *zoo_file;
	if (!(j->text = read_text(j->pos[1])) ||
	    import_torchtitan(j->text, j->pos[1], &c, j->map, &j->sc, &zoo_file, &j->d))
		return -1;
	const char *zoo = j->o.zoo ? j->o.zoo : "models/zoo";
	char *zoo_path = xasprintf("%s/%s", zoo, zoo_file);
	if (access(zoo_path, R_OK)) {
		fprintf(stderr, "ddlsim: error: --zoo '%s': cannot read the flavor's model '%s': %s (%s; "
			"give --zoo DIR, the models/zoo folder of ddlsim's source)\n", zoo, zoo_file,
			strerror(errno), j->o.zoo ? "the folder given" : "the default, below the working "
			"directory");
		free(zoo_path);
		return -1;
	}
	char *ref = ref_from_out(j->o.out, zoo_path);
	free(zoo_path);
	if (!ref)
		return -1;
	json_object_set_new(j->sc, "model", json_string(ref));
	free(ref);
	return 0;
}

static int import_run_megatron(struct import_job *j)
{
	struct import_cluster c;
	if (load_cluster(j, &c))
		return -1;
	if (!j->args && !(j->text = read_text(j->pos[1])))
		return -1;
	return import_megatron(j->text, j->args ? NULL : j->pos[1], j->args ? j->npos - 1 : 0,
			       (char **)(j->pos + 1), &c, model_ref(j), j->map, &j->model, &j->sc, &j->d);
}

/* Read INPUT by its FORMAT into j->model and j->sc. Returns 0 or -1
 * after saying why. */
static int import_run(struct import_job *j)
{
	switch (j->fmt) {
	case FMT_HF:
		return (j->model = import_hf(j->pos[1], j->map, &j->d)) ? 0 : -1;
	case FMT_NEMO:
		return import_run_nemo(j);
	case FMT_DEEPSPEED:
		return import_run_deepspeed(j);
	case FMT_TORCHTITAN:
		return import_run_torchtitan(j);
	case FMT_MEGATRON:
		return import_run_megatron(j);
	}
	return -1;
}

/* Check the command line, the inputs and outputs, import and write.
 * Returns the exit code. */
static int import_main(struct import_job *j, int argc, char **argv)
{
	int rc;
	if (opt_parse(&cmd_import_opts, argc, argv, &j->o, j->pos, &j->npos))
		return EXIT_USAGE;
	if ((rc = check_positionals(j)) || (rc = check_options(j)))
		return rc;
	if (!j->args && cli_check_input_name(j->pos[1]))
		return EXIT_INPUT;
	if (j->fmt == FMT_DEEPSPEED)
		probe_ds_model(j);
	if (j->fmt == FMT_MEGATRON || j->fmt == FMT_NEMO || (j->fmt == FMT_DEEPSPEED && !j->ds_model))
		j->model_path = model_path_beside(j->o.out);
	if (check_outputs(j) || import_run(j))
		return EXIT_INPUT;
	const char *model_out = j->model_path ? j->model_path : j->o.out;
	const char *input = j->args ? NULL : j->pos[1];
	struct import_inputs in = {
		.model_path = model_out, .scenario_path = j->sc ? j->o.out : NULL,
		.model_input = j->fmt == FMT_DEEPSPEED ? j->o.model : input, .scenario_input = input,
		.json = j->fmt == FMT_HF || j->fmt == FMT_DEEPSPEED,
	};
	return write_outputs(&j->o, model_out, j->model_path, j->model, j->sc, j->map, &in);
}

int cmd_import(int argc, char **argv)
{
	struct import_job j = { .pos = xcalloc((size_t)argc + 1, sizeof(*j.pos)) };
	diag_init(&j.d, stderr);
	j.map = import_map_create();
	int rc = import_main(&j, argc, argv);
	json_decref(j.ds_model);
	if (rc == EXIT_INPUT && import_map_rows(j.map))
		import_map_print(j.map, stderr);
	topology_destroy(j.topo);
	json_decref(j.model);
	json_decref(j.sc);
	free(j.topo_ref);
	free(j.text);
	free(j.model_path);
	import_map_destroy(j.map);
	diag_finish(&j.d);
	free(j.pos);
	return rc;
}
