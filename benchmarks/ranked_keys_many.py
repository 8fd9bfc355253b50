"""Name linking's entity searches: one ``ranked_keys`` per name against one ``ranked_keys_many`` call.

Synthetic unit vectors at the entity counts of dev_musique (1,240) and dev_musique_full (5,440), five
names a question, k = 12 (4 x the seeds kept per name); median ms over 300 repetitions and the ratio.
Run it twice, as is (numpy's BLAS on its own threads) and with OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1:
on a busy machine the threaded run is dominated by thread hand-offs, once per call.

    python benchmarks/ranked_keys_many.py
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402,F401 - puts the repository on the path

import numpy as np  # noqa: E402

from core.storage.vector_search import MatrixSearch, VectorMatrix  # noqa: E402


def main() -> None:
    rng = np.random.default_rng(0)
    for n in (1240, 5440):
        vectors = rng.normal(size=(n, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        matrix = VectorMatrix([f"v{i}" for i in range(n)], vectors, [{"key": f"E{i}"} for i in range(n)])
        search = MatrixSearch(lambda _collection: matrix)
        names = [q / np.linalg.norm(q) for q in rng.normal(size=(5, 384)).astype(np.float32)]
        one: list[float] = []
        many: list[float] = []
        for _ in range(300):
            start = time.perf_counter()
            for name in names:
                search.ranked_keys("entities", name, 12)
            one.append(time.perf_counter() - start)
            start = time.perf_counter()
            search.ranked_keys_many("entities", names, 12)
            many.append(time.perf_counter() - start)
        a, b = statistics.median(one) * 1000, statistics.median(many) * 1000
        print(f"{n} entities, 5 names, k=12: one call per name {a:.3f} ms, one call for all {b:.3f} ms, "
              f"ratio {b / a:.2f}")


if __name__ == "__main__":
    main()
