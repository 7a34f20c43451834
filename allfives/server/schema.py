"""The JSON Schema of a move request (``GET /schema``) and the OpenAPI 3.1 description (``GET /openapi.json``).

Both are built from the same pieces, so the two never disagree. The schema describes the shape of
a request; what the rules allow (whose turn it is, which tiles fit, the points) is checked by the
engine and refused with a 422.
"""

from __future__ import annotations

from allfives_agents.models import available_models
from allfives_env.engine.schemas import DIALECT, TILE, rules_schema
from allfives_env.engine.tiles import END_NAMES
from allfives_env.observation import OBS_SIZES

from .service import PLAYOUTS

ENDS = ["lead", *END_NAMES]


def _defs() -> dict:
    """Schemas shared by the request, the response and the errors, by name."""
    return {
        "Tile": TILE,
        "Rules": rules_schema(),
        "Event": {
            "description": "an event of the current hand in record form (docs/records.md); "
            "other players' draws have \"tile\": null or no tile",
            "oneOf": [
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["type", "player", "tile", "end"],
                    "properties": {
                        "type": {"const": "play"},
                        "player": {"type": "integer", "minimum": 0, "maximum": 3},
                        "tile": {"$ref": "Tile"},
                        "end": {"type": "string", "enum": ENDS},
                        "points": {"type": ["integer", "null"], "description": "checked when given"},
                    },
                },
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["type", "player"],
                    "properties": {
                        "type": {"const": "draw"},
                        "player": {"type": "integer", "minimum": 0, "maximum": 3},
                        "tile": {"anyOf": [{"$ref": "Tile"}, {"type": "null"}]},
                    },
                },
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["type", "player"],
                    "properties": {
                        "type": {"const": "pass"},
                        "player": {"type": "integer", "minimum": 0, "maximum": 3},
                    },
                },
            ],
        },
        "MoveRequest": {
            "title": "All Fives move request",
            "type": "object",
            "additionalProperties": False,
            "required": ["seat", "hand"],
            "properties": {
                "rules": {
                    "anyOf": [{"$ref": "Rules"}, {"type": "null"}],
                    "description": "default: the rules the policy was trained on, else the 2-player defaults",
                },
                "seat": {"type": "integer", "minimum": 0, "maximum": 3, "description": "the seat to move"},
                "hand": {
                    "type": "array",
                    "items": {"$ref": "Tile"},
                    "maxItems": 28,
                    "description": "the seat's tiles now",
                },
                "history": {
                    "type": ["array", "null"],
                    "items": {"$ref": "Event"},
                    "description": "every event of the current hand so far, in order (empty: the seat leads)",
                },
                "scores": {
                    "type": ["array", "null"],
                    "items": {"type": "integer"},
                    "minItems": 2,
                    "maxItems": 4,
                    "description": "side scores when this hand began (default zeros)",
                },
                "explain": {"type": ["boolean", "null"], "description": "also list every legal move"},
            },
        },
        "Move": {
            "type": "object",
            "required": ["action", "tile", "end", "points"],
            "properties": {
                "action": {"type": "integer", "minimum": 0, "maximum": 111, "description": "4 * tile index + end"},
                "tile": {"$ref": "Tile"},
                "end": {"type": "string", "enum": ENDS},
                "points": {"type": "integer", "description": "what the move scores now"},
            },
        },
        "MoveResponse": {
            "type": "object",
            "required": ["action", "tile", "end", "points", "obs_version"],
            "properties": {
                "action": {"type": "integer"},
                "tile": {"$ref": "Tile"},
                "end": {"type": "string", "enum": ENDS},
                "points": {"type": "integer"},
                "obs_version": {"enum": sorted(OBS_SIZES)},
                "legal": {
                    "description": "with explain: every legal move, by action id",
                    "type": "array",
                    "items": {
                        "allOf": [
                            {"$ref": "Move"},
                            {
                                "type": "object",
                                "properties": {
                                    "prob": {
                                        "type": ["number", "null"],
                                        "description": "softmax of the policy's masked logits; "
                                        "null for agents without logits",
                                    }
                                },
                            },
                        ]
                    },
                },
            },
        },
        "AnalyzeRequest": {
            "type": "object",
            "description": "a position as for /move (without explain), the worlds to sample and the playout policy",
            "required": ["seat", "hand"],
            "additionalProperties": False,
            "properties": {
                "rules": {"anyOf": [{"$ref": "Rules"}, {"type": "null"}]},
                "seat": {"type": "integer", "minimum": 0, "maximum": 3, "description": "the seat to move"},
                "hand": {"type": "array", "items": {"$ref": "Tile"}, "maxItems": 28},
                "history": {"type": ["array", "null"], "items": {"$ref": "Event"}},
                "scores": {"type": ["array", "null"], "items": {"type": "integer"}, "minItems": 2, "maxItems": 4},
                "worlds": {"type": "integer", "minimum": 1, "description": "sampled worlds (default 100; at most the server's cap, 200 by default)"},
                "playout": {"enum": list(PLAYOUTS), "description": "the agent that plays every seat in the playouts (default greedy)"},
                "seed": {"type": "integer", "minimum": 0, "description": "fixes the sampled worlds (default 0)"},
                "belief": {
                    "anyOf": [{"enum": available_models()}, {"type": "null"}],
                    "description": "a shipped model that weighs the worlds by the other seats' choices this hand (default null: equal weights)",
                },
            },
        },
        "AnalyzeResponse": {
            "type": "object",
            "required": ["seat", "policy", "worlds", "exact", "moves"],
            "properties": {
                "seat": {"type": "integer"},
                "policy": {"type": "string", "description": "the playout policy"},
                "worlds": {"type": "integer", "description": "worlds played (fewer than asked when the time cap ran out)"},
                "exact": {"type": "boolean", "description": "nothing was hidden: one world, the exact result for a deterministic playout"},
                "belief": {"type": "string", "description": "the model that weighed the worlds (only with belief)"},
                "effective_worlds": {"type": "number", "description": "with belief: the worlds' effective number, (sum w)^2 / sum w^2, that the intervals use"},
                "moves": {
                    "type": "array",
                    "description": "every legal move, best value first",
                    "items": {
                        "allOf": [
                            {"$ref": "Move"},
                            {
                                "type": "object",
                                "required": ["value", "value_low", "value_high", "win"],
                                "properties": {
                                    "value": {"type": "number", "description": "mean zero-summed score change of the seat's side to the end of the hand"},
                                    "value_low": {"type": "number"},
                                    "value_high": {"type": "number", "description": "95% interval of the value"},
                                    "win": {"type": ["number", "null"], "description": "share of worlds won, when the game can end in the hand"},
                                    "win_low": {"type": "number"},
                                    "win_high": {"type": "number", "description": "95% Wilson interval of win"},
                                },
                            },
                        ]
                    },
                },
            },
        },
        "Health": {
            "type": "object",
            "required": ["status", "policy", "obs_version", "rules"],
            "properties": {
                "status": {"const": "ok"},
                "policy": {"type": "string", "description": "the agent spec served"},
                "obs_version": {"type": "integer"},
                "obs_size": {"type": "integer"},
                "rules": {"anyOf": [{"$ref": "Rules"}, {"type": "null"}], "description": "the policy's training rules"},
            },
        },
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
    }


def _resolve(node, prefix: str):
    """A copy of ``node`` with every ``{"$ref": NAME}`` pointing to ``prefix + NAME``."""
    if isinstance(node, dict):
        return {k: (prefix + v if k == "$ref" else _resolve(v, prefix)) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve(v, prefix) for v in node]
    return node


def _refs(node) -> set[str]:
    """The names every ``$ref`` in ``node`` points to (``#/$defs/NAME``)."""
    if isinstance(node, dict):
        found = {node["$ref"].rsplit("/", 1)[-1]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_refs(v) for k, v in node.items() if k != "$ref"))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


def standalone_schema(name: str, schema_id: str) -> dict:
    """The JSON Schema (2020-12) of the definition ``name``, self-contained: with the definitions it
    refers to, and those they refer to."""
    defs = _resolve(_defs(), "#/$defs/")
    schema = {"$schema": DIALECT, "$id": schema_id}
    schema.update(defs.pop(name))
    needed, todo = set(), _refs(schema)
    while todo:
        ref = todo.pop()
        needed.add(ref)
        todo |= _refs(defs[ref]) - needed
    if needed:
        schema["$defs"] = {ref: defs[ref] for ref in sorted(needed)}
    return schema


def request_schema() -> dict:
    """The JSON Schema (2020-12) of a ``POST /move`` body, self-contained (``GET /schema``)."""
    return standalone_schema("MoveRequest", "allfives-move-request")


#: the published schema files of the bot server's bodies (docs/schemas/NAME.schema.json): name -> definition
SERVER_SCHEMAS = {
    "move-request": "MoveRequest",
    "move-answer": "MoveResponse",
    "analyze-request": "AnalyzeRequest",
    "analyze-answer": "AnalyzeResponse",
    "health-answer": "Health",
    "error-answer": "Error",
}


def server_schemas() -> dict[str, dict]:
    """Every published schema of the server's requests and answers, by file name."""
    return {name: standalone_schema(definition, f"allfives-{name}") for name, definition in SERVER_SCHEMAS.items()}


def openapi(server_url: str | None = None, policy: str | None = None) -> dict:
    """The OpenAPI 3.1 description of the bot server."""
    schemas = _resolve(_defs(), "#/components/schemas/")

    def body(name: str, description: str) -> dict:
        content = {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}}
        return {"description": description, "content": content}

    def post(summary: str, request: str, response: str, description: str) -> dict:
        """A POST taking the JSON schema ``request``, answering ``response`` or an ``Error``."""
        return {
            "post": {
                "summary": summary,
                "requestBody": {"required": True, "content": body(request, "")["content"]},
                "responses": {"200": body(response, description)} | {code: body("Error", text) for code, text in errors.items()},
            }
        }

    errors = {
        "400": "malformed JSON, not an object, unknown or duplicate fields, bad Content-Length",
        "408": "the body did not arrive in time",
        "411": "no Content-Length",
        "413": "body over the size limit",
        "415": "a Content-Type other than JSON",
        "422": "wrong types, bad rules, rules the policy was not trained for, an impossible position",
        "500": "an unexpected failure (the server keeps serving)",
    }
    doc = {
        "openapi": "3.1.0",
        "info": {
            "title": "All Fives bot server",
            "version": "1",
            "description": "A trained policy (or any agent) answering All Fives moves; docs/frontends.md."
            + (f" Serving {policy}." if policy else ""),
        },
        "paths": {
            "/health": {
                "get": {"summary": "the policy served and its rules", "responses": {"200": body("Health", "ok")}}
            },
            "/schema": {
                "get": {
                    "summary": "the JSON Schema of a move request",
                    "responses": {"200": {"description": "a JSON Schema", "content": {"application/json": {}}}},
                }
            },
            "/openapi.json": {
                "get": {
                    "summary": "this description",
                    "responses": {"200": {"description": "OpenAPI 3.1", "content": {"application/json": {}}}},
                }
            },
            "/analyze": post(
                "every legal move's estimated value (and win chance) with 95% intervals, from sampled worlds",
                "AnalyzeRequest", "AnalyzeResponse", "the analysis",
            ),
            "/move": post("the move for a seat's position", "MoveRequest", "MoveResponse", "the chosen (legal) move"),
        },
        "components": {"schemas": schemas},
    }
    if server_url:
        doc["servers"] = [{"url": server_url}]
    return doc
