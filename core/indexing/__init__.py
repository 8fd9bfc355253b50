"""Building and maintaining a workspace's index (the write side of RAGScope).

``pipeline`` registers documents and processes the pending ones batch by batch (``batch``; the next
batch prepared ahead by ``prefetch`` when the embedder is remote); ``common`` holds what the steps
share (extractor protocol, report, progress); ``remerge`` re-merges touched entities/relations
(their profiles: ``profiles``) and keeps the summary tree (``tree``, extractive summaries in ``summarize``);
``vector_writes`` is the one place that embeds and upserts derived vectors; ``deletion`` removes
documents; ``reconcile`` repairs vectors from SQLite; ``reembed`` switches a workspace to another
embedder. Modules import downwards only (pipeline → batch/prefetch/deletion/reconcile →
remerge/vector_writes → profiles/tree/summarize/common); SQL lives in ``core.storage``.
"""
