/* samefile: outputs against inputs, by device and inode (see samefile.h). */
#include "samefile.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "infile.h"
#include "xalloc.h"

struct entry {
	char *what, *path;
	bool exists;
	dev_t dev;
	ino_t ino;
};

struct samefile {
	struct entry *in, *out;
	size_t nin, capin, nout, capout;
};

struct samefile *samefile_create(void)
{
	return xcalloc(1, sizeof(struct samefile));
}

static void free_entries(struct entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].what);
		free(e[i].path);
	}
	free(e);
}

void samefile_destroy(struct samefile *sf)
{
	if (!sf)
		return;
	free_entries(sf->in, sf->nin);
	free_entries(sf->out, sf->nout);
	free(sf);
}

void samefile_input(struct samefile *sf, const char *role, const char *path)
{
	struct stat st;
	if (!path || !strcmp(path, "-") || stat(path, &st) != 0)
		return;
	for (size_t i = 0; i < sf->nin; i++)
		if (sf->in[i].dev == st.st_dev && sf->in[i].ino == st.st_ino)
			return;
	XGROW(sf->in, sf->capin, sf->nin + 1);
	sf->in[sf->nin++] = (struct entry){ .what = xstrdup(role), .path = xstrdup(path), .exists = true,
					     .dev = st.st_dev, .ino = st.st_ino };
}

void samefile_inputs_read(struct samefile *sf, const char *role, size_t from)
{
	for (size_t i = from; i < infile_read_count(); i++)
		samefile_input(sf, role, infile_read_path(i));
}

void samefile_output(struct samefile *sf, const char *what, const char *path)
{
	struct stat st;
	if (!path || !strcmp(path, "-"))
		return;
	bool exists = stat(path, &st) == 0;
	XGROW(sf->out, sf->capout, sf->nout + 1);
	sf->out[sf->nout++] = (struct entry){ .what = xstrdup(what), .path = xstrdup(path), .exists = exists,
					       .dev = exists ? st.st_dev : 0, .ino = exists ? st.st_ino : 0 };
}

int samefile_check(const struct samefile *sf, void (*report)(void *ctx, const struct samefile_conflict *c),
		   void *ctx)
{
	int n = 0;
	for (size_t o = 0; o < sf->nout; o++) {
		const struct entry *out = &sf->out[o];
		for (size_t i = 0; out->exists && i < sf->nin; i++) {
			const struct entry *in = &sf->in[i];
			if (in->dev != out->dev || in->ino != out->ino)
				continue;
			report(ctx, &(struct samefile_conflict){ out->what, out->path, in->what, in->path, true });
			n++;
			break;
		}
	}
	for (size_t a = 0; a < sf->nout; a++)
		for (size_t b = a + 1; b < sf->nout; b++)
			if (atomic_file_same_target(sf->out[a].path, sf->out[b].path)) {
				report(ctx, &(struct samefile_conflict){ sf->out[a].what, sf->out[a].path,
									  sf->out[b].what, sf->out[b].path, false });
				n++;
			}
	return n;
}
