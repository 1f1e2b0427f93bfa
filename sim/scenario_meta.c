/* scenario_meta: a scenario's path, name, description and published
 * figures, copied and freed (see scenario_meta.h). */
#include "scenario_meta.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

const char *const pub_memory_names[PUB_MEM_N + 1] = { "reserved", "allocated", "active", "device", NULL };

void scenario_meta_copy(struct scenario_meta *out, const struct scenario_meta *m)
{
	*out = *m;
	out->path = m->path ? xstrdup(m->path) : NULL;
	out->name = m->name ? xstrdup(m->name) : NULL;
	out->description = m->description ? xstrdup(m->description) : NULL;
	out->pub.source = m->pub.source ? xstrdup(m->pub.source) : NULL;
	out->goal.name = m->goal.name ? xstrdup(m->goal.name) : NULL;
	out->goal.file = m->goal.file ? xstrdup(m->goal.file) : NULL;
	out->goal.cluster = m->goal.cluster ? xstrdup(m->goal.cluster) : NULL;
}

void scenario_meta_finish(struct scenario_meta *m)
{
	free(m->path);
	free(m->name);
	free(m->description);
	free(m->pub.source);
	free(m->goal.name);
	free(m->goal.file);
	free(m->goal.cluster);
	memset(m, 0, sizeof(*m));
}
