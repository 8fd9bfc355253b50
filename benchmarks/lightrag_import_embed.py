"""How fast the LightRAG import's re-embedding runs per torch thread count and batch size: the bundled MiniLM on
a sample of the texts an import of DIR embeds (entities and relations), wall and process CPU seconds.

    python benchmarks/lightrag_import_embed.py /tmp/lr_musique/kg --threads 1,2 --batches 16,64 [--sample 384]

Prints one JSON line per configuration. CPU seconds are the process's (all threads): on a loaded machine
they show the cost of threads waiting for each other, which wall time mixes with the other processes' load.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--batches", default="16,64")
    parser.add_argument("--sample", type=int, default=384)
    args = parser.parse_args()
    import torch

    from core.embeddings import MiniLMEmbedder
    from core.importers.lightrag.mapping import map_index
    from core.importers.lightrag.reader import read_index
    from core.indexing.vector_writes import graph_texts

    plan = map_index(read_index(args.directory))
    texts = graph_texts(plan.entities, plan.relations, [])
    sample = texts[::max(1, len(texts) // args.sample)][:args.sample]
    for threads in (int(t) for t in args.threads.split(",")):
        for batch in (int(b) for b in args.batches.split(",")):
            torch.set_num_threads(threads)
            embedder = MiniLMEmbedder(batch_size=batch)
            embedder.embed(sample[:32])  # warm-up
            wall, cpu = time.perf_counter(), time.process_time()
            embedder.embed(sample)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(json.dumps({"threads": threads, "batch": batch, "texts": len(sample), "of": len(texts),
                              "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                              "cpu_ms_per_text": round(1000 * cpu / len(sample), 2)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
