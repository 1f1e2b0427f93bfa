/* import: a training framework's own configuration read into ddlsim's
 * files, with the table of what became what.
 *
 * A user who trains with Hugging Face transformers or Megatron-LM already
 * holds the model's config.json or the launch's arguments; an importer
 * reads them and builds the documents ddlsim reads (a "ddlsim.model" 1.3
 * file; for Megatron-LM also a "ddlsim.scenario" 1.0 file), never writing
 * a file itself (the command does: cli/cmd_import.c). Every key or flag it
 * reads becomes one row of a struct import_map: mapped (the ddlsim key it
 * set and the value written), a default (the source's own default applied
 * where the flag or key is absent, cited in the importer), derived (a value
 * computed from others), ignored (no effect on time or memory) or unknown
 * (ddlsim cannot express it): nothing is dropped silently. A contradiction
 * the source itself refuses is an error naming the key or flag.
 *
 * The importers sit above models/ (they report into a struct diag) and
 * know no plan, topology or engine: the command loads the topology, checks
 * the documents by loading them (the scenario's plan against its model and
 * topology), and writes them together, atomically, only when both load;
 * an existing file is replaced only with --force. Exit codes: 0 written,
 * 1 an output could not be written, 2 usage, 3 invalid input (a key or flag
 * the source refuses, a document that does not load, an output that exists
 * or is an input).
 *
 * Formats read: Hugging Face config.json (import_hf.c), Megatron-LM
 * arguments (import_megatron.c), torchtitan job files (TOML,
 * import_torchtitan.c, read by toml.c), DeepSpeed configs (JSON,
 * import_deepspeed.c) and NeMo 2 recipes printed as YAML or
 * Megatron-Bridge configs (import_nemo.c, read by yaml.c, mapped through
 * import_megatron.c's flags). */
#ifndef DDLSIM_IMPORT_H
#define DDLSIM_IMPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "diag.h"

enum import_status {
	IMPORT_MAPPED,      /* the source's value set a ddlsim key */
	IMPORT_DEFAULT,     /* absent: the source's default applied (cited) */
	IMPORT_DERIVED,     /* computed from other keys (the note says how) */
	IMPORT_IGNORED,     /* no effect on time or memory */
	IMPORT_UNKNOWN,     /* ddlsim does not know it: not applied */
};

/* The mapping table: one row per source key or flag, in the order read. */
struct import_map;

/* A new, empty table (import_map_destroy()). */
struct import_map *import_map_create(void);
void import_map_destroy(struct import_map *m);

/* Append a row. source: the key or flag ("num_hidden_layers",
 * "--num-layers"); value: as the source gave it ("" when absent); key: the
 * ddlsim key set ("model: layers", "scenario: /parallel/tp"; "" when none);
 * written: the value written ("" when none); note: why (NULL: none). The
 * strings are copied. */
void import_map_add(struct import_map *m, enum import_status st, const char *source, const char *value,
		    const char *key, const char *written, const char *note);

/* Give the row added last its place in the source: "launch.sh:12:3" (a
 * format with lines) or "config.json: /num_hidden_layers" (a JSON
 * pointer). Copied. */
void import_map_locate(struct import_map *m, const char *where);

/* Where a ddlsim key came from (borrowed from the table). */
struct import_origin {
	enum import_status st;
	const char *source;         /* the key or flag ("--seq-length") */
	const char *value;          /* as the source gave it ("" absent) */
	const char *written;        /* the value written */
	const char *note;
	const char *where;          /* import_map_locate()'s ("" none) */
};

/* The row that set ptr (a JSON pointer, "/training/seq_len") of doc
 * ("model" or "scenario"), a row whose source gave a value first, into o.
 * Returns false when no row set it. */
bool import_map_origin(const struct import_map *m, const char *doc, const char *ptr, struct import_origin *o);

/* The files of an import, for import_map_explain(). */
struct import_inputs {
	const char *model_path;     /* the model written, as the loader names it */
	const char *scenario_path;  /* the scenario written (NULL: none) */
	const char *model_input;    /* the user's file the model came from (NULL: the command line) */
	const char *scenario_input; /* the user's file the scenario came from */
	bool json;                  /* the inputs are JSON: a key's place is its pointer */
};

/* Text (what the loaders said about the imported documents, a message a
 * line) with each error at a JSON pointer of the model or the scenario
 * said at the source's key or flag that set it: "WHERE: error: [SOURCE: ]
 * MESSAGE (ddlsim's model key /layers...)". WHERE: the row's place, else
 * (a JSON input) the input's pointer of the key, else the input's name.
 * Other lines are kept. Caller frees. */
char *import_map_explain(const struct import_map *m, const char *text, const struct import_inputs *in);

/* Rename the source of every row whose source is from (a Megatron-LM
 * flag "--num-layers") to to ("model.config.num_layers"); value and note,
 * when not NULL, and st, when >= 0, replace such a row's. */
void import_map_rename(struct import_map *m, const char *from, const char *to, const char *value, int st,
		       const char *note);
/* Replace the word from (a flag "--hidden-dropout": not followed by a
 * letter or '-') by to in every row's note. */
void import_map_subst(struct import_map *m, const char *from, const char *to);
/* Remove every row whose source is source. */
void import_map_drop(struct import_map *m, const char *source);

/* Rows in the table, and how many have status st. */
int import_map_rows(const struct import_map *m);
int import_map_count(const struct import_map *m, enum import_status st);

/* The status's word in the table ("mapped", "default", "derived",
 * "ignored", "unknown"). */
const char *import_status_name(enum import_status st);

/* Print the table aligned (stdout of `ddlsim import`), the ignored and
 * unknown rows with their reason. */
void import_map_print(const struct import_map *m, FILE *f);
/* The table as CSV (header source,value,ddlsim_key,written,status,note;
 * fields quoted where needed). Returns 0, or -1 when f failed. */
int import_map_write_csv(const struct import_map *m, FILE *f);

/* A Hugging Face config.json (path) as a "ddlsim.model" 1.3 document (new
 * reference), every key a row of map; NULL after reporting every problem
 * into d ("config.json: /num_key_value_heads: ..."). import_hf.c holds the
 * table of keys. */
json_t *import_hf(const char *path, struct import_map *map, struct diag *d);

/* The cluster of a Megatron-LM launch or torchtitan job, which they do
 * not hold. */
struct import_cluster {
	const char *topology;       /* the scenario's topology path, as written */
	long gpus_per_node;         /* GPUs of a node of that topology */
	long nodes;                 /* 0: from the world size (import_megatron.c) */
};

/* Megatron-LM pretrain_gpt.py arguments, either the text of a launch file
 * (text, named file in messages: shell comments, line continuations and
 * quotes read; the tokens before the "*.py" script are the launcher's) or
 * argv (argc words, text NULL), into a model document (*model) and a
 * scenario document (*scenario, whose "model" key is model_ref), every flag
 * a row of map. Returns 0, or -1 after reporting every problem into d
 * ("launch.sh:12:3: error: --num-query-groups: ..."). */
int import_megatron(const char *text, const char *file, int argc, char **argv, const struct import_cluster *c,
		    const char *model_ref, struct import_map *map, json_t **model, json_t **scenario,
		    struct diag *d);

/* A torchtitan job file (its text, named file in messages; TOML) into a
 * scenario document (*scenario) on the cluster c, whose model is the
 * shipped file of the job's llama3 flavor: *model_file is its name under
 * models/zoo/ ("llama3-8b.json", static), which the caller writes into the
 * scenario's "model" key, named from where the scenario goes. Every key a
 * row of map. Returns 0, or -1 after reporting every problem into d
 * ("job.toml:31:1: error: parallelism.data_parallel_shard_degree: ..."). */
int import_torchtitan(const char *text, const char *file, const struct import_cluster *c, struct import_map *map,
		      json_t **scenario, const char **model_file, struct diag *d);

/* A DeepSpeed config JSON (path) into a scenario document (*scenario,
 * whose "model" key the caller sets) on the cluster c, with seq_len tokens
 * (the config holds none), framework "deepspeed@0.15". Every key a row of
 * map. Returns 0, or -1 after reporting every problem into d
 * ("ds.json: /train_batch_size: error: ..."). */
int import_deepspeed(const char *path, const struct import_cluster *c, long seq_len, struct import_map *map,
		     json_t **scenario, struct diag *d);

/* A NeMo 2 recipe printed as YAML (its text, named file in messages) into
 * a model document (*model) and a scenario document (*scenario, whose
 * "model" key is model_ref) on the cluster c, framework "nemo@2.0". The
 * keys are Megatron-Core's, read through import_megatron()'s flags. Every
 * key a row of map. Returns 0, or -1 after reporting every problem into d
 * ("recipe.yaml:12:5: error: trainer.strategy.tensor_model_parallel_size:
 * ..."). */
int import_nemo(const char *text, const char *file, const struct import_cluster *c, const char *model_ref,
		struct import_map *map, json_t **model, json_t **scenario, struct diag *d);

#endif
