/* layout.c - the store keys and state paths; see layout.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "linkbot/layout.h"

static int fmt(char *buf, size_t size, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(buf, size, f, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		if (size > 0)
			buf[0] = '\0';
		return -1;
	}
	return n;
}

int layout_endpoint_folder(char *buf, size_t size, const char *client,
			   const char *endpoint)
{
	return fmt(buf, size, "%s/%s", client, endpoint);
}

int layout_project_folder(char *buf, size_t size, const char *uuid)
{
	return fmt(buf, size, LAYOUT_PROJECTS "%s", uuid);
}

int layout_key(char *buf, size_t size, const char *folder, const char *name)
{
	return fmt(buf, size, "%s%s%s", folder, *folder ? "/" : "", name);
}

int layout_page_key(char *buf, size_t size, const char *folder,
		    const char *page_id)
{
	return fmt(buf, size, "%s%s" LAYOUT_PAGES "%s.json", folder,
		   *folder ? "/" : "", page_id);
}

int layout_marker_key(char *buf, size_t size, const char *client,
		      const char *endpoint, const char *variant)
{
	return fmt(buf, size, "%s/%s/active-%s", client, endpoint, variant);
}

int layout_corpus_path(char *buf, size_t size, const char *client)
{
	return fmt(buf, size, "%s/corpus.sqlite", client);
}

int layout_links_path(char *buf, size_t size, const char *client,
		      const char *endpoint)
{
	return fmt(buf, size, "%s/%s/links.tsv", client, endpoint);
}

int layout_module_links_path(char *buf, size_t size, const char *client,
			     const char *uuid, const char *module)
{
	return fmt(buf, size, "%s/" LAYOUT_PROJECTS "%s/%s.tsv", client, uuid,
		   module);
}

int layout_bonus_path(char *buf, size_t size, const char *links_path)
{
	const char *slash = strrchr(links_path, '/');
	size_t len = slash != NULL ? (size_t)(slash - links_path) :
				     strlen(links_path);

	return fmt(buf, size, "%.*s/bonus.tsv", (int)len, links_path);
}

int layout_state_key(char *buf, size_t size, const char *path)
{
	return fmt(buf, size, LAYOUT_STATE "%s", path);
}
