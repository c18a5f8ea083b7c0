#!/usr/bin/python3
"""A co-occurrence dense view, screened on the peers' tokens (issue 20,
round 10; bench/RESULTS.md): is it worth building into the engine?

  relate_sif.py CORPUS

PPMI-SVD word vectors (Levy, Goldberg, Dagan 2015) from windows of +-5
words weighted 1 / distance, context distribution smoothed by 0.75, 128
dimensions, W = U sqrt(S), unit rows; SIF document vectors (Arora, Liang,
Ma 2017: sum of a / (a + p(w)) W_w over the page's words / their number,
a = 1e-3, the first principal component removed), unit rows. Prints the
precision@8 of its unconstrained top 8 alone, of scikit-learn's LSA 128
(the peer, bench/relate_peers.py) and of the two joined with the SIF
view's share 0.3 and 0.5 of the cosine. Vocabulary: the peers' analyzer
(English stop words), words in 2 pages at least, the 20,000 most
frequent.
"""
import os
import sys

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relate_peers as rp  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402
from sklearn.preprocessing import normalize  # noqa: E402
from sklearn.utils.extmath import randomized_svd  # noqa: E402

labels, texts = rp.load(sys.argv[1])
an = CountVectorizer(stop_words="english").build_analyzer()
docs = [an(t) for t in texts]
cv = CountVectorizer(analyzer=lambda x: x, min_df=2, max_features=20000)
cv.fit(docs)
voc = cv.vocabulary_
ids = [np.array([voc[w] for w in d if w in voc], dtype=np.int64) for d in docs]
V = len(voc)
rows, cols, vals = [], [], []
for a in ids:
    for off in range(1, 6):
        if len(a) > off:
            rows.append(a[:-off])
            cols.append(a[off:])
            vals.append(np.full(len(a) - off, 1.0 / off))
r = np.concatenate(rows)
c = np.concatenate(cols)
v = np.concatenate(vals)
C = sp.coo_matrix((v, (r, c)), shape=(V, V)).tocsr()
C = C + C.T
tot = C.sum()
pw = np.asarray(C.sum(axis=1)).ravel() / tot
pc = np.asarray(C.sum(axis=0)).ravel() ** 0.75
pc /= pc.sum()
C = C.tocoo()
pmi = np.log((C.data / tot) / (pw[C.row] * pc[C.col]))
keep = pmi > 0
P = sp.csr_matrix((pmi[keep], (C.row[keep], C.col[keep])), shape=(V, V))
U, S, _ = randomized_svd(P, 128, random_state=0)
W = normalize(U * np.sqrt(S))
cnt = np.bincount(np.concatenate(ids), minlength=V).astype(float)
p = cnt / cnt.sum()
wsif = 1e-3 / (1e-3 + p)
D = np.zeros((len(ids), W.shape[1]))
for i, a in enumerate(ids):
    if len(a):
        D[i] = (wsif[a, None] * W[a]).sum(0) / len(a)
D -= D.mean(0)
u = np.linalg.svd(D, full_matrices=False)[2][0]
D -= np.outer(D @ u, u)
D = normalize(D)
print("sif alone %.4f" % rp.precision(labels, rp.topk_dense(D)))
L = rp.sklearn_lsa(texts, 128)
print("lsa128 %.4f" % rp.precision(labels, rp.topk_dense(L)))
for w in (0.3, 0.5):
    J = np.hstack([np.sqrt(1 - w) * L, np.sqrt(w) * D])
    print("lsa128 + sif share %.1f: %.4f" % (w, rp.precision(labels, rp.topk_dense(J))))
