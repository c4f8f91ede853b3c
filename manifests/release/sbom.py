"""The image's software bill of materials: a CycloneDX 1.6 JSON document of the Python
distributions the image installs, the project's own and every one of requirements.lock.

Pure: the pins, the licenses found in the distributions' metadata, the version and the release
date in; a dict out. The same inputs give the same document: the serial number is derived from
them, not drawn at random, and the timestamp is the release's SOURCE_DATE_EPOCH.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from email.message import Message
from typing import Any

from lock_file import PROJECT_VIA, Pin

SPEC_VERSION = "1.6"
PROJECT = "ome-operator"
PROJECT_LICENSE = "Apache-2.0"
#: The License field of some metadata is the whole license text: past this length it is
#: not a license name, and the classifiers are read instead.
_LONGEST_LICENSE_NAME = 80


def render_sbom(
    pins: Sequence[Pin],
    licenses: Mapping[str, Sequence[dict[str, Any]]],
    version: str,
    epoch: int,
) -> dict[str, Any]:
    """The CycloneDX document of the image ``version``: one component per pin (name, version,
    purl, the lock's hashes, ``licenses[pin.name]`` when known) and the project's own
    distribution, with who depends on whom as the lock's ``# via`` comments say."""
    image = _image(version)
    project = _project(version)
    return {
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        "serialNumber": _serial_number(pins, version),
        "version": 1,
        "metadata": {
            "timestamp": release_timestamp(epoch),
            "tools": {
                "components": [
                    {"type": "application", "name": "manifests/release/release.py"},
                ]
            },
            "component": image,
        },
        "components": [project, *(_component(pin, licenses.get(pin.name, ())) for pin in pins)],
        "dependencies": _dependencies(image, project, pins),
    }


def sbom_text(document: Mapping[str, Any]) -> str:
    """The document as the file holds it: indented JSON, keys in the order written."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def licenses_of(metadata: Message) -> list[dict[str, Any]]:
    """CycloneDX licenses from a distribution's metadata: its License-Expression; else its
    License field when that is a name, not a text; else its license classifiers; else none."""
    if expression := (metadata.get("License-Expression") or "").strip():
        return [{"expression": expression}]
    field = (metadata.get("License") or "").strip()
    if field and field != "UNKNOWN" and "\n" not in field and len(field) <= _LONGEST_LICENSE_NAME:
        return [{"license": {"name": field}}]
    names = sorted(
        {
            classifier.rsplit("::", 1)[-1].strip()
            for classifier in metadata.get_all("Classifier") or []
            if classifier.startswith("License ::") and classifier.count("::") > 1
        }
    )
    return [{"license": {"name": name}} for name in names]


def _image(version: str) -> dict[str, Any]:
    return {
        "type": "container",
        "bom-ref": f"{PROJECT}-image@{version}",
        "name": PROJECT,
        "version": version,
        "licenses": [{"license": {"id": PROJECT_LICENSE}}],
    }


def _project(version: str) -> dict[str, Any]:
    purl = f"pkg:pypi/{PROJECT}@{version}"
    return {
        "type": "application",
        "bom-ref": purl,
        "name": PROJECT,
        "version": version,
        "purl": purl,
        "licenses": [{"license": {"id": PROJECT_LICENSE}}],
    }


def _component(pin: Pin, licenses: Sequence[dict[str, Any]]) -> dict[str, Any]:
    component: dict[str, Any] = {
        "type": "library",
        "bom-ref": pin.purl,
        "name": pin.name,
        "version": pin.version,
        "purl": pin.purl,
        "hashes": [{"alg": "SHA-256", "content": digest} for digest in pin.hashes],
    }
    if licenses:
        component["licenses"] = list(licenses)
    return component


def _dependencies(
    image: Mapping[str, Any], project: Mapping[str, Any], pins: Sequence[Pin]
) -> list[dict[str, Any]]:
    """Who depends on whom: the image on the project, the project and each pin on the pins
    whose ``# via`` names them."""
    purls = {pin.name: pin.purl for pin in pins}
    needed: dict[str, set[str]] = {project["bom-ref"]: set()}
    needed.update({pin.purl: set() for pin in pins})
    for pin in pins:
        for name in pin.required_by:
            if name != PROJECT_VIA and name not in purls:
                raise ValueError(f"requirements.lock: {name} requires {pin.name} but is not pinned")
            needed[project["bom-ref"] if name == PROJECT_VIA else purls[name]].add(pin.purl)
    return [
        {"ref": image["bom-ref"], "dependsOn": [project["bom-ref"]]},
        *({"ref": ref, "dependsOn": sorted(on)} for ref, on in needed.items()),
    ]


def _serial_number(pins: Sequence[Pin], version: str) -> str:
    """A UUID derived from what the document describes: the same release, the same serial."""
    described = "\n".join([version, *(f"{p.purl} {' '.join(p.hashes)}" for p in pins)])
    digest = hashlib.sha256(described.encode()).hexdigest()
    return f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'{PROJECT}:{digest}')}"


def release_timestamp(epoch: int) -> str:
    """The release's date as the SBOM and the image's created label write it (UTC)."""
    moment = datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
