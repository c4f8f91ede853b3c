"""Selection benchmark (issue: decision core): 1,000 runtimes, one model, one InferenceService.

Builds mixed runtimes (both scopes, several formats and frameworks, size ranges, declared modes,
accelerator classes, disabled ones), runs auto-selection repeatedly (with a fresh model object
each round, so no memo helps) and prints, as its last line,
``selection: <x> us/runtime (<n> runtimes)``. Target: <= 20 us per runtime. Not part of the tests:

    python tests/bench/selection.py [--runtimes 1000] [--rounds 30]
"""

from __future__ import annotations

import argparse
import random
import time

from ome_operator.core.selection import RuntimeCatalog, select_runtime
from ome_operator.models import from_manifest

_FORMATS = ("safetensors", "gguf", "onnx", "pytorch")
_FRAMEWORKS = (("transformers", "4.47.0"), ("transformers", "4.40.1"), ("vllm", "0.6.3"))
_ARCHITECTURES = ("LlamaForCausalLM", "Qwen2ForCausalLM", None)
_MODES = (None, None, "RawDeployment", "OMENative", "MultiNode")
_SIZES = (("1B", "13B"), ("60B", "75B"), ("500M", "2B"), (None, "100B"), None)


def _runtime(index: int, rng: random.Random) -> dict:
    cluster = rng.random() < 0.7
    entries = []
    for _ in range(rng.randint(1, 3)):
        framework, version = rng.choice(_FRAMEWORKS)
        item = {
            "modelFormat": {"name": rng.choice(_FORMATS), "version": "1.0.0"},
            "modelFramework": {
                "name": framework,
                "version": version,
                "operator": rng.choice(("Equal", "GreaterThanOrEqual")),
            },
            "autoSelect": rng.random() < 0.8,
            "priority": rng.randint(1, 3),
        }
        if architecture := rng.choice(_ARCHITECTURES):
            item["modelArchitecture"] = architecture
        entries.append(item)
    spec: dict = {"supportedModelFormats": entries, "disabled": rng.random() < 0.05}
    if sizes := rng.choice(_SIZES):
        spec["modelSizeRange"] = {k: v for k, v in zip(("min", "max"), sizes, strict=True) if v}
    if mode := rng.choice(_MODES):
        spec["engineConfig"] = {"annotations": {"ome.io/deploymentMode": mode}}
    if rng.random() < 0.2:
        spec["acceleratorRequirements"] = {"acceleratorClasses": ["nvidia-h100"]}
    metadata = {"name": f"runtime-{index:04d}"}
    if not cluster:
        metadata["namespace"] = "bench"
    kind = "ClusterServingRuntime" if cluster else "ServingRuntime"
    return {"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": metadata, "spec": spec}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtimes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=30)
    options = parser.parse_args()
    rng = random.Random(7)
    catalog = RuntimeCatalog.of(from_manifest(_runtime(i, rng)) for i in range(options.runtimes))
    model = from_manifest(
        {
            "kind": "ClusterBaseModel",
            "metadata": {"name": "llama"},
            "spec": {
                "modelFormat": {"name": "safetensors", "version": "1.0.0"},
                "modelFramework": {"name": "transformers", "version": "4.47.0"},
                "modelArchitecture": "LlamaForCausalLM",
                "modelParameterSize": "8B",
            },
        }
    )
    isvc = from_manifest(
        {
            "kind": "InferenceService",
            "metadata": {"name": "chat", "namespace": "bench"},
            "spec": {"model": {"name": "llama"}, "deploymentMode": "OMENative", "engine": {}},
        }
    )

    def best_of(fresh_model: bool, fresh_catalog: bool) -> tuple[float, object]:
        best, selection = float("inf"), None
        for _ in range(options.rounds):
            # A fresh model object defeats every memo (a first reconcile); so does a fresh
            # catalog of the same runtimes (a runtime changed): the memo lives on the catalog.
            spec = model.spec.model_copy() if fresh_model else model.spec
            runtimes = RuntimeCatalog(catalog.namespaced, catalog.cluster)
            started = time.perf_counter()
            selection = select_runtime(
                spec, model.name, isvc, runtimes if fresh_catalog else catalog, "bench"
            )
            best = min(best, time.perf_counter() - started)
        return best, selection

    best_of(False, False)  # warm-up: imports, caches of parsed versions and sizes
    per_runtime = {
        "same runtimes, model and request (the rest of a reconcile wave)": best_of(False, False),
        "a runtime changed (a new catalog, an empty memo)": best_of(False, True),
    }
    cold, selection = best_of(True, True)
    chosen = selection.chosen.runtime.name if selection.chosen else "none"
    print(f"chosen: {chosen}; best of {options.rounds} rounds")
    for what, (seconds, _) in per_runtime.items():
        print(f"memoized, {what}: {seconds / len(catalog) * 1e6:.2f} us/runtime")
    print(f"selection: {cold / len(catalog) * 1e6:.2f} us/runtime ({len(catalog)} runtimes)")


if __name__ == "__main__":
    main()
