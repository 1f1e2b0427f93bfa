/* engine_changed: the links whose usage may have changed over a step of
 * the clock (see engine_changed.h), part of the engine adapter, for the
 * link pass (engine_links.c) to read those and no other.
 *
 * Why these and no others. With the full update and selective update
 * (engine.c), SimGrid's max-min system re-solves only the constraints
 * (links) marked modified since its last solve, and with them every
 * constraint of every variable on them, transitively
 * (System::update_modified_cnst_set_rec; lmm::MaxMin::do_solve solves
 * the list modified_constraint_set and nothing else), which its own
 * shares rely on: a variable off that list keeps its value. A constraint
 * is marked when a variable is added to it (System::expand), freed from
 * it (System::var_free), or its bound or a variable's penalty or bound
 * moves (none moves in these runs: engine_platform.h, the stamp). After
 * each solve, System::solve puts the action of every enabled element of
 * positive weight of every modified constraint into the model's
 * modified action set (src/kernel/lmm/System.cpp at v3.32), which
 * nothing else reads under the full update (the lazy update drains it
 * itself: Model::next_occurring_event_lazy; Action::cancel and
 * ~Action only unlink from it). A link's usage (Constraint::get_usage:
 * the sum over its enabled elements of positive weight of weight x
 * value) moves only if an element's value moves, or an element comes or
 * goes. So over a step, every link whose usage moved is
 *   - a link of an action in the modified set: a value moved, or an
 *     element came (its constraint was modified, so every action left
 *     on it is in the set), or went while another stayed; or
 *   - a link of a transfer that ended or failed since the last step, the
 *     one element that went where none stayed (Link::on_communication_
 *     state_change, which NetworkAction::set_state signals).
 * The links of an action are its route's (NetworkCm02Model::communicate
 * expands the route from Host::route_to; no cross traffic, engine.c),
 * kept here per transfer by its kernel activity (Comm::get_impl(), the
 * one Action::get_activity() gives back) when the adapter posts it
 * (engine_changed_note), dropped when it ends. A transfer whose route is
 * unknown makes the step read every link (-1), and the next one too if it
 * ended (as a noted one's links are read twice): never wrong, only
 * slower.
 *
 * Every transfer that gets a network action is noted before SimGrid's
 * next solve: a host-to-host transfer when it is posted (its action is
 * made then), a mailbox transfer by its sender right after the put
 * returns (the put matched or queued it; the match makes the action in
 * that simcall, and the solve comes after every actor ran). So a noted
 * activity whose address SimGrid reuses is noted again before it can be
 * looked up. */
#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <xbt/config.hpp>

#include <cstdint>
#include <vector>

extern "C" {
#include "engine_changed.h"
#include "engine_platform.h"
}

namespace sg4      = simgrid::s4u;
namespace resource = simgrid::kernel::resource;

namespace {

/* A noted transfer: its activity, its route's link ids (borrowed from
 * engine_platform_route_ids). key NULL: an empty slot. */
struct noted {
	const void *key;
	const int *ids;
	int n;
	unsigned long ended;    /* 0 while it runs; else 1 + the calls of
				 * engine_changed_links() before it ended */
};

bool g_on;                          /* engine_changed_start() was called */
bool g_usable;                      /* the model keeps a modified set we may drain */
resource::Model *g_model;
std::vector<noted> g_tab(1024);     /* open addressing, linear probing */
std::size_t g_count;
std::vector<engine_changed_span> g_out; /* the changed links since the last call */
bool g_all;                         /* a transfer of unknown route changed */
bool g_all_next;                    /* one ended: the next call reads every link too */
unsigned long g_unknown;            /* such changes so far */
unsigned long g_calls;              /* engine_changed_links() calls so far */
std::vector<const void *> g_ended;  /* the transfers that ended, kept two calls */

std::size_t slot_of(const void *key, std::size_t mask)
{
	auto h = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(key)) * 0x9E3779B97F4A7C15ull;
	return static_cast<std::size_t>(h >> 32) & mask;
}

/* key's record, or the empty slot where it would go */
noted *slot(const void *key)
{
	std::size_t mask = g_tab.size() - 1, i = slot_of(key, mask);
	while (g_tab[i].key && g_tab[i].key != key)
		i = (i + 1) & mask;
	return &g_tab[i];
}

noted *find(const void *key)
{
	noted *e = slot(key);
	return e->key ? e : nullptr;
}

void grow()
{
	std::vector<noted> old(g_tab.size() * 2);
	old.swap(g_tab);
	std::size_t mask = g_tab.size() - 1;
	for (const noted &e : old)
		if (e.key) {
			std::size_t i = slot_of(e.key, mask);
			while (g_tab[i].key)
				i = (i + 1) & mask;
			g_tab[i] = e;
		}
}

/* Remove e, shifting back the entries of its probe run (no tombstones). */
void erase(noted *e)
{
	std::size_t mask = g_tab.size() - 1, i = static_cast<std::size_t>(e - g_tab.data()), j = i;
	g_tab[i].key = nullptr;
	g_count--;
	for (;;) {
		j = (j + 1) & mask;
		if (!g_tab[j].key)
			return;
		std::size_t home = slot_of(g_tab[j].key, mask);
		/* j's entry may fill the hole at i if its home is not in (i, j] */
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (stays)
			continue;
		g_tab[i] = g_tab[j];
		g_tab[j].key = nullptr;
		i = j;
	}
}

/* The last routes looked up, direct mapped on the host pair, in front
 * of engine_platform_route_ids()'s hash map. */
struct route_hit {
	const void *from, *to;
	const int *ids;
	int n;
};
route_hit g_routes[4096];

void route_of(const void *from, const void *to, noted *e)
{
	route_hit &r = g_routes[(engine_platform_pair_mix(from, to) >> 40) & 4095];
	if (r.from != from || r.to != to) {
		r.from = from;
		r.to = to;
		r.n = engine_platform_route_ids(const_cast<void *>(from), const_cast<void *>(to), &r.ids);
	}
	e->ids = r.ids;
	e->n = r.n;
}

/* Its links join the changed ones, as its route (a link may come more
 * than once: the reader reads each once). */
void mark(const noted *e)
{
	g_out.push_back({ e->ids, e->n });
}

void unknown()
{
	g_all = true;
	g_unknown++;
}

/* Transfer a ended (failed, was cancelled): its links are read at the
 * next two calls. At the first the step it ended in is read, its action
 * still counted (SimGrid's clock callback follows the models' update,
 * EngineImpl::solve); it may still be counted there (a cancelled one
 * until the next solve), and its action in the modified set. SimGrid
 * frees its action after the solve it ended by at the latest
 * (EngineImpl::handle_ended_actions: CommImpl::post, clean_action; no
 * one else holds a network action), so the second call reads what its
 * end freed, even on a link no other transfer is on (no action there
 * to say so). Its record stays as long. */
void ended(const resource::Action &a)
{
	noted *e = find(a.get_activity());
	if (!e) {   /* its second read too is of every link */
		unknown();
		g_all_next = true;
		return;
	}
	mark(e);
	e->ended = g_calls + 1;
	g_ended.push_back(e->key);
}

/* The transfers that ended before the last call: read a second time,
 * forgotten (unless noted again since: a new transfer's activity at the
 * address). */
void second_reads()
{
	std::size_t keep = 0;
	for (const void *key : g_ended) {
		noted *e = find(key);
		if (!e || !e->ended)
			continue;
		if (e->ended > g_calls) {   /* ended since the last call */
			g_ended[keep++] = key;
			continue;
		}
		mark(e);
		erase(e);
	}
	g_ended.resize(keep);
}

/* Action a, in the modified set, may have a new rate, or a transfer came
 * to or left one of its links: its links are marked. One that ended
 * before (a record forgotten) counts as unknown: never seen in these
 * runs (SimGrid frees it first). */
void modified(const resource::Action &a)
{
	noted *e = find(a.get_activity());
	if (e)
		mark(e);
	else
		unknown();
}

} // namespace

extern "C" bool engine_changed_start(void)
{
	if (g_on)
		return g_usable;
	g_on = true;
	auto *intf = sg4::Engine::get_instance()->get_netzone_root()->get_network_model();
	g_model = dynamic_cast<resource::Model *>(intf);
	/* a transfer's links are its route's only without cross traffic
	 * (engine.c turns it off; SimGrid's default adds the back route) */
	g_usable = g_model && !g_model->is_update_lazy() && g_model->get_modified_set() &&
		   !simgrid::config::get_value<bool>("network/crosstraffic");
	if (!g_usable)
		return false;
	/* NetworkAction (SimGrid's src/kernel/resource/NetworkModel.hpp,
	 * not installed) derives from Action alone: the Action is at its
	 * address */
	sg4::Link::on_communication_state_change_cb(
		[](resource::NetworkAction &na, resource::Action::State) {
			const auto &a = *reinterpret_cast<const resource::Action *>(&na);
			if (a.get_state() != resource::Action::State::STARTED)
				ended(a);
		});
	return true;
}

extern "C" void engine_changed_note(void *c, void *from, void *to)
{
	if (!g_usable)
		return;
	const auto *comm = static_cast<const sg4::Comm *>(c);
	const void *key = comm->get_impl();
	if ((g_count + 1) * 2 > g_tab.size())
		grow();
	noted *e = slot(key);
	if (e->key && e->ended) /* an ended transfer's activity, freed (and so
				 * its action): its second read is due now */
		mark(e);
	if (!from || !to) { /* SimGrid's, if it started the transfer */
		from = comm->get_source();
		to = comm->get_destination();
	}
	if (!from || !to) { /* unknown when it changes: every link read */
		if (e->key)
			erase(e);
		return;
	}
	if (!e->key) {
		e->key = key;
		g_count++;
	}
	route_of(from, to, e);
	e->ended = 0;
}

extern "C" int engine_changed_links(const struct engine_changed_span **spans)
{
	if (!g_usable)
		return -1;
	second_reads();
	resource::Action::ModifiedSet *ms = g_model->get_modified_set();
	while (!ms->empty()) {
		const resource::Action &a = ms->front();
		ms->pop_front();
		modified(a);
	}
	g_calls++;
	int n = g_all ? -1 : static_cast<int>(g_out.size());
	*spans = g_out.data();
	g_all = g_all_next;
	g_all_next = false;
	return n;
}

extern "C" void engine_changed_consumed(void)
{
	g_out.clear();
}

extern "C" unsigned long engine_changed_unknown(void)
{
	return g_unknown;
}

extern "C" long engine_changed_noted(void)
{
	return static_cast<long>(g_count);
}
