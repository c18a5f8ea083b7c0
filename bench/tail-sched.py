#!/usr/bin/env python3
"""tail-sched.py TRACE PID [BIN]: who had the cores while a night's tail ran.

TRACE is `perf script --hide-call-graph -F pid,tid,cpu,time,event,trace`
of a system-wide record of the scheduler's switches and wake-ups, e.g.
started when the night's log shows its first build line:

  perf record -a -e sched:sched_switch -e sched:sched_wakeup \
      -e sched:sched_process_exit -o tail.data -- sleep 18

PID is linkbot's process. Prints, for every BIN seconds (0.5), the mean
number of linkbot's threads waiting for a core (rq), asleep (S) and in
uninterruptible sleep (D), and how the cores were shared: linkbot, other
processes, idle. Then the figure that says whether linkbot kept the
cores busy: the time during which fewer than 2 of its threads were
runnable (on a core or waiting for one), and the idle core-seconds then.
Written for bench/RESULTS.md, "the tail's cores" (issue 25).
"""
import collections
import re
import sys

path, pid = sys.argv[1], int(sys.argv[2])
binw = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
rx = re.compile(r'^\s*(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)$')
kv = re.compile(r'(\w+)=(\S+)')
ev, tids = [], set()
for line in open(path):
    m = rx.match(line)
    if m:
        ev.append((float(m[4]), int(m[1]), int(m[2]), int(m[3]), m[5], m[6]))
        if int(m[1]) == pid:
            tids.add(int(m[2]))
if not ev or not tids:
    sys.exit("tail-sched.py: no events of that process")
ncpu = 1 + max(e[3] for e in ev)
t0 = ev[0][0]
end = max(e[0] for e in ev if e[1] == pid)
nb = int((end - t0) / binw) + 1
acc = [collections.Counter() for _ in range(nb)]
state, oncpu = {}, {}


def bins(a, b):
    """(bin, seconds) pieces of [a, b)"""
    while a < b:
        i = min(int((a - t0) / binw), nb - 1)
        e = min(b, t0 + (i + 1) * binw)
        if e <= a:
            e = b if i == nb - 1 else min(b, a + 1e-9)
        yield i, e - a
        a = e


prev_t = t0
below2 = below1 = idle_all = idle_b2 = 0.0
for ts, p, t, cpu, name, rest in ev:
    if ts > end:
        break
    dt = ts - prev_t
    if dt > 0:
        for i, s in bins(prev_t, ts):
            for st in state.values():
                acc[i][st] += s
            for c in range(ncpu):
                who = oncpu.get(c, 0)
                acc[i]['lb' if who in tids else 'idle' if who == 0 else 'other'] += s
        run = sum(1 for x in oncpu.values() if x in tids)
        n = run + sum(1 for st in state.values() if st == 'rq')
        idle = sum(1 for c in range(ncpu) if oncpu.get(c, 0) == 0)
        idle_all += dt * idle
        if n < 2:
            below2 += dt
            idle_b2 += dt * idle
        if n < 1:
            below1 += dt
    prev_t = ts
    if name == 'sched_switch':
        d = dict(kv.findall(rest))
        prev, nxt = int(d['prev_pid']), int(d['next_pid'])
        if prev in tids:
            ps = d['prev_state']
            state[prev] = 'rq' if ps.startswith('R') else 'D' if 'D' in ps else 'S'
        if nxt in tids:
            state.pop(nxt, None)
        oncpu[cpu] = nxt
    elif name == 'sched_wakeup':
        w = int(dict(kv.findall(rest))['pid'])
        if w in tids and w not in oncpu.values():
            state[w] = 'rq'
    elif name == 'sched_process_exit' and t in tids:
        state.pop(t, None)
print(f"{'t':>6} {'rq':>5} {'S':>6} {'D':>5} | cores: {'linkbot':>7} {'others':>6} {'idle':>5}")
for i, c in enumerate(acc):
    w = binw if i < nb - 1 else max(end - t0 - i * binw, 1e-9)
    print(f"{i * binw:6.2f} {c['rq'] / w:5.1f} {c['S'] / w:6.1f} {c['D'] / w:5.1f} | "
          f"       {c['lb'] / w:7.2f} {c['other'] / w:6.2f} {c['idle'] / w:5.2f}")
tot = end - t0
print(f"traced {tot:.2f} s: fewer than 2 linkbot threads runnable {below2:.2f} s "
      f"({100 * below2 / tot:.1f} %), none {below1:.2f} s; idle core-seconds "
      f"{idle_all:.2f}, of which while linkbot had fewer than 2 runnable {idle_b2:.2f}")
