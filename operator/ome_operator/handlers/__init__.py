"""kopf handlers: importing this package registers them (``kopf run -m ome_operator.handlers``).

Handlers only translate: start-up builds the controller (whose own informers watch the cluster),
admission reviews go to the pure admission rules. kopf watches nothing itself. Every decision
lives in ``ome_operator.core``.
"""

from . import admission, startup

__all__ = ["admission", "startup"]
