/* platform: SimGrid XML from a topology (see platform.h).
 *
 * Link naming: "gl<rank>" GPU link into the node switch, "nic<node>_<i>"
 * NIC i of a node, "fabric" the inter-node switch. Latencies are split so
 * that a path's latency is what topology_path_latency() says: each GPU link
 * carries half the intra-node latency, each NIC link the NIC latency. */
#include "platform.h"

#include <stdlib.h>
#include <unistd.h>

int platform_write(const struct topology *t, int nodes, FILE *f)
{
	int G = t->gpus_per_node;

	fprintf(f, "<?xml version='1.0'?>\n"
		   "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
		   "<platform version=\"4.1\">\n"
		   "<zone id=\"world\" routing=\"Full\">\n");
	for (int n = 0; n < nodes; n++) {
		fprintf(f, " <zone id=\"n%d\" routing=\"Full\">\n", n);
		for (int g = 0; g < G; g++)
			fprintf(f, "  <host id=\"g%d\" speed=\"1Gf\"/>\n", n * G + g);
		fprintf(f, "  <router id=\"n%d_gw\"/>\n", n);
		for (int g = 0; g < G; g++)
			fprintf(f, "  <link id=\"gl%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\""
				   " sharing_policy=\"SPLITDUPLEX\"/>\n",
				n * G + g, t->intra_bw_Bps, t->intra_latency_s / 2);
		for (int i = 0; i < t->nics; i++)
			fprintf(f, "  <link id=\"nic%d_%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\""
				   " sharing_policy=\"SPLITDUPLEX\"/>\n",
				n, i, t->nic_bw_Bps, t->nic_latency_s);
		for (int a = 0; a < G; a++)
			for (int b = a + 1; b < G; b++)
				fprintf(f, "  <route src=\"g%d\" dst=\"g%d\" symmetrical=\"YES\">"
					   "<link_ctn id=\"gl%d\" direction=\"UP\"/>"
					   "<link_ctn id=\"gl%d\" direction=\"DOWN\"/></route>\n",
					n * G + a, n * G + b, n * G + a, n * G + b);
		if (t->nics > 0)
			for (int g = 0; g < G; g++)
				fprintf(f, "  <route src=\"g%d\" dst=\"n%d_gw\" symmetrical=\"YES\">"
					   "<link_ctn id=\"nic%d_%d\" direction=\"UP\"/></route>\n",
					n * G + g, n, n, t->gpu_nic[g]);
		fprintf(f, " </zone>\n");
	}
	if (nodes > 1) {
		fprintf(f, " <link id=\"fabric\" bandwidth=\"%.17gBps\" latency=\"%.17gs\""
			   " sharing_policy=\"FATPIPE\"/>\n",
			t->fabric_bw_Bps > 0 ? t->fabric_bw_Bps : 1e15, t->fabric_latency_s);
		for (int a = 0; a < nodes; a++)
			for (int b = a + 1; b < nodes; b++)
				fprintf(f, " <zoneRoute src=\"n%d\" dst=\"n%d\" gw_src=\"n%d_gw\""
					   " gw_dst=\"n%d_gw\" symmetrical=\"YES\">"
					   "<link_ctn id=\"fabric\"/></zoneRoute>\n",
					a, b, a, b);
	}
	fprintf(f, "</zone>\n</platform>\n");
	return ferror(f) ? -1 : 0;
}

int platform_write_temp(const struct topology *t, int nodes, char *path, size_t n)
{
	const char *dir = getenv("TMPDIR");
	snprintf(path, n, "%s/ddlsim-platform-XXXXXX.xml", dir && *dir ? dir : "/tmp");
	int fd = mkstemps(path, 4);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return -1;
	}
	int rc = platform_write(t, nodes, f);
	if (fclose(f) != 0)
		rc = -1;
	if (rc)
		unlink(path);
	return rc;
}
