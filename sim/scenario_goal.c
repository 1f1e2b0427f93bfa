/* scenario_goal: the scenario's "goal" object, which `ddlsim plan
 * --export` writes (see scenario_meta.h struct scenario_goal and the key
 * table in scenario.h): read it, write it back. The verdict a run gives
 * against it is assess_goal() (assess.h). */
#include "scenario-private.h"

#include <stdlib.h>

#include "xalloc.h"

void scenario_load_goal(struct jobj *root, struct scenario_meta *meta, const struct plan *p)
{
	struct jobj jo, sub;
	struct scenario_goal *g = &meta->goal;
	const char *str;
	double days = 0;

	if (jobj_child(root, "goal", &jo, 0) != 1)
		return;
	g->set = true;
	econ_params_init(&g->econ);
	goodput_params_init(&g->goodput);
	if (jobj_str(&jo, "name", &str, JNAME | JREQ) == 1)
		g->name = xstrdup(str);
	if (jobj_str(&jo, "file", &str, JPATH) == 1)
		g->file = xstrdup(str);
	if (jobj_str(&jo, "cluster", &str, JNAME) == 1)
		g->cluster = xstrdup(str);
	if (jobj_num(&jo, "deadline_days", &days, JNONNEG) == 1)
		g->deadline_s = days * 86400;
	jobj_num(&jo, "budget_usd", &g->budget_usd, JNONNEG);
	if (jobj_child(&jo, "economics", &sub, 0) == 1) {
		econ_params_load(&sub, &g->econ);
		jobj_end(&sub);
	}
	if (jobj_child(&jo, "goodput", &sub, 0) == 1) {
		goodput_params_load(&sub, &g->goodput);
		jobj_end(&sub);
	}
	/* the verdict is over the training run: without its tokens there is
	 * none to give */
	if (!(p->training.train_tokens > 0))
		diag_err(jo.d, jo.file, jo.path, "needs training.train_tokens (the goal's verdict is over "
			 "the whole training run), got none");
	jobj_end(&jo);
}

json_t *scenario_goal_json(const struct scenario_goal *g)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(g->name ? g->name : "goal"));
	if (g->file)
		json_object_set_new(o, "file", json_string(g->file));
	if (g->cluster)
		json_object_set_new(o, "cluster", json_string(g->cluster));
	if (g->deadline_s > 0)
		json_object_set_new(o, "deadline_days", json_real(g->deadline_s / 86400));
	if (g->budget_usd > 0)
		json_object_set_new(o, "budget_usd", json_real(g->budget_usd));
	json_object_set_new(o, "economics", econ_params_json(&g->econ));
	json_object_set_new(o, "goodput", goodput_params_json(&g->goodput));
	return o;
}
