"""Bounded parsing of untrusted files (issue 20).

* ``limits`` — ``ParseLimits`` (pages, characters, archive size and ratio, worker CPU / memory /
  wall-clock) read from the settings, and the ``LimitExceeded`` message naming the setting to raise.
* ``text`` — byte decoding and the small result helpers every format shares.
* ``pdf`` / ``office`` / ``html`` — the format parsers, each checking its caps before the expensive step.
* ``registry`` — loaders keyed by file extension (``register_loader``), with whether each runs isolated.
* ``worker`` — the isolated worker process (CPU-time and address-space limits, wall-clock timeout).

``core.loaders`` is the entry point; nothing here imports it.
"""
