/*
 * links.h - links.tsv, the record between build and publish, and bonus.tsv
 * beside it (src/publish/links.c: its one writer and its one reader).
 *
 * Where: the private state, never published (layout.h:
 * <client>/<endpoint>/links.tsv, <client>/_projects/<uuid>/<module>.tsv).
 * The pipeline's build stage writes it after each assignment; publish reads
 * it to render the answers, and the next night's build reads it back to
 * keep yesterday's links when they tie (the stability bonus).
 *
 * Format (text, UTF-8, one link a line, '\n' ends a line):
 *
 *   # linkbot links: source_url\ttarget_url\ttype\tscore
 *   <source_url> \t <target_url> \t related|random \t <score, %.6f>
 *
 * Lines of one source are together, in the assignment's order (its links
 * best first); the sources in the order of the endpoint's source list.
 * Lines starting with '#' are comments. A URL holding a control character
 * is never written (it would break the line). Written atomically
 * (name.tmp, then rename): a killed build leaves the previous file.
 *
 * bonus.tsv (next to links.tsv): "<target_url> \t <bonus, %.17g>" per
 * target page, the optimal dual of the last assignment (units of score),
 * which warm starts the next night's solve (docs/assign.md).
 */
#ifndef LINKBOT_LINKS_H
#define LINKBOT_LINKS_H

#include <stddef.h>
#include "linkbot/assign.h"
#include "linkbot/error.h"
#include "linkbot/pages.h"
#include "linkbot/render.h"

/*
 * Writes path atomically (its parent folders made): for each source
 * src->docs[i] its links asg->links[i * asg->l ...] to tgt->docs[...].
 */
int links_write(const char *path, const struct page_list *src,
		const struct page_list *tgt, const struct lb_assignment *asg,
		struct lb_error *err);

/*
 * The score's field of a line: what printf's "%.6f" writes for it (the
 * exact value rounded half to even), without printf; out holds 64 bytes,
 * the length is returned.
 */
size_t links_score_text(char *out, float score);

/*
 * Reads a links.tsv and calls fn once per source page with its links (at
 * most max_links), in the file's order. Lines whose pages left the corpus
 * are skipped. Returns 1 when the file does not exist yet; -1 when fn does
 * (fn fills err) or on a read error. links is only valid during the call.
 */
typedef int (*links_visit_fn)(const struct lb_doc *src,
			      const struct lb_render_link *links, size_t n,
			      void *arg);
int links_read(const char *path, const struct pages *pages,
	       size_t max_links, links_visit_fn fn, void *arg,
	       struct lb_error *err);

/*
 * bonus.tsv: links_read_bonus() calls fn per valid line; 1 when the file
 * does not exist. links_write_bonus() writes atomically. The path is
 * layout_bonus_path() of the links path.
 */
int links_read_bonus(const char *path,
		     void (*fn)(const char *url, double bonus, void *arg),
		     void *arg, struct lb_error *err);
int links_write_bonus(const char *path, const struct page_list *tgt,
		      const double *bonus, size_t n, struct lb_error *err);

#endif
