/* syncgroup.c - group commit of syncfs(); see syncgroup.h. */
#define _GNU_SOURCE	/* syncfs() */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linkbot/syncgroup.h"

int lb_sync_group_run(struct lb_sync_group *g, int (*fn)(void *arg),
		      void *arg)
{
	uint64_t want;
	int rc = 0, e = 0;

	pthread_mutex_lock(&g->mu);
	/* the first call to start from now on covers this caller */
	want = g->started + 1;
	while (g->done < want) {
		if (g->running) {
			pthread_cond_wait(&g->ended, &g->mu);
			continue;
		}
		/* none running: this caller runs the one it needs, for itself
		 * and for everyone who came while the last one ran */
		g->running = 1;
		g->started++;
		pthread_mutex_unlock(&g->mu);
		rc = fn(arg);
		e = errno;
		pthread_mutex_lock(&g->mu);
		g->running = 0;
		g->done++;
		if (rc < 0) {
			g->failed = g->done;
			g->failed_errno = e;
		}
		pthread_cond_broadcast(&g->ended);
	}
	if (g->failed >= want) {
		rc = -1;
		e = g->failed_errno;
	} else {
		rc = 0;
	}
	pthread_mutex_unlock(&g->mu);
	if (rc < 0)
		errno = e;
	return rc;
}

/* One group per file system (device); past FS_MAX of them, none shared. */
#define FS_MAX 16

static pthread_mutex_t fs_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	dev_t dev;
	struct lb_sync_group g;
} fs_groups[FS_MAX];
static size_t fs_n;

static struct lb_sync_group *fs_group(dev_t dev)
{
	struct lb_sync_group *g = NULL;
	size_t i;

	pthread_mutex_lock(&fs_mu);
	for (i = 0; i < fs_n && g == NULL; i++)
		if (fs_groups[i].dev == dev)
			g = &fs_groups[i].g;
	if (g == NULL && fs_n < FS_MAX) {
		struct lb_sync_group init = LB_SYNC_GROUP_INIT;

		fs_groups[fs_n].dev = dev;
		fs_groups[fs_n].g = init;
		g = &fs_groups[fs_n++].g;
	}
	pthread_mutex_unlock(&fs_mu);
	return g;
}

static int sync_path(void *arg)
{
	int fd = open(arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc, e;

	if (fd < 0)
		return -1;
	rc = syncfs(fd);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

int lb_fs_sync(const char *path)
{
	struct lb_sync_group *g;
	struct stat st;

	if (stat(path, &st) < 0)
		return -1;
	g = fs_group(st.st_dev);
	return g != NULL ? lb_sync_group_run(g, sync_path, (void *)path) :
			   sync_path((void *)path);
}
