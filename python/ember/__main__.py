"""python -m ember ... is ember-run ..."""
from ._commands import ember_run

ember_run()
