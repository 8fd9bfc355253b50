"""Vector counts of an embedded ChromaDB folder read straight from its SQLite file, without importing
``chromadb`` (a second or more of start-up): what a no-op re-index needs to notice lost vectors.

The count is the one ChromaDB's own ``Collection.count()`` returns (the rows of the collection's
metadata segment in the ``embeddings`` table). The file is opened read-only; any surprise (no file,
another schema version, a locked database) returns None and the caller asks ChromaDB itself.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Iterable, Optional

CHROMA_FILE = "chroma.sqlite3"

_COUNTS = """
SELECT c.name, COUNT(e.id) FROM collections c
JOIN segments s ON s.collection = c.id AND s.scope = 'METADATA'
LEFT JOIN embeddings e ON e.segment_id = s.id
WHERE c.name IN ({marks}) GROUP BY c.name
"""


def embedded_counts(folder: Path, namespace: str, collections: Iterable[str]) -> Optional[dict[str, int]]:
    """{collection: vector count} of ``namespace``'s collections in the embedded store ``folder``
    (a collection that does not exist counts 0), or None when the file cannot be read as expected."""
    names = {f"{namespace}_{c}": c for c in collections}
    path = Path(folder) / CHROMA_FILE
    if not names or not path.is_file():
        return None
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2.0)
    except sqlite3.Error:
        return None
    try:
        rows = connection.execute(_COUNTS.format(marks=",".join("?" * len(names))), list(names)).fetchall()
    except sqlite3.Error:
        return None
    finally:
        connection.close()
    counts = {c: 0 for c in names.values()}
    for name, count in rows:
        counts[names[name]] = int(count)
    return counts
