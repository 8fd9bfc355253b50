"""Importers: open indexes built by other systems as RAGScope workspaces (``core.importers.lightrag``)."""
