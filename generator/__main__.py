"""Allow ``python -m mcptasks_gen``."""

from mcptasks_gen.cli import run

run()
