/* cmd_list: `ddlsim list` prints the registries: pipeline schedules,
 * collective algorithms, compute cost sources and program builders. */
#include <stdio.h>

#include "builders.h"
#include "cli.h"
#include "coll.h"
#include "cost.h"
#include "options.h"
#include "stack.h"
#include "schedule.h"
#include "xalloc.h"

struct list_opts {
	bool none;                  /* list takes no option */
};

static const struct opt list_options[] = {
	OPT_END(),
};

const struct opt_cmd cmd_list_opts = {
	.name = "list",
	.summary = "list schedules, collective algorithms and cost sources",
	.description =
		"Lists the pipeline schedules, collective algorithms and compute cost\n"
		"sources a scenario can name, and the program builder of each model\n"
		"architecture.\n",
	.options = list_options,
	.size = sizeof(struct list_opts),
};

int cmd_list(int argc, char **argv)
{
	struct list_opts o = { 0 };
	const char **pos = xcalloc((size_t)argc, sizeof(*pos));
	int n = 0, rc = opt_parse(&cmd_list_opts, argc, argv, &o, pos, &n);
	free(pos);
	if (rc)
		return rc;
	if (n > 0)
		return cli_usage_error("'list' takes no arguments");
	printf("schedules (parallel.schedule):\n");
	for (int i = 0; i < SCHED_N; i++)
		printf("  %-14s %s\n", schedule_registry[i].name, schedule_registry[i].description);
	printf("\ncollective algorithms (communication.algorithm):\n");
	for (int i = 0; coll_algos[i].name; i++)
		printf("  %-14s %s\n", coll_algos[i].name, coll_algos[i].description);
	printf("\ncompute cost sources (compute.cost):\n");
	for (int i = 0; cost_registry[i].name; i++)
		printf("  %-14s %s\n", cost_registry[i].name, cost_registry[i].description);
	printf("\nkernel stacks (compute.stack; a framework preset names its own):\n");
	for (int i = 0; stack_table[i].name; i++)
		printf("  %-14s %s\n", stack_table[i].name, stack_table[i].description);
	printf("\nattention kernels (compute.attention_backend):\n");
	for (int i = 0; attn_backend_names[i]; i++)
		printf("  %s\n", attn_backend_names[i]);
	printf("\nprogram builders (model architecture):\n");
	for (int i = 0; builder_registry[i].name; i++)
		printf("  %-20s %s\n", builder_registry[i].name, builder_registry[i].description);
	return EXIT_OK;
}
