"""Analyst annotations that become gold: chunks marked relevant / not relevant for a question (and an
optional expected answer), set and read through the workspace (``marks``), stored in its database
(``core.storage.annotations``), exported
as and imported from question files in the shared FORMAT.md layout (``exchange``); the command is
``core.cli.annotations``."""
from core.annotations.exchange import ImportReport, export_jsonl, export_records, import_file, import_records, write_export
from core.annotations.marks import annotation_for, annotations, delete_questions, save_marks
from core.storage.annotations import drop_document_annotations, question_id
from core.storage.records import AnnotatedQuestion, Mark

__all__ = ["AnnotatedQuestion", "ImportReport", "Mark", "annotation_for", "annotations", "delete_questions",
           "drop_document_annotations", "export_jsonl", "export_records", "import_file", "import_records",
           "question_id", "save_marks", "write_export"]
