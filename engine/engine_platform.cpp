/* engine_platform: the platform built with SimGrid's C++ platform API (see
 * engine_platform.h), part of the engine adapter.
 *
 * platform.c describes the platform to a sink; this sink creates the zones,
 * hosts, routers and links as they come and keeps every name it made in a
 * hash map, so a route's links and end points are found in O(1).
 *
 * Linear time despite SimGrid 3.32's own checks: creating a host or a link
 * looks its name up in every zone reachable from the root (a failed
 * search: the whole tree), and sealing a zone lists every host reachable
 * from the root. Built in place, a platform of Z zones and H hosts costs
 * Z x H: 20.7 s for 2,048 DGX nodes on a 3-level fat tree, 159 s for 4,096.
 * So a zone is built detached: it gets its parent's models when it opens,
 * is attached to its parent and sealed when it closes, and the root's
 * children are attached only when the root's own routes need them, after
 * every host and link below them exists: each check then sees the root
 * alone. What remains is one listing per child of the root when the
 * platform is sealed (pods, groups of 64 nodes: T x (Z + H), T small).
 * Hosts are sealed as they are made (a detached zone's seal does not reach
 * them).
 *
 * Plain max-min sharing: SimGrid's CM02 model gives a flow of route
 * latency L a sharing penalty L once its latency is paid, so two flows on
 * one link share it in inverse proportion to their routes' latencies
 * (TCP's RTT unfairness: a cross-pod flow gets about 1/1.8 of a NIC
 * against a flow inside a leaf). NCCL over InfiniBand or NVLink does not
 * share that way. The links are therefore built with latency 0, where
 * CM02 gives every flow the same penalty (network_cm02.cpp:
 * variable_new(action, 1.0, ...) when the latency is 0), and the engine
 * charges each transfer its route's latency itself
 * (engine_platform_route_latency(): once per collective, after a
 * pipeline receive, after a parameter-server phase). */
#include <simgrid/Exception.hpp>
#include <simgrid/mailbox.h>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>

#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

extern "C" {
#include "engine_changed.h"
#include "engine_platform.h"
#include "platform.h"
}

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;

/* A switch crossbar without a bandwidth of its own (topology.h:
 * TOPO_UNBOUNDED_BPS) binds no flow, so it is built as a shared
 * link of a bandwidth no sum of flows reaches, not as a FATPIPE: SimGrid
 * 3.32's max-min solver, each time it fixes the rate of a flow across a
 * FATPIPE, passes over every flow on that FATPIPE to find its new usage
 * (MaxMin::maxmin_solve in src/kernel/lmm/maxmin.cpp), quadratic in the
 * flows through one switch: a non-blocking fabric's root link of a
 * group of 64 nodes carries every flow leaving the group, and GPT-3
 * 175B over 2,048 GPUs unfolded (NCCL's tree) spent 72 % of its 40 CPU
 * s there. A shared link costs one update per flow fixed. The shares are
 * the same (the link never binds): that run's report is identical but
 * its wall time, at 10.9 CPU s (with the link counters skipping these
 * links as they skip FATPIPEs). Such links are still
 * crossbars to the link counters (engine_platform_link_is_crossbar). */
#define ENGINE_CROSSBAR_BPS 1e20
static std::unordered_set<const sg4::Link *> g_crossbar;

/* Each built link's latency (SimGrid's is 0: plain max-min), and the
 * route latencies asked for so far, per (source, destination) host. */
static std::unordered_map<const sg4::Link *, double> g_link_latency;
struct host_pair_hash {
	size_t operator()(const std::pair<const void *, const void *> &k) const
	{
		/* hosts are aligned objects: mix the bits, not a multiple of 8 */
		size_t a = (size_t)k.first, b = (size_t)k.second;
		return (a ^ (b >> 4) ^ (b << 29)) * 0x9E3779B97F4A7C15ull >> 7;
	}
};
static std::unordered_map<std::pair<const void *, const void *>, double, host_pair_hash>
	g_route_latency;

namespace {

struct builder {
	std::vector<sg4::NetZone *> stack;
	std::vector<sg4::NetZone *> pending; /* closed children of the root */
	std::unordered_map<std::string, NetPoint *> points; /* hosts, routers, zones */
	std::unordered_map<std::string, const sg4::Link *> links;
	std::vector<sg4::LinkInRoute> route;
};

/* Attach the root's closed children before the root's own routes (its
 * routing table is sized by its components when its first route comes). */
void attach_pending(builder *b)
{
	if (b->stack.size() != 1)
		return;
	for (sg4::NetZone *z : b->pending)
		z->set_parent(b->stack.front()); /* sealed by seal_platform() */
	b->pending.clear();
}

void build_zone_begin(void *ctx, const char *id)
{
	auto *b = static_cast<builder *>(ctx);
	sg4::NetZone *z = sg4::create_full_zone(id); /* the first: SimGrid's root */
	if (!b->stack.empty()) {
		auto *zi = z->get_impl();
		const auto *pi = b->stack.back()->get_impl();
		zi->set_network_model(pi->get_network_model());
		zi->set_cpu_pm_model(pi->get_cpu_pm_model());
		zi->set_cpu_vm_model(pi->get_cpu_vm_model());
		zi->set_disk_model(pi->get_disk_model());
		zi->set_host_model(pi->get_host_model());
	}
	b->points[id] = z->get_netpoint();
	b->stack.push_back(z);
}

void build_zone_end(void *ctx)
{
	auto *b = static_cast<builder *>(ctx);
	sg4::NetZone *z = b->stack.back();
	b->stack.pop_back();
	if (b->stack.empty()) { /* the root: seal_platform() */
		b->stack.push_back(z);
		attach_pending(b);
		b->stack.pop_back();
	} else if (b->stack.size() == 1) {
		b->pending.push_back(z);
	} else {
		z->set_parent(b->stack.back());
		z->seal();
	}
}

void build_host(void *ctx, const char *id)
{
	auto *b = static_cast<builder *>(ctx);
	sg4::Host *h = b->stack.back()->create_host(id, 1e9);
	h->seal();
	b->points[id] = h->get_netpoint();
}

void build_router(void *ctx, const char *id)
{
	auto *b = static_cast<builder *>(ctx);
	b->points[id] = b->stack.back()->create_router(id);
}

void build_link(void *ctx, const char *id, double bw_Bps, double latency_s, bool fatpipe)
{
	auto *b = static_cast<builder *>(ctx);
	sg4::Link *l;
	if (fatpipe && bw_Bps >= TOPO_UNBOUNDED_BPS) {
		l = b->stack.back()->create_link(id, ENGINE_CROSSBAR_BPS);
		g_link_latency[l] = latency_s;
		g_crossbar.insert(l);
	} else if (fatpipe) {
		l = b->stack.back()->create_link(id, bw_Bps)
			    ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
		g_link_latency[l] = latency_s;
	} else {
		sg4::SplitDuplexLink *d = b->stack.back()->create_split_duplex_link(id, bw_Bps);
		/* routes hold its two directions, not the pair */
		g_link_latency[d->get_link_up()] = latency_s;
		g_link_latency[d->get_link_down()] = latency_s;
		l = d;
	}
	l->set_latency(0)->seal();
	b->links[id] = l;
}

NetPoint *point(builder *b, const char *id)
{
	if (!id)
		return nullptr;
	auto it = b->points.find(id);
	if (it == b->points.end())
		throw std::invalid_argument(std::string("no host, router or zone '") + id + "'");
	return it->second;
}

void build_route(void *ctx, const char *src, const char *dst, const char *gw_src, const char *gw_dst,
	   const struct platform_hop *h, int n)
{
	auto *b = static_cast<builder *>(ctx);
	b->route.clear();
	for (int i = 0; i < n; i++) {
		auto it = b->links.find(h[i].id);
		if (it == b->links.end())
			throw std::invalid_argument(std::string("no link '") + h[i].id + "'");
		auto d = h[i].dir > 0 ? sg4::LinkInRoute::Direction::UP
		       : h[i].dir < 0 ? sg4::LinkInRoute::Direction::DOWN
				      : sg4::LinkInRoute::Direction::NONE;
		b->route.emplace_back(it->second, d);
	}
	attach_pending(b);
	b->stack.back()->add_route(point(b, src), point(b, dst), point(b, gw_src), point(b, gw_dst),
				   b->route, true);
}

} // namespace

extern "C" int engine_platform_build(const struct topology *t, int nodes, const unsigned char *used)
{
	return engine_platform_build_ex(t, nodes, used, nullptr);
}

extern "C" int engine_platform_build_ex(const struct topology *t, int nodes, const unsigned char *used,
					const struct platform_extra *x)
{
	try {
		builder b;
		const struct platform_sink sink = { &b, build_zone_begin, build_zone_end, build_host, build_router,
						  build_link, build_route };
		platform_emit_ex(t, nodes, used, x, &sink);
		sg4::Engine::get_instance()->seal_platform();
	} catch (const std::exception &) {
		return -1;
	}
	return 0;
}

extern "C" bool engine_platform_link_is_crossbar(const void *l)
{
	const auto *k = static_cast<const sg4::Link *>(l);
	return g_crossbar.count(k) || k->get_sharing_policy() == sg4::Link::SharingPolicy::FATPIPE;
}

extern "C" double engine_platform_link_usage(const void *l)
{
	return static_cast<const sg4::Link *>(l)->get_usage();
}

extern "C" void *engine_platform_sendto_async(void *from, void *to, double bytes)
{
	sg4::CommPtr c = sg4::Comm::sendto_async(static_cast<sg4::Host *>(from),
						 static_cast<sg4::Host *>(to),
						 static_cast<uint64_t>(bytes + 0.5));
	intrusive_ptr_add_ref(c.get()); /* released by engine_platform_wait_all() */
	engine_changed_note(c.get(), from, to);
	return c.get();
}

extern "C" void *engine_platform_put_async(void *mb, void *payload, long bytes, void *from, void *to)
{
	sg_comm_t c = sg_mailbox_put_async(static_cast<sg_mailbox_t>(mb), payload, bytes);
	engine_changed_note(c, from, to);
	return c;
}

extern "C" double engine_platform_route_latency(void *from, void *to)
{
	auto key = std::make_pair(static_cast<const void *>(from), static_cast<const void *>(to));
	auto it = g_route_latency.find(key);
	if (it != g_route_latency.end())
		return it->second;
	std::vector<sg4::Link *> links;
	static_cast<sg4::Host *>(from)->route_to(static_cast<sg4::Host *>(to), links, nullptr);
	double lat = 0;
	for (const sg4::Link *l : links) {
		auto li = g_link_latency.find(l);
		if (li != g_link_latency.end())
			lat += li->second;
	}
	g_route_latency.emplace(key, lat);
	return lat;
}

/* Routes as link ids (engine_platform_route_ids()): a dense id per link
 * in the order first seen, and each (source, destination) host pair's
 * route, found once. */
static std::unordered_map<const sg4::Link *, int> g_link_id;
static std::vector<sg4::Link *> g_link_of_id;
static std::unordered_map<std::pair<const void *, const void *>, std::vector<int>, host_pair_hash>
	g_route_ids;

extern "C" int engine_platform_route_ids(void *from, void *to, const int **ids)
{
	auto key = std::make_pair(static_cast<const void *>(from), static_cast<const void *>(to));
	auto it = g_route_ids.find(key);
	if (it == g_route_ids.end()) {
		std::vector<sg4::Link *> links;
		static_cast<sg4::Host *>(from)->route_to(static_cast<sg4::Host *>(to), links, nullptr);
		std::vector<int> v;
		v.reserve(links.size());
		for (sg4::Link *l : links) {
			auto li = g_link_id.emplace(l, (int)g_link_of_id.size());
			if (li.second)
				g_link_of_id.push_back(l);
			v.push_back(li.first->second);
		}
		it = g_route_ids.emplace(key, std::move(v)).first; /* a node: stable */
	}
	*ids = it->second.data();
	return (int)it->second.size();
}

extern "C" int engine_platform_nlinks(void)
{
	return (int)g_link_of_id.size();
}

extern "C" void *engine_platform_link_of_id(int id)
{
	return g_link_of_id[(size_t)id];
}

extern "C" void engine_platform_on_advance(void (*fn)(void *ctx, double dt_s), void *ctx)
{
	sg4::Engine::on_time_advance_cb([fn, ctx](double dt_s) { fn(ctx, dt_s); });
}

/* The network model's state changes so far (engine_platform_net_stamp),
 * and the model, found at the first stamp. */
static unsigned long g_net_changes;
static simgrid::kernel::resource::Model *g_net_model;

extern "C" struct engine_net_stamp engine_platform_net_stamp(void)
{
	if (!g_net_model) {
		auto *intf = sg4::Engine::get_instance()->get_netzone_root()->get_network_model();
		g_net_model = dynamic_cast<simgrid::kernel::resource::Model *>(intf);
		if (!g_net_model) /* none to count: every stamp differs */
			return { ++g_net_changes, 0, 0, 0 };
		sg4::Link::on_communication_state_change_cb(
			[](simgrid::kernel::resource::NetworkAction &, simgrid::kernel::resource::Action::State) {
				g_net_changes++;
			});
	}
	return { g_net_changes, (unsigned long)g_net_model->get_started_action_set()->size(),
		 (unsigned long)g_net_model->get_finished_action_set()->size(),
		 (unsigned long)g_net_model->get_failed_action_set()->size() };
}

extern "C" void engine_platform_comm_release(void *c)
{
	intrusive_ptr_release(static_cast<sg4::Comm *>(c));
}

extern "C" bool engine_platform_comm_finished(void *c)
{
	return static_cast<sg4::Comm *>(c)->test(); /* a simcall: from an actor only */
}

extern "C" bool engine_platform_mailbox_ready(void *mb)
{
	return static_cast<sg4::Mailbox *>(mb)->ready(); /* reads, no simcall */
}

extern "C" void engine_platform_mailbox_clear(void *mb)
{
	static_cast<sg4::Mailbox *>(mb)->clear();
}

extern "C" void *engine_platform_route_end(void *from, void *to, bool last)
{
	std::vector<sg4::Link *> links;
	static_cast<sg4::Host *>(from)->route_to(static_cast<sg4::Host *>(to), links, nullptr);
	if (links.empty())
		return nullptr;
	return last ? links.back() : links.front();
}

extern "C" double engine_platform_comm_remaining(void *c)
{
	return static_cast<sg4::Comm *>(c)->get_remaining();
}

extern "C" void engine_platform_comm_cancel(void *c)
{
	static_cast<sg4::Comm *>(c)->cancel();
}

extern "C" void engine_platform_wait_all(void **comms, size_t n)
{
	/* one transfer at a time, in order, as sg_comm_wait_all() does (one
	 * simcall each), but through SimGrid's wait-any: Comm::wait_for
	 * gives every waiter a CPU sleep action "to be notified of host
	 * failures" (ActivityImpl::wait_for, src/kernel/activity/
	 * ActivityImpl.cpp at v3.32), a variable of the host's CPU system
	 * made, re-weighted and freed for each transfer; wait-any registers
	 * the simcall alone (ActivityImpl::wait_any_for) and the transfer's
	 * end answers it at the same instant (CommImpl::finish). No host
	 * fails in these runs (the platform has no profiles). */
	std::vector<sg4::CommPtr> one(1);
	for (size_t i = 0; i < n; i++) {
		one[0] = sg4::CommPtr(static_cast<sg4::Comm *>(comms[i]), false); /* its reference, released */
		sg4::Comm::wait_any(one);
	}
}

/* Transfers watched (engine_platform_watch): a transfer's activity and
 * what to call when its action ends. */
struct watch_fn {
	void (*fn)(void *ctx);
	void *ctx;
};
static std::unordered_map<const void *, watch_fn> g_watch;

extern "C" void *engine_platform_get_async(void *mb, void **payload)
{
	sg4::CommPtr c = static_cast<sg4::Mailbox *>(mb)->get_async<void>(payload);
	intrusive_ptr_add_ref(c.get()); /* released by engine_platform_wait_all() */
	return c.get();
}

extern "C" void engine_platform_watch(void *c, void (*fn)(void *ctx), void *ctx)
{
	static bool on;
	if (!on) {
		on = true;
		/* NetworkAction derives from Action alone (engine_changed.cpp) */
		sg4::Link::on_communication_state_change_cb(
			[](simgrid::kernel::resource::NetworkAction &na, simgrid::kernel::resource::Action::State) {
				if (g_watch.empty())
					return;
				const auto &a = *reinterpret_cast<const simgrid::kernel::resource::Action *>(&na);
				if (a.get_state() != simgrid::kernel::resource::Action::State::FINISHED)
					return;
				auto it = g_watch.find(a.get_activity());
				if (it == g_watch.end())
					return;
				watch_fn w = it->second;
				g_watch.erase(it);
				w.fn(w.ctx);
			});
	}
	g_watch[static_cast<sg4::Comm *>(c)->get_impl()] = watch_fn{ fn, ctx };
}

extern "C" void engine_platform_unwatch(void *c)
{
	g_watch.erase(static_cast<sg4::Comm *>(c)->get_impl());
}

extern "C" int engine_platform_wait_any(void **comms, int n)
{
	std::vector<sg4::CommPtr> v;
	v.reserve((size_t)n);
	for (int i = 0; i < n; i++)
		v.emplace_back(static_cast<sg4::Comm *>(comms[i]));
	return (int)sg4::Comm::wait_any(v);
}

extern "C" bool engine_platform_comm_wait(void *c)
{
	try {
		static_cast<sg4::Comm *>(c)->wait();
	} catch (const simgrid::CancelException &) {
		return false;
	} catch (const simgrid::NetworkFailureException &) {
		/* what a cancelled transfer with no actor at either end
		 * raises (CommImpl::finish(): no link fails in these runs) */
		return false;
	}
	return true;
}
