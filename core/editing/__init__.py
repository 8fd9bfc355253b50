"""Hand edits of the knowledge graph: merge, rename, retype, describe and delete entities, delete and
add relations; the edit log with undo, export and import (``core.editing.log``); the replay that keeps
edits through every re-index (``core.editing.replay``).

An edit changes the merged ``entities`` / ``relations`` rows and their vectors only: the extraction's
fragments stay (undo rebuilds from them), and the E2GraphRAG mention graph and the summary tree, built
from the chunks' text, are not changed by any edit.
"""
