/* progress.c - progress bar or periodic log lines; see progress.h. */
#include <stdio.h>
#include <time.h>

#include "linkbot/log.h"
#include "linkbot/progress.h"

#define TTY_INTERVAL 0.1	/* seconds between redraws */
#define LOG_INTERVAL 10.0	/* seconds between plain lines */

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_start(struct lb_progress *p, const char *label, long total,
		    int tty)
{
	p->label = label;
	p->total = total;
	p->done = 0;
	p->tty = tty;
	p->started = now_seconds();
	p->last_draw = p->started;
}

void progress_set_total(struct lb_progress *p, long total)
{
	p->total = total;
}

static void draw(struct lb_progress *p, double now, int final)
{
	double elapsed = now - p->started, rate, eta;
	char bar[31];
	int i, fill;

	rate = elapsed > 0 ? (double)p->done / elapsed : 0;
	eta = (rate > 0 && p->total > p->done) ?
		      (double)(p->total - p->done) / rate : 0;
	if (!p->tty) {
		if (p->total > 0)
			log_info("%s: %ld/%ld, %.1f/s, ETA %.0fs", p->label,
				 p->done, p->total, rate, eta);
		else
			log_info("%s: %ld, %.1f/s", p->label, p->done, rate);
		return;
	}
	fill = p->total > 0 ? (int)(30.0 * (double)p->done / (double)p->total) : 0;
	for (i = 0; i < 30; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[30] = '\0';
	fprintf(stderr, "\r%s [%s] %ld/%ld %.1f/s ETA %02d:%02d%s", p->label,
		bar, p->done, p->total, rate, (int)eta / 60, (int)eta % 60,
		final ? "\n" : "");
	fflush(stderr);
}

void progress_add(struct lb_progress *p, long n)
{
	double now;

	p->done += n;
	now = now_seconds();
	if (now - p->last_draw < (p->tty ? TTY_INTERVAL : LOG_INTERVAL))
		return;
	p->last_draw = now;
	draw(p, now, 0);
}

void progress_done(struct lb_progress *p)
{
	draw(p, now_seconds(), 1);
}
