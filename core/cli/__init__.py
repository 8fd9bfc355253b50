"""Command-line interface: ``python -m core index|status|docs|delete|retry|repair|export|graph-quality|
query|compare|eval|judge|annotations``.

``base`` holds what every command shares (flags, settings resolution, workspace opening, progress,
Ctrl-C handling, JSON output); each command module imports ``base`` and registers its sub-commands;
``main`` builds the parser from them. Nothing imports back: no command imports ``main`` or another
command module.
"""
