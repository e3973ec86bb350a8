"""Test 5: the checked-in models agree with the OpenAPI document the server serves, field by field; and the
package's version is the server's."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel

import maitento
from maitento import models

from .conftest import Stack

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _served(stack: Stack) -> dict[str, Any]:
    document: dict[str, Any] = httpx.get(f"{stack.url}/openapi.json", timeout=30).json()
    return document


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("generate_models", SCRIPTS / "generate_models.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["generate_models"] = module
    spec.loader.exec_module(module)
    return module


def _object_schemas(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every named object schema: the components, and the request bodies as `<OperationId>Body`."""
    found = dict(document["components"]["schemas"])
    gen = _generator()
    for item in document["paths"].values():
        for operation in item.values():
            schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if schema is not None:
                found[gen.pascal(operation["operationId"]) + "Body"] = schema
    return found


def test_every_model_has_the_fields_of_its_schema(stack: Stack) -> None:
    schemas = _object_schemas(_served(stack))
    checked = 0
    for name, schema in schemas.items():
        model = getattr(models, name, None)
        assert isinstance(model, type) and issubclass(model, BaseModel), f"no model {name}"
        fields = {(f.alias or key): f for key, f in model.model_fields.items()}
        properties = schema.get("properties", {})
        assert set(fields) == set(properties), f"{name}: fields differ from the served schema"
        required = set(schema.get("required", []))
        assert {wire for wire, f in fields.items() if f.is_required()} == required, f"{name}: required differ"
        checked += 1
    assert checked >= len(_served(stack)["components"]["schemas"])


def test_models_file_is_what_the_generator_makes_of_the_served_document(stack: Stack) -> None:
    generated = _generator().generate(_served(stack))
    checked_in = Path(models.__file__).read_text()
    assert generated == checked_in, "models.py is stale: run scripts/generate_models.py against the server"


def test_the_package_version_is_the_servers(stack: Stack) -> None:
    assert maitento.__version__ == _served(stack)["info"]["version"]


def test_a_served_run_validates_into_its_model(stack: Stack) -> None:
    with maitento.Maitento(stack.url, stack.key) as mt:
        run = mt.interaction_runs.start("quick", inputs={"message": "hi"})
        raw = httpx.get(f"{stack.url}/v1/runs/{run.id}", headers={"authorization": f"Bearer {stack.key}"}).json()
    # Every field served is one of the model's, and every field the model requires is served (optional ones, such
    # as endUser and pendingAuthorization, are left out of a run that has none).
    fields = {(f.alias or k) for k, f in models.Run.model_fields.items()}
    required = {(f.alias or k) for k, f in models.Run.model_fields.items() if f.is_required()}
    assert set(raw) <= fields
    assert required <= set(raw)
    assert models.Run.model_validate(raw).id == run.id
