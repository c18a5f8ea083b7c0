#!/usr/bin/python3
"""The peers a user would really pick, on the same extracted text as
relate_quality (issue 20): precision@8 of their unconstrained top 8.

  relate_peers.py CORPUS [PEER ...]

CORPUS: lines "label<TAB>doc JSON" (bench/relate-corpus.py). Every page is
a source and a target; the text of a page is its title and its visible text
(the doc's "title" and "text"), for every peer. Peers:

  sklearn-tfidf  scikit-learn's standard setup, the one people copy:
                 TfidfVectorizer(sublinear_tf=True, stop_words="english",
                 min_df=2, max_df=0.5), cosine
  sklearn-lsa128 TruncatedSVD(128) of that TF-IDF (random_state=0), rows
                 normalised, cosine
  sklearn-lsa256 the same at 256 dimensions (at most pages - 1)
  xapian-mlt     Xapian's "more like this": the page indexed with the
                 English stemmer (every term stemmed: STEM_SOME's unstemmed
                 copies doubled words in the expansion, 0.29 against 0.35
                 on site-python), English stop words, its relevance set
                 (the page alone) expanded to 40 terms (15: 0.13, 100:
                 0.34), OR query, best 8 other pages

Prints one line per peer, like relate_quality:
  corpus=site-python.tsv pages=266 labels=16 method=sklearn-tfidf p@8=0.5 ms=12
"""

import json
import os
import sys
import time

import numpy as np

K = 8


def load(path):
    labels, texts = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            lab, js = line.rstrip("\n").split("\t", 1)
            d = json.loads(js)
            labels.append(lab)
            texts.append((d.get("title") or "") + "\n" + (d.get("text") or ""))
    return labels, texts


def precision(labels, top):
    lab = np.array(labels)
    # a row padded with the page itself (Xapian found fewer than K) never
    # counts for those slots
    hit = sum(int(((lab[row] == lab[i]) & (row != i)).sum())
              for i, row in enumerate(top))
    return hit / (len(labels) * K)


def topk_dense(x):
    """Top K rows by dot product (x rows unit length), itself excluded;
    ties to the lower index (stable sort)."""
    n = x.shape[0]
    out = np.zeros((n, K), dtype=np.int64)
    for b in range(0, n, 1024):
        s = x[b:b + 1024] @ x.T
        if hasattr(s, "toarray"):
            s = s.toarray()
        s = np.asarray(s, dtype=np.float64)
        for r in range(s.shape[0]):
            s[r, b + r] = -np.inf
        out[b:b + 1024] = np.argsort(-s, axis=1, kind="stable")[:, :K]
    return out


def sklearn_tfidf(texts):
    from sklearn.feature_extraction.text import TfidfVectorizer
    v = TfidfVectorizer(sublinear_tf=True, stop_words="english", min_df=2,
                        max_df=0.5)
    return v.fit_transform(texts)


def sklearn_lsa(texts, dim):
    from sklearn.decomposition import TruncatedSVD
    from sklearn.preprocessing import normalize
    x = sklearn_tfidf(texts)
    dim = min(dim, x.shape[0] - 1, x.shape[1] - 1)
    y = TruncatedSVD(dim, random_state=0).fit_transform(x)
    return normalize(y)


def xapian_mlt(texts):
    import tempfile
    import xapian
    db = xapian.WritableDatabase(tempfile.mkdtemp(prefix="relate-xapian-"),
                                 xapian.DB_CREATE_OR_OPEN)
    tg = xapian.TermGenerator()
    stem = xapian.Stem("english")
    tg.set_stemmer(stem)
    stop = xapian.SimpleStopper()
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    for w in ENGLISH_STOP_WORDS:
        stop.add(w)
    tg.set_stopper(stop)
    tg.set_stemming_strategy(xapian.TermGenerator.STEM_ALL)
    for t in texts:
        doc = xapian.Document()
        tg.set_document(doc)
        tg.index_text(t)
        db.add_document(doc)
    db.commit()
    enq = xapian.Enquire(db)
    out = np.zeros((len(texts), K), dtype=np.int64)

    for i in range(len(texts)):
        rset = xapian.RSet()
        rset.add_document(i + 1)
        eset = enq.get_eset(40, rset)
        q = xapian.Query(xapian.Query.OP_OR, [e.term for e in eset])
        enq.set_query(q)
        got = [m.docid - 1 for m in enq.get_mset(0, K + 1)
               if m.docid - 1 != i][:K]
        got += [i] * (K - len(got))  # padding never matches: itself
        out[i] = got
    return out


def main():
    path = sys.argv[1]
    peers = sys.argv[2:] or ["sklearn-tfidf", "sklearn-lsa128",
                             "sklearn-lsa256", "xapian-mlt"]
    labels, texts = load(path)
    name = os.path.basename(path)
    for peer in peers:
        t0 = time.time()
        try:
            if peer == "sklearn-tfidf":
                top = topk_dense(sklearn_tfidf(texts))
            elif peer.startswith("sklearn-lsa"):
                top = topk_dense(sklearn_lsa(texts, int(peer[11:])))
            elif peer == "xapian-mlt":
                top = xapian_mlt(texts)
            else:
                sys.exit(f"relate_peers: unknown peer {peer}")
        except ImportError as e:
            print(f"relate_peers: {peer}: {e}", file=sys.stderr)
            continue
        p = precision(labels, top)
        print(f"corpus={name} pages={len(labels)} "
              f"labels={len(set(labels))} method={peer} p@8={p:.4f} "
              f"ms={1000 * (time.time() - t0):.0f}", flush=True)


if __name__ == "__main__":
    main()
