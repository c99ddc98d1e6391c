"""The exact, fast Rust core of the Agent Stream Protocol, for Python hosts.

Names and semantics follow the reference package ``a13n-stream-protocol`` 0.21.0. Inputs are the Harness wire
form (a JSON line as ``str`` or ``bytes``, or the equivalent ``dict``); outputs are JSON text or plain Python
objects. Checkpoints are the reference's JSON byte for byte, so they move between this package and the
reference in both directions.

>>> from a13n_stream_rs import DisplayFold
>>> line = ('{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00+00:00",'
...         '"event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}}')
>>> fold = DisplayFold("r")
>>> fold.fold_line(line)[:40]
'{"observed":[{"sequence":1,"event":{"typ'
>>> fold.position
{'attempt': 0, 'sequence': 1}
"""

from ._core import *  # noqa: F403  (the names the extension lists in its __all__)
from ._core import __all__ as __all__
