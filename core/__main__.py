"""``python -m core``: the RAGScope command-line interface."""
import sys

from core.cli.main import main

sys.exit(main())
