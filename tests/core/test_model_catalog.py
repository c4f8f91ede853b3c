"""Rules of SPEC S2.14: finding the BaseModel or ClusterBaseModel an InferenceService refers to."""

from __future__ import annotations

import pytest

from ome_operator.core import model_catalog
from ome_operator.core.model_catalog import ModelCatalog
from ome_operator.models import ModelRef, ModelResource
from tests.builders import make_model

#: A ClusterBaseModel, a BaseModel of the same name in the InferenceService's namespace ("ns"),
#: a BaseModel only in another namespace, and models that exist in one scope only.
CBM_SHARED = make_model("shared", cluster=True, modelParameterSize="70B")
BM_SHARED = make_model("shared", cluster=False, namespace="ns", modelParameterSize="8B")
BM_ELSEWHERE = make_model("elsewhere", cluster=False, namespace="other")
CBM_ELSEWHERE = make_model("elsewhere", cluster=True)
BM_ONLY = make_model("bm-only", cluster=False, namespace="ns")
CBM_ONLY = make_model("cbm-only", cluster=True)

CATALOG = ModelCatalog.of([CBM_SHARED, BM_SHARED, BM_ELSEWHERE, CBM_ELSEWHERE, BM_ONLY, CBM_ONLY])


def test_the_module_exports_exactly_its_public_api() -> None:
    assert model_catalog.__all__ == ["ModelCatalog"]


@pytest.mark.parametrize(
    ("kind", "name", "expected"),
    [
        pytest.param(
            "ClusterBaseModel", "cbm-only", CBM_ONLY, id="kind ClusterBaseModel finds the CBM"
        ),
        pytest.param(
            "ClusterBaseModel",
            "bm-only",
            None,
            id="kind ClusterBaseModel requires a CBM; a BaseModel alone is not found",
        ),
        pytest.param("BaseModel", "bm-only", BM_ONLY, id="kind BaseModel finds the BM"),
        pytest.param(
            "BaseModel",
            "cbm-only",
            None,
            id="kind BaseModel requires a BM; a ClusterBaseModel alone is not found",
        ),
        pytest.param(
            "BaseModel",
            "elsewhere",
            None,
            id="kind BaseModel requires the BM in the InferenceService's namespace",
        ),
        pytest.param(
            "ClusterBaseModel",
            "shared",
            BM_SHARED,
            id="a BM in the namespace shadows a CBM of the same name even for kind CBM",
        ),
        pytest.param(
            "ClusterBaseModel",
            "elsewhere",
            CBM_ELSEWHERE,
            id="a BM in another namespace does not shadow the CBM",
        ),
        pytest.param(
            "BaseModel", "shared", BM_SHARED, id="kind BaseModel with both present finds the BM"
        ),
        pytest.param("ClusterBaseModel", "missing", None, id="a missing model is not found"),
    ],
)
def test_the_controller_lookup_follows_the_reference_kind(
    kind: str, name: str, expected: ModelResource | None
) -> None:
    assert CATALOG.referenced(ModelRef(name=name, kind=kind), "ns") is expected


def test_the_controller_lookup_defaults_to_kind_cluster_base_model() -> None:
    assert CATALOG.referenced(ModelRef(name="bm-only"), "ns") is None
    assert CATALOG.referenced(ModelRef(name="cbm-only"), "ns") is CBM_ONLY


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("bm-only", BM_ONLY, id="a BaseModel in the namespace is found"),
        pytest.param("cbm-only", CBM_ONLY, id="a ClusterBaseModel is found"),
        pytest.param("shared", BM_SHARED, id="the BaseModel in the namespace comes before the CBM"),
        pytest.param("elsewhere", CBM_ELSEWHERE, id="a BaseModel in another namespace is skipped"),
        pytest.param("missing", None, id="a model in neither scope is not found"),
    ],
)
def test_the_cli_and_webhook_lookup_ignores_the_kind(
    name: str, expected: ModelResource | None
) -> None:
    assert CATALOG.lookup("ns", name) is expected
