"""The ``auto`` mode: a router that picks one retrieval mode per question from cheap question features
(``features``) with a small JSON model (``model``; the default is ``default_router.json``), runs only
that mode (``auto_mode``) and is trained and cross-validated on per-question gold recall (``training``)."""
