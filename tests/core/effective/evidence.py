"""What an effective report is computed from, written out by hand: the runtime spec hash of
OPEN-40 computed from a manifest independently of ``runtime_spec_hash``, and a RuntimeDrifted
condition."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def spec_hash(spec: dict[str, Any]) -> str:
    """OPEN-40 computed here from the manifest: CRD defaults, canonical JSON, sha256."""
    entries = [
        {
            **item,
            "modelFormat": {"operator": "Equal", "weight": 1, **item["modelFormat"]},
            "modelFramework": {"operator": "Equal", "weight": 1, **item["modelFramework"]},
        }
        for item in spec["supportedModelFormats"]
    ]
    canonical = json.dumps(
        {**spec, "supportedModelFormats": entries}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def drifted(status: str, reason: str | None = None) -> dict[str, Any]:
    condition = {"type": "RuntimeDrifted", "status": status}
    return condition if reason is None else {**condition, "reason": reason}
