/* engine_platform: the platform built with SimGrid's C++ platform API (see
 * engine_platform.h), part of the engine adapter.
 *
 * platform.c describes the platform to a sink; this sink creates the zones,
 * hosts, routers and links as they come and keeps every name it made in a
 * hash map, so a route's links and end points are found in O(1). Loading
 * the same description as XML costs SimGrid a search of the zone tree for
 * every link named in a route (links x zones); here nothing is looked up
 * in SimGrid by name. Zones are sealed when they close, the platform at the
 * end. */
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

extern "C" {
#include "engine_platform.h"
#include "platform.h"
}

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;

namespace {

struct builder {
	std::vector<sg4::NetZone *> stack;
	std::unordered_map<std::string, NetPoint *> points; /* hosts, routers, zones */
	std::unordered_map<std::string, const sg4::Link *> links;
	std::vector<sg4::LinkInRoute> route;
};

void zone_begin(void *ctx, const char *id)
{
	auto *b = static_cast<builder *>(ctx);
	sg4::NetZone *z = sg4::create_full_zone(id);
	if (!b->stack.empty()) /* the first zone is SimGrid's root */
		z->set_parent(b->stack.back());
	b->points[id] = z->get_netpoint();
	b->stack.push_back(z);
}

void zone_end(void *ctx)
{
	auto *b = static_cast<builder *>(ctx);
	b->stack.back()->seal();
	b->stack.pop_back();
}

void host(void *ctx, const char *id)
{
	auto *b = static_cast<builder *>(ctx);
	sg4::Host *h = b->stack.back()->create_host(id, 1e9);
	h->seal();
	b->points[id] = h->get_netpoint();
}

void router(void *ctx, const char *id)
{
	auto *b = static_cast<builder *>(ctx);
	b->points[id] = b->stack.back()->create_router(id);
}

void link(void *ctx, const char *id, double bw_Bps, double latency_s, bool fatpipe)
{
	auto *b = static_cast<builder *>(ctx);
	sg4::Link *l;
	if (fatpipe)
		l = b->stack.back()->create_link(id, bw_Bps)
			    ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
	else
		l = b->stack.back()->create_split_duplex_link(id, bw_Bps);
	l->set_latency(latency_s)->seal();
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

void route(void *ctx, const char *src, const char *dst, const char *gw_src, const char *gw_dst,
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
		const struct platform_sink sink = { &b, zone_begin, zone_end, host, router, link, route };
		platform_emit_ex(t, nodes, used, x, &sink);
		sg4::Engine::get_instance()->seal_platform();
	} catch (const std::exception &) {
		return -1;
	}
	return 0;
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
	intrusive_ptr_add_ref(c.get()); /* released by sg_comm_wait_all() */
	return c.get();
}

extern "C" void engine_platform_comm_release(void *c)
{
	intrusive_ptr_release(static_cast<sg4::Comm *>(c));
}

extern "C" bool engine_platform_comm_finished(void *c)
{
	return static_cast<sg4::Comm *>(c)->test(); /* a simcall: from an actor only */
}
