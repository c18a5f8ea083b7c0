/*
 * progress.h - progress of a long step: a bar with counts, rate and ETA on
 * a terminal, a plain log line every few seconds otherwise (CI logs).
 *
 *   struct lb_progress p;
 *   progress_start(&p, "crawl", total, tty);   total 0 = unknown
 *   progress_add(&p, 1);  ...                  cheap: draws at most 10x/s
 *   progress_done(&p);                         final line
 */
#ifndef LINKBOT_PROGRESS_H
#define LINKBOT_PROGRESS_H

struct lb_progress {
	const char *label;
	long total;
	long done;
	int tty;
	double started;		/* monotonic seconds */
	double last_draw;
};

void progress_start(struct lb_progress *p, const char *label, long total,
		    int tty);
/* The total may grow as work is discovered (new URLs). */
void progress_set_total(struct lb_progress *p, long total);
void progress_add(struct lb_progress *p, long n);
void progress_done(struct lb_progress *p);

#endif
