"""The image's SBOM (manifests/release/sbom.py): a CycloneDX 1.6 document of the project and
every locked distribution, with the licenses their metadata states; valid against the
CycloneDX schema (cyclonedx-python-lib, the release extra) and the same for the same inputs."""

from __future__ import annotations

from email.parser import Parser

import pytest
from lock_file import LOCK_FILE, PROJECT_VIA, Pin, read_pins
from sbom import licenses_of, render_sbom, sbom_text

EPOCH = 1767225600
KOPF = Pin("kopf", "1.45.2", ("a" * 64,), (PROJECT_VIA,))
IDNA = Pin("idna", "3.20", ("b" * 64, "c" * 64), ("kopf",))
REAL = render_sbom(read_pins(LOCK_FILE.read_text()), {}, "0.1.0", EPOCH)


def metadata(text: str):
    return Parser().parsestr(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "Name: a\nLicense-Expression: Apache-2.0 OR BSD-3-Clause\nLicense: MIT\n",
            [{"expression": "Apache-2.0 OR BSD-3-Clause"}],
            id="a License-Expression wins",
        ),
        pytest.param(
            "Name: a\nLicense: MIT\nClassifier: License :: OSI Approved :: BSD License\n",
            [{"license": {"name": "MIT"}}],
            id="a License field that is a name comes next",
        ),
        pytest.param(
            "Name: a\nLicense: " + "x" * 81 + "\n"
            "Classifier: License :: OSI Approved :: MIT License\n"
            "Classifier: License :: OSI Approved :: Apache Software License\n",
            [
                {"license": {"name": "Apache Software License"}},
                {"license": {"name": "MIT License"}},
            ],
            id="a License field that is a text gives way to the classifiers, sorted",
        ),
        pytest.param(
            "Name: a\nLicense: UNKNOWN\nClassifier: License :: OSI Approved\n",
            [],
            id="UNKNOWN and a classifier naming no license give none",
        ),
    ],
)
def test_licenses_from_metadata(text: str, expected: list):
    assert licenses_of(metadata(text)) == expected


def test_a_small_sbom_in_whole():
    assert render_sbom([KOPF, IDNA], {"kopf": [{"expression": "MIT"}]}, "0.1.0", EPOCH) == {
        "bomFormat": "CycloneDX",
        "specVersion": "1.6",
        "serialNumber": "urn:uuid:c7bb3743-9e6a-5c4b-9881-21d0d05303f6",
        "version": 1,
        "metadata": {
            "timestamp": "2026-01-01T00:00:00Z",
            "tools": {
                "components": [{"type": "application", "name": "manifests/release/release.py"}]
            },
            "component": {
                "type": "container",
                "bom-ref": "ome-operator-image@0.1.0",
                "name": "ome-operator",
                "version": "0.1.0",
                "licenses": [{"license": {"id": "Apache-2.0"}}],
            },
        },
        "components": [
            {
                "type": "application",
                "bom-ref": "pkg:pypi/ome-operator@0.1.0",
                "name": "ome-operator",
                "version": "0.1.0",
                "purl": "pkg:pypi/ome-operator@0.1.0",
                "licenses": [{"license": {"id": "Apache-2.0"}}],
            },
            {
                "type": "library",
                "bom-ref": "pkg:pypi/kopf@1.45.2",
                "name": "kopf",
                "version": "1.45.2",
                "purl": "pkg:pypi/kopf@1.45.2",
                "hashes": [{"alg": "SHA-256", "content": "a" * 64}],
                "licenses": [{"expression": "MIT"}],
            },
            {
                "type": "library",
                "bom-ref": "pkg:pypi/idna@3.20",
                "name": "idna",
                "version": "3.20",
                "purl": "pkg:pypi/idna@3.20",
                "hashes": [
                    {"alg": "SHA-256", "content": "b" * 64},
                    {"alg": "SHA-256", "content": "c" * 64},
                ],
            },
        ],
        "dependencies": [
            {"ref": "ome-operator-image@0.1.0", "dependsOn": ["pkg:pypi/ome-operator@0.1.0"]},
            {"ref": "pkg:pypi/ome-operator@0.1.0", "dependsOn": ["pkg:pypi/kopf@1.45.2"]},
            {"ref": "pkg:pypi/kopf@1.45.2", "dependsOn": ["pkg:pypi/idna@3.20"]},
            {"ref": "pkg:pypi/idna@3.20", "dependsOn": []},
        ],
    }


def test_the_serial_number_changes_with_what_the_sbom_describes():
    serials = {
        render_sbom(pins, {}, version, EPOCH)["serialNumber"]
        for pins, version in [([KOPF], "0.1.0"), ([KOPF], "0.2.0"), ([KOPF, IDNA], "0.1.0")]
    }
    assert len(serials) == 3


def test_a_requirer_the_lock_does_not_pin_is_refused():
    orphan = Pin("idna", "3.20", ("b" * 64,), ("requests",))
    with pytest.raises(ValueError) as caught:
        render_sbom([orphan], {}, "0.1.0", EPOCH)
    assert str(caught.value) == "requirements.lock: requests requires idna but is not pinned"


def test_the_sbom_of_the_lock_refers_only_to_its_own_components():
    refs = [REAL["metadata"]["component"]["bom-ref"]]
    refs += [component["bom-ref"] for component in REAL["components"]]
    named = {d["ref"] for d in REAL["dependencies"]}
    named |= {ref for d in REAL["dependencies"] for ref in d["dependsOn"]}
    assert (len(refs) == len(set(refs)), sorted(named - set(refs))) == (True, [])
    assert [c for c in REAL["components"] if not {"type", "name", "version"} <= set(c)] == []


def test_the_sbom_of_the_lock_is_valid_cyclonedx_1_6():
    pytest.importorskip("cyclonedx", reason="the release extra (cyclonedx-python-lib) validates")
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(sbom_text(REAL))
    assert error is None, str(error)
