"""Writes src/maitento/models.py from the server's OpenAPI document (GET /openapi.json).

    python scripts/generate_models.py http://127.0.0.1:8080/openapi.json   # or a saved file

Every component schema becomes a pydantic model, every JSON request body a `<OperationId>Body` model, and every
object inside them a model named after where it is (`RunInteraction`, `RunVersionsItem`). Fields are snake_case
with the wire name as alias. tests/test_models.py regenerates the file from the served document and compares.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
import urllib.request
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "src" / "maitento" / "models.py"

HEADER = '''"""Pydantic models of the Maitento REST API, generated from its OpenAPI document: do not edit.

Regenerate with `python scripts/generate_models.py URL_OF/openapi.json`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class MaitentoModel(BaseModel):
    """Base of every model: Python names, the wire's camelCase as aliases, unknown fields kept. A model's
    validator is built on its first use, not at import."""

    model_config = ConfigDict(populate_by_name=True, extra="allow", defer_build=True)
'''


def snake(name: str) -> str:
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).replace("-", "_").replace(".", "_").lower()
    return out + "_" if keyword.iskeyword(out) or out in ("model_config", "schema", "json") else out


def pascal(name: str) -> str:
    parts = re.split(r"[^A-Za-z0-9]+", name)
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


def _option_name(schema: dict[str, Any], index: int) -> str:
    """The name suffix of one of several options of a union: its first required field, else its position."""
    required = schema.get("required") or []
    return pascal(str(required[0])) if required else f"Option{index + 1}"


class Generator:
    def __init__(self, document: dict[str, Any]) -> None:
        self.doc = document
        self.classes: list[str] = []
        self.names: set[str] = set()

    def annotation(self, schema: dict[str, Any], context: str) -> str:
        """The Python type of a schema; `context` names a model made for an inline object."""
        if "$ref" in schema:
            return str(schema["$ref"]).split("/")[-1]
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [s for s in schema[key] if not _is_null(s)]
                # Several object options get a model each, named after their first required field (`AgentFunctionsItemRef`).
                types = [
                    self.annotation(s, context if len(options) == 1 else context + _option_name(s, i))
                    for i, s in enumerate(options)
                ]
                if len(options) < len(schema[key]):
                    types.append("None")
                return " | ".join(dict.fromkeys(types))
        if "enum" in schema and any(v is not None for v in schema["enum"]):
            base = "Literal[" + ", ".join(json.dumps(v) for v in schema["enum"] if v is not None) + "]"
        elif "const" in schema:
            base = f"Literal[{json.dumps(schema['const'])}]"
        else:
            kind = schema.get("type")
            if isinstance(kind, list):
                kind = next((k for k in kind if k != "null"), None)
            if kind == "string":
                base = "str"
            elif kind == "integer":
                base = "int"
            elif kind == "number":
                base = "float"
            elif kind == "boolean":
                base = "bool"
            elif kind == "array":
                base = f"list[{self.annotation(schema.get('items', {}), context + 'Item')}]"
            elif kind == "object" and schema.get("properties"):
                base = self.model(context, schema)
            elif kind == "object":
                extra = schema.get("additionalProperties")
                value = self.annotation(extra, context + "Value") if isinstance(extra, dict) and extra else "Any"
                base = f"dict[str, {value}]"
            else:
                base = "Any"
        if schema.get("nullable") and base != "Any":
            base += " | None"
        return base

    def model(self, name: str, schema: dict[str, Any]) -> str:
        """Writes the model of an object schema (once) and returns its name."""
        if name in self.names:
            return name
        self.names.add(name)
        required = set(schema.get("required", []))
        lines = [f"class {name}(MaitentoModel):"]
        doc = schema.get("description")
        lines.append(f'    """{_doc(doc) if doc else name + "."}"""')
        lines.append("")
        properties: dict[str, Any] = schema.get("properties", {})
        for wire, prop in properties.items():
            kind = self.annotation(prop, name + pascal(wire))
            field = snake(wire)
            desc = prop.get("description")
            args = [] if wire in required else ["None"]
            if wire in required and field == wire and not desc:
                lines.append(f"    {field}: {kind}")
                continue
            if wire not in required and "None" not in kind.split(" | ") and kind != "Any":
                kind += " | None"
            if field != wire:
                args.append(f'alias="{wire}"')
            if desc:
                args.append(f"description={json.dumps(desc)}")
            lines.append(f"    {field}: {kind} = Field({', '.join(args)})")
        if not properties:
            lines.append("    pass")
        self.classes.append("\n".join(lines))
        return name

    def run(self) -> str:
        for name, schema in self.doc.get("components", {}).get("schemas", {}).items():
            self.model(name, schema)
        for _route, item in sorted(self.doc.get("paths", {}).items()):
            for _method, operation in item.items():
                content = operation.get("requestBody", {}).get("content", {}).get("application/json")
                if content and "schema" in content and "operationId" in operation:
                    self.model(pascal(operation["operationId"]) + "Body", content["schema"])
        names = sorted(self.names)
        exports = "\n".join(f'    "{n}",' for n in ["MaitentoModel", *names])
        body = "\n\n\n".join(self.classes)
        return f"{HEADER}\n\n{body}\n\n\n__all__ = [\n{exports}\n]\n"


def _is_null(schema: dict[str, Any]) -> bool:
    return schema.get("enum") == [None] or schema.get("type") == "null"


def _doc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', "'''")


def generate(document: dict[str, Any]) -> str:
    """The text of models.py for an OpenAPI document."""
    return Generator(document).run()


def load(source: str) -> dict[str, Any]:
    if source.startswith(("http://", "https://")):
        with urllib.request.urlopen(source) as answer:  # noqa: S310 (a URL the user gives)
            data: dict[str, Any] = json.load(answer)
            return data
    loaded: dict[str, Any] = json.loads(Path(source).read_text())
    return loaded


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: generate_models.py URL_OR_FILE_OF_OPENAPI_JSON")
    OUT.write_text(generate(load(sys.argv[1])))
    print(f"wrote {OUT}")
