"""Rules of SPEC S1.10: the ConfigMap ``inferenceservice-config``, its defaults and the exact text
of each problem (a startup error, or a problem that stalls every reconcile)."""

from __future__ import annotations

import json
import pathlib
from dataclasses import replace
from typing import Any

import pytest
import yaml

from ome_operator.core import operator_config
from ome_operator.core.label_selectors import LabelSelector, Requirement
from ome_operator.core.metadata_propagation import MetadataPropagation
from ome_operator.core.operator_config import (
    CONFIG_MAP_NAME,
    ConfigError,
    DeployConfigError,
    OperatorConfig,
    PdbConfigError,
    PdbDefaults,
    ReplicaDefaults,
    StartupConfigError,
    parse_operator_config,
)
from ome_operator.core.pod_policy import RULES, PodPolicy, PodPolicyException

#: The entries exactly as the Helm chart ships them (S1.10 "Default used by this operator").
HELM_DEPLOY = {
    "defaultDeploymentMode": "RawDeployment",
    "replicas": {
        "defaultMinReplicas": 1,
        "defaultMaxReplicas": {"engine": 3, "decoder": 3, "router": 2},
    },
}
HELM_PDB = {"rawDeployment": {"maxUnavailable": 1}, "omeNative": {"maxUnavailable": 1}}

DEFAULTS = OperatorConfig(
    replicas=ReplicaDefaults(1, {"engine": 3, "decoder": 3, "router": 2}),
    pdb=PdbDefaults(("maxUnavailable", 1), ("maxUnavailable", 1)),
    cluster_domain="cluster.local",
    problem=None,
)

PARSE_DEPLOY = "unable to parse deploy config json"
PDB_PREFIX = "fails to create InferenceServicesConfig: "


def _deploy(**changes: Any) -> dict[str, str]:
    """The Helm ``deploy`` entry with top-level keys replaced (``None`` removes one)."""
    deploy = {**HELM_DEPLOY, **changes}
    return {"deploy": json.dumps({k: v for k, v in deploy.items() if v is not None})}


def _replicas(**replicas: Any) -> dict[str, str]:
    return _deploy(replicas=replicas)


def _pdb(value: Any) -> dict[str, str]:
    return {"podDisruptionBudget": json.dumps(value)}


def test_the_module_exports_exactly_its_public_api() -> None:
    assert sorted(operator_config.__all__) == [
        "BUDGET_FIELDS",
        "Budget",
        "CONFIG_MAP_NAME",
        "ConfigError",
        "DeployConfigError",
        "OperatorConfig",
        "PdbConfigError",
        "PdbDefaults",
        "ReplicaDefaults",
        "StartupConfigError",
        "parse_operator_config",
    ]


def test_the_config_map_is_named_inferenceservice_config() -> None:
    assert CONFIG_MAP_NAME == "inferenceservice-config"


# --- defaults and values that parse ---------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(None, DEFAULTS, id="no ConfigMap data gives the Helm defaults"),
        pytest.param({}, DEFAULTS, id="a ConfigMap without the entries gives the Helm defaults"),
        pytest.param(
            {"deploy": json.dumps(HELM_DEPLOY), "podDisruptionBudget": json.dumps(HELM_PDB)},
            DEFAULTS,
            id="the Helm chart's entries parse to the defaults",
        ),
        pytest.param(
            {"deploy": json.dumps({})},
            DEFAULTS,
            id="an empty deploy object keeps every default and RawDeployment",
        ),
        pytest.param(
            _replicas(defaultMinReplicas=2),
            replace(
                DEFAULTS, replicas=ReplicaDefaults(2, {"engine": 3, "decoder": 3, "router": 2})
            ),
            id="defaultMinReplicas alone replaces only the minimum",
        ),
        pytest.param(
            _replicas(defaultMaxReplicas={"router": 5}),
            replace(
                DEFAULTS, replicas=ReplicaDefaults(1, {"engine": 3, "decoder": 3, "router": 5})
            ),
            id="a defaultMaxReplicas key replaces only that component's maximum",
        ),
        pytest.param(
            _deploy(replicas=None),
            DEFAULTS,
            id="deploy without replicas keeps the replica defaults",
        ),
        pytest.param(
            _pdb({"rawDeployment": {"minAvailable": "50%"}, "omeNative": {"maxUnavailable": 2}}),
            replace(DEFAULTS, pdb=PdbDefaults(("minAvailable", "50%"), ("maxUnavailable", 2))),
            id="each mode's one budget field is kept as given, percentages included",
        ),
        pytest.param(
            _pdb({"rawDeployment": {"minAvailable": 0}, "omeNative": {"maxUnavailable": 0}}),
            replace(DEFAULTS, pdb=PdbDefaults(("minAvailable", 0), ("maxUnavailable", 0))),
            id="a budget field of 0 counts as set",
        ),
        pytest.param(
            _pdb({"rawDeployment": None, "omeNative": {"maxUnavailable": 1}}),
            replace(DEFAULTS, pdb=PdbDefaults(None, ("maxUnavailable", 1))),
            id="a null mode key means no default budget for that mode",
        ),
        pytest.param(
            _pdb({"rawDeployment": {"maxUnavailable": 1}}),
            replace(DEFAULTS, pdb=PdbDefaults(("maxUnavailable", 1), None)),
            id="an absent mode key means no default budget for that mode",
        ),
        pytest.param(
            _pdb({}),
            replace(DEFAULTS, pdb=PdbDefaults(None, None)),
            id="an empty podDisruptionBudget object gives no default budget at all",
        ),
        pytest.param(
            {"clusterDomain": "example.org"},
            replace(DEFAULTS, cluster_domain="example.org"),
            id="the cluster domain is configurable",
        ),
    ],
)
def test_the_configuration_parses(data: dict[str, str] | None, expected: OperatorConfig) -> None:
    assert parse_operator_config(data) == expected


# --- problems that stall every reconcile (kept, not raised) ---------------------------------


@pytest.mark.parametrize(
    ("data", "kind", "message"),
    [
        pytest.param(
            _replicas(defaultMinReplicas=0),
            DeployConfigError,
            "invalid deploy config, replicas.defaultMinReplicas must be > 0, got 0",
            id="a defaultMinReplicas of 0 is rejected with its key and value",
        ),
        pytest.param(
            _replicas(defaultMinReplicas=-2),
            DeployConfigError,
            "invalid deploy config, replicas.defaultMinReplicas must be > 0, got -2",
            id="a negative defaultMinReplicas is rejected with its key and value",
        ),
        pytest.param(
            _replicas(defaultMaxReplicas={"engine": 0}),
            DeployConfigError,
            "invalid deploy config, replicas.defaultMaxReplicas.engine must be > 0, got 0",
            id="a defaultMaxReplicas value of 0 is rejected with its key path and value",
        ),
        pytest.param(
            _replicas(defaultMaxReplicas={"router": -1}),
            DeployConfigError,
            "invalid deploy config, replicas.defaultMaxReplicas.router must be > 0, got -1",
            id="a negative defaultMaxReplicas value is rejected with its key path and value",
        ),
        pytest.param(
            _replicas(defaultMinReplicas="2"),
            DeployConfigError,
            PARSE_DEPLOY,
            id="a quoted defaultMinReplicas does not parse",
        ),
        pytest.param(
            _replicas(defaultMaxReplicas={"engine": "3"}),
            DeployConfigError,
            PARSE_DEPLOY,
            id="a quoted defaultMaxReplicas value does not parse",
        ),
        pytest.param(
            _replicas(defaultMinReplicas=1.5),
            DeployConfigError,
            PARSE_DEPLOY,
            id="a non-integer defaultMinReplicas does not parse",
        ),
        pytest.param(
            _replicas(defaultMinReplicas=True),
            DeployConfigError,
            PARSE_DEPLOY,
            id="a boolean defaultMinReplicas does not parse",
        ),
        pytest.param(
            _deploy(replicas=[1]),
            DeployConfigError,
            PARSE_DEPLOY,
            id="replicas that is not an object does not parse",
        ),
        pytest.param(
            _replicas(defaultMaxReplicas=[3]),
            DeployConfigError,
            PARSE_DEPLOY,
            id="defaultMaxReplicas that is not an object does not parse",
        ),
        pytest.param(
            {"deploy": "{not json"},
            DeployConfigError,
            PARSE_DEPLOY,
            id="deploy that is not JSON does not parse",
        ),
        pytest.param(
            {"deploy": "[]"},
            DeployConfigError,
            PARSE_DEPLOY,
            id="deploy that is not a JSON object does not parse",
        ),
        pytest.param(
            _pdb({"rawDeployment": {"minAvailable": 1, "maxUnavailable": 1}}),
            PdbConfigError,
            PDB_PREFIX + "exactly one of podDisruptionBudget.rawDeployment.minAvailable or "
            "podDisruptionBudget.rawDeployment.maxUnavailable must be set",
            id="a rawDeployment budget with both fields is rejected",
        ),
        pytest.param(
            _pdb({"rawDeployment": {}}),
            PdbConfigError,
            PDB_PREFIX + "exactly one of podDisruptionBudget.rawDeployment.minAvailable or "
            "podDisruptionBudget.rawDeployment.maxUnavailable must be set",
            id="a rawDeployment budget with neither field is rejected",
        ),
        pytest.param(
            _pdb({"omeNative": {"minAvailable": "50%", "maxUnavailable": "10%"}}),
            PdbConfigError,
            PDB_PREFIX + "exactly one of podDisruptionBudget.omeNative.minAvailable or "
            "podDisruptionBudget.omeNative.maxUnavailable must be set",
            id="an omeNative budget with both fields is rejected with the omeNative key",
        ),
        pytest.param(
            _pdb({"omeNative": {"maxUnavailable": "abc"}}),
            PdbConfigError,
            PDB_PREFIX + "podDisruptionBudget.omeNative.maxUnavailable must be a non-negative "
            'integer or a percentage, got "abc"',
            id="a budget value that is neither an integer nor a percentage is rejected",
        ),
        pytest.param(
            _pdb({"rawDeployment": {"minAvailable": -1}}),
            PdbConfigError,
            PDB_PREFIX + "podDisruptionBudget.rawDeployment.minAvailable must be a non-negative "
            "integer or a percentage, got -1",
            id="a negative budget is rejected",
        ),
        pytest.param(
            _pdb({"rawDeployment": {"minAvailable": "150%"}}),
            PdbConfigError,
            PDB_PREFIX + "podDisruptionBudget.rawDeployment.minAvailable must be a non-negative "
            'integer or a percentage, got "150%"',
            id="a percentage over 100 is rejected",
        ),
        pytest.param(
            _pdb({"omeNative": {"minAvailable": None}}),
            PdbConfigError,
            PDB_PREFIX + "exactly one of podDisruptionBudget.omeNative.minAvailable or "
            "podDisruptionBudget.omeNative.maxUnavailable must be set",
            id="a null budget field counts as not set",
        ),
        pytest.param(
            {"podDisruptionBudget": "{not json"},
            PdbConfigError,
            PDB_PREFIX + "unable to parse podDisruptionBudget config json",
            id="podDisruptionBudget that is not JSON is rejected with the same prefix",
        ),
        pytest.param(
            _pdb({"rawDeployment": 1}),
            PdbConfigError,
            PDB_PREFIX + "unable to parse podDisruptionBudget config json",
            id="a mode budget that is not an object is rejected with the same prefix",
        ),
        pytest.param(
            _pdb([HELM_PDB]),
            PdbConfigError,
            PDB_PREFIX + "unable to parse podDisruptionBudget config json",
            id="podDisruptionBudget that is not a JSON object is rejected with the same prefix",
        ),
    ],
)
def test_a_problem_is_kept_with_its_exact_text(
    data: dict[str, str], kind: type[ConfigError], message: str
) -> None:
    config = parse_operator_config({**data, "clusterDomain": "example.org"})
    assert (type(config.problem), str(config.problem)) == (kind, message)
    assert replace(config, problem=None) == replace(DEFAULTS, cluster_domain="example.org")


# --- the startup error (raised: the manager exits) ------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(
            _deploy(defaultDeploymentMode="OMENative"),
            "Failed to initialize deployment configuration: "
            'defaultDeploymentMode "OMENative" is not RawDeployment',
            id="defaultDeploymentMode OMENative stops the manager",
        ),
        pytest.param(
            _deploy(defaultDeploymentMode="MultiNode"),
            "Failed to initialize deployment configuration: "
            'defaultDeploymentMode "MultiNode" is not RawDeployment',
            id="defaultDeploymentMode MultiNode stops the manager",
        ),
        pytest.param(
            _deploy(defaultDeploymentMode="rawdeployment"),
            "Failed to initialize deployment configuration: "
            'defaultDeploymentMode "rawdeployment" is not RawDeployment',
            id="defaultDeploymentMode is compared case-sensitively",
        ),
        pytest.param(
            {**_deploy(defaultDeploymentMode="OMENative"), **_pdb({"rawDeployment": {}})},
            "Failed to initialize deployment configuration: "
            'defaultDeploymentMode "OMENative" is not RawDeployment',
            id="the startup error wins over a budget problem",
        ),
    ],
)
def test_a_default_mode_other_than_raw_deployment_is_a_startup_error(
    data: dict[str, str], message: str
) -> None:
    with pytest.raises(StartupConfigError) as caught:
        parse_operator_config(data)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("error", "base"),
    [
        pytest.param(StartupConfigError("x"), ConfigError, id="a startup error is a ConfigError"),
        pytest.param(DeployConfigError("x"), ConfigError, id="a deploy error is a ConfigError"),
        pytest.param(PdbConfigError("x"), ConfigError, id="a budget error is a ConfigError"),
        pytest.param(ConfigError("x"), ValueError, id="a ConfigError is a ValueError"),
    ],
)
def test_the_errors_form_one_hierarchy(error: Exception, base: type[Exception]) -> None:
    assert isinstance(error, base)


# -- podPolicy and metadataPropagation (docs/configuration.md) --------------------------------


def _problem(key: str, value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    problem = parse_operator_config({key: text}).problem
    return "" if problem is None else str(problem)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param("{", "unable to parse podPolicy config json", id="podPolicy not JSON"),
        pytest.param([], "unable to parse podPolicy config json", id="podPolicy not an object"),
        pytest.param(
            {"rule": {}},
            "invalid podPolicy config, unknown field rule (known: rules, allowedCapabilities, "
            "allowedServiceAccountNames, exceptions)",
            id="an unknown podPolicy field",
        ),
        pytest.param(
            {"rules": {"hostPth": False}},
            "invalid podPolicy config, unknown field rules.hostPth (known: hostNamespaces, "
            "nodeName, serviceAccountName, automountServiceAccountToken, hostPath, privileged, "
            "capabilities, privilegeEscalation, runAsRoot, hostPorts)",
            id="an unknown rule",
        ),
        pytest.param(
            {"rules": {"hostPath": "no"}},
            'invalid podPolicy config, rules.hostPath must be true or false, got "no"',
            id="a rule switched by a string",
        ),
        pytest.param(
            {"allowedCapabilities": "SYS_ADMIN"},
            "invalid podPolicy config, allowedCapabilities must be a list of names, "
            'got "SYS_ADMIN"',
            id="allowedCapabilities not a list",
        ),
        pytest.param(
            {"exceptions": [{"relax": ["hostPath"]}]},
            "invalid podPolicy config, exceptions[0].namespaceSelector must be set",
            id="an exception without a selector",
        ),
        pytest.param(
            {"exceptions": [{"namespaceSelector": {}, "relax": ["everything"]}]},
            "invalid podPolicy config, exceptions[0].relax must be a list of rules "
            "(hostNamespaces, nodeName, serviceAccountName, automountServiceAccountToken, "
            "hostPath, privileged, capabilities, privilegeEscalation, runAsRoot, hostPorts), "
            'got ["everything"]',
            id="an exception relaxing an unknown rule",
        ),
        pytest.param(
            {
                "exceptions": [
                    {"namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "Is"}]}}
                ]
            },
            "invalid podPolicy config, exceptions[0].namespaceSelector: "
            'matchExpressions[0].operator must be one of In, NotIn, Exists, DoesNotExist, got "Is"',
            id="a selector with an unknown operator",
        ),
        pytest.param(
            {"exceptions": [{"namespaceSelector": {"matchLabels": {"a": 1}}}]},
            "invalid podPolicy config, exceptions[0].namespaceSelector: "
            'matchLabels must be a map of strings, got {"a": 1}',
            id="a selector with a label value not a string",
        ),
    ],
)
def test_each_pod_policy_problem_has_its_text(value: Any, message: str) -> None:
    assert _problem("podPolicy", value) == message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(
            "[",
            "unable to parse metadataPropagation config json",
            id="metadataPropagation not JSON",
        ),
        pytest.param(
            {"maxbytes": 1},
            "invalid metadataPropagation config, unknown field maxbytes "
            "(known: maxBytes, excludePrefixes)",
            id="an unknown metadataPropagation field",
        ),
        pytest.param(
            {"maxBytes": -1},
            "invalid metadataPropagation config, maxBytes must be a non-negative integer, got -1",
            id="a negative bound",
        ),
        pytest.param(
            {"maxBytes": "64Ki"},
            "invalid metadataPropagation config, maxBytes must be a non-negative integer, "
            'got "64Ki"',
            id="a bound as a quantity",
        ),
        pytest.param(
            {"excludePrefixes": ["a/", ""]},
            "invalid metadataPropagation config, excludePrefixes must be a list of non-empty "
            'strings, got ["a/", ""]',
            id="an empty prefix",
        ),
    ],
)
def test_each_metadata_propagation_problem_has_its_text(value: Any, message: str) -> None:
    assert _problem("metadataPropagation", value) == message


def test_a_pod_policy_problem_keeps_the_strictest_defaults_for_the_webhook() -> None:
    config = parse_operator_config(
        {"podPolicy": json.dumps({"rules": {"hostPath": False}}), "deploy": "{"}
    )
    assert config.pod_policy == OperatorConfig().pod_policy
    assert config.problem is not None


def test_the_shipped_config_map_gives_the_defaults_of_both_keys() -> None:
    shipped = _shipped_config_data()
    parsed = parse_operator_config(shipped)
    assert parsed.problem is None
    assert (parsed.pod_policy, parsed.metadata_propagation) == (
        OperatorConfig().pod_policy,
        OperatorConfig().metadata_propagation,
    )


def _shipped_config_data() -> dict[str, str]:
    path = pathlib.Path(__file__).resolve().parents[2] / "config" / "inferenceservice-config.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))["data"]


def test_a_pod_policy_is_parsed_into_its_rules_lists_and_exceptions() -> None:
    policy = {
        "rules": {"hostPath": False, "nodeName": True},
        "allowedCapabilities": ["NET_BIND_SERVICE", "IPC_LOCK"],
        "exceptions": [
            {
                "namespaceSelector": {
                    "matchLabels": {"team": "infra"},
                    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu"]}],
                },
                "relax": ["hostNamespaces"],
                "allowedServiceAccountNames": ["inference"],
            }
        ],
    }
    parsed = parse_operator_config({"podPolicy": json.dumps(policy)}).pod_policy
    assert parsed == PodPolicy(
        rules=frozenset(RULES) - {"hostPath"},
        allowed_capabilities=("NET_BIND_SERVICE", "IPC_LOCK"),
        allowed_service_account_names=("default",),
        exceptions=(
            PodPolicyException(
                LabelSelector((("team", "infra"),), (Requirement("tier", "In", ("gpu",)),)),
                relax=frozenset({"hostNamespaces"}),
                allowed_service_account_names=("inference",),
            ),
        ),
    )


def test_metadata_propagation_is_parsed_into_its_bound_and_prefixes() -> None:
    given = json.dumps({"maxBytes": 1024, "excludePrefixes": ["a.example/"]})
    parsed = parse_operator_config({"metadataPropagation": given}).metadata_propagation
    assert parsed == MetadataPropagation(1024, ("a.example/",))
