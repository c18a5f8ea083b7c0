#!/usr/bin/python3
"""Where ours and a peer differ on one labelled corpus (issue 20, round 9):
which pages, which labels, what our top 8 holds that the peer's does not.

  RELATE_LABELS=ALL build/bench/relate_quality CORPUS lsa 2>OURS >/dev/null
  relate_diag.py CORPUS OURS [PAGES]

CORPUS: lines "label<TAB>doc JSON" (bench/relate-corpus.py); OURS: the
candidate lists relate_quality printed (a page's URL, then its candidates
"    score label url", best first; the first 8 are its top 8). The peer is
scikit-learn's LSA 128 over its standard TF-IDF (bench/relate_peers.py),
unconstrained top 8. Prints both precisions@8; by quartile of page length
(words) and of links kept; the hubs (pages in the most top-8 lists); the
length of right and wrong targets; the label pairs most often confused;
how often a link's two titles share a word; and the PAGES pages where the
peer beats ours most, with both lists.
"""

import collections
import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relate_peers  # noqa: E402

K = 8


def ours_top(path, index):
    """Our top 8 of every page, by the lists relate_quality printed."""
    top, cur = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("    "):
                row = top.setdefault(cur, [])
                if cur is not None and len(row) < K:
                    row.append(index[line.split()[-1]])
            elif not line.startswith("  ") and line.strip():
                cur = index.get(line.strip())
    return top


def peer_top(texts):
    from sklearn.decomposition import TruncatedSVD
    from sklearn.preprocessing import normalize
    x = relate_peers.sklearn_tfidf(texts)
    z = TruncatedSVD(128, random_state=0).fit_transform(x)
    return relate_peers.topk_dense(normalize(z))


def quartiles(name, v, hit_o, hit_p):
    q = np.quantile(v, [0.25, 0.5, 0.75])
    b = np.digitize(v, q, right=True)
    for k in range(4):
        m = b == k
        if m.any():
            hi = "%g" % q[k] if k < 3 else "max"
            print("  %s quartile %d (to %s): %d pages, ours %.3f, peer %.3f"
                  % (name, k + 1, hi, m.sum(), hit_o[m].mean(),
                     hit_p[m].mean()))


def title_words(t):
    return {w for w in re.split(r"[^a-z0-9]+", (t or "").lower())
            if len(w) > 2 and not w.isdigit()}


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: relate_diag.py CORPUS OURS [PAGES]")
    labels, docs = [], []
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            lab, js = line.rstrip("\n").split("\t", 1)
            labels.append(lab)
            docs.append(json.loads(js))
    n = len(docs)
    index = {d["url"]: i for i, d in enumerate(docs)}
    ours = ours_top(sys.argv[2], index)
    missing = [i for i in range(n) if len(ours.get(i, [])) < K]
    if missing:
        sys.exit(f"relate_diag: {len(missing)} pages without 8 candidates "
                 "in the lists (not the same corpus?)")
    texts = [(d.get("title") or "") + "\n" + (d.get("text") or "")
             for d in docs]
    peer = peer_top(texts)
    lab = np.array(labels)
    lists = {"ours": [ours[i] for i in range(n)],
             "peer": [list(peer[i]) for i in range(n)]}
    hit = {k: np.array([np.mean(lab[v[i]] == lab[i]) for i in range(n)])
           for k, v in lists.items()}
    words = np.array([len((d.get("text") or "").split()) for d in docs])
    links = np.array([len(d.get("links") or []) for d in docs])
    print("%s: %d pages, %d labels; top-8 precision ours %.4f, peer "
          "(sklearn LSA 128) %.4f; pages better ours %d, peer %d"
          % (os.path.basename(sys.argv[1]), n, len(set(labels)),
             hit["ours"].mean(), hit["peer"].mean(),
             (hit["ours"] > hit["peer"]).sum(),
             (hit["peer"] > hit["ours"]).sum()))
    quartiles("words", words, hit["ours"], hit["peer"])
    quartiles("links", links, hit["ours"], hit["peer"])
    for k, v in lists.items():
        indeg = np.bincount(np.concatenate(v), minlength=n)
        hubs = np.argsort(-indeg, kind="stable")[:5]
        right = [t for i in range(n) for t in v[i] if lab[t] == lab[i]]
        wrong = [t for i in range(n) for t in v[i] if lab[t] != lab[i]]
        print("  %s: hubs (lists, words) %s; in no list %d; words of right "
              "targets (median) %d, of wrong ones %d"
              % (k, ", ".join("%s (%d, %d)" % (docs[t]["url"].split("/")[-1],
                                                 indeg[t], words[t])
                              for t in hubs),
                 (indeg == 0).sum(), np.median(words[right]),
                 np.median(words[wrong])))
    conf = {k: collections.Counter((labels[i], labels[t])
                                   for i in range(n) for t in v[i]
                                   if lab[t] != lab[i])
            for k, v in lists.items()}
    print("  confused most (source label -> target label: ours, peer):")
    for (a, b), c in conf["ours"].most_common(10):
        print("    %s -> %s: %d, %d" % (a, b, c, conf["peer"][(a, b)]))
    tw = [title_words(d.get("title")) for d in docs]
    for k, v in lists.items():
        share = {ok: np.mean([len(tw[i] & tw[t]) > 0 for i in range(n)
                              for t in v[i] if (lab[t] == lab[i]) == ok])
                 for ok in (True, False)}
        print("  %s: links whose titles share a word: right %.2f, wrong %.2f"
              % (k, share[True], share[False]))
    worst = np.argsort(hit["ours"] - hit["peer"], kind="stable")
    for i in worst[:int(sys.argv[3]) if len(sys.argv) > 3 else 0]:
        print("%s [%s] ours %.2f peer %.2f, %d words"
              % (docs[i]["url"], labels[i], hit["ours"][i], hit["peer"][i],
                 words[i]))
        for k, v in lists.items():
            print("    %s: %s" % (k, " ".join(
                "%s%s" % ("" if lab[t] == lab[i] else "*",
                          docs[t]["url"].split("/", 3)[-1]) for t in v[i])))


if __name__ == "__main__":
    main()
