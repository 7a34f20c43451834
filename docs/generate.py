"""Rewrite the generated blocks of the docs from their one home: ``python docs/generate.py``.

- README.md: the bots table (``allfives_agents.bots.bots_table``), between the two commands and the picture;
- docs/search.md: the options table (``allfives_agents.search.options.options_table``), after its marker line;
- docs/results.md: the named bots (``allfives_agents.bots.bots_results``), between its two marker lines;
- docs/schemas/: the JSON Schemas of a game record (``allfives_env.engine.schemas``) and of the bot
  server's requests and answers (``allfives.server.schema.server_schemas``).

tests/test_bots.py, tests/test_search_options.py and tests/test_schemas.py fail until the blocks
and files match; this fixes them.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from allfives_agents.bots import bots_results, bots_table  # noqa: E402
from allfives_agents.search.options import options_table  # noqa: E402
from allfives_env.engine.schemas import record_schema  # noqa: E402

SCHEMAS = ROOT / "docs" / "schemas"


def schema_files() -> dict[Path, str]:
    """Every published JSON Schema file and its text."""
    from allfives.server.schema import server_schemas

    schemas = {"allfives-record-1": record_schema(), **server_schemas()}
    return {SCHEMAS / f"{name}.schema.json": json.dumps(schema, indent=2) + "\n" for name, schema in schemas.items()}


def replace_table(text: str, after: str, table: str) -> str:
    """``text`` with the Markdown table that first follows ``after`` replaced by ``table``."""
    start = text.index("\n|", text.index(after)) + 1
    end = start
    while end < len(text) and text.startswith("|", end):
        end = text.index("\n", end) + 1 if "\n" in text[end:] else len(text)
    return text[:start] + table + "\n" + text[end:]


def main() -> None:
    readme = ROOT / "README.md"
    readme.write_text(replace_table(readme.read_text(), "Three bots by name", bots_table()))
    search = ROOT / "docs" / "search.md"
    search.write_text(replace_table(search.read_text(), "<!-- the options table:", options_table()))
    results = ROOT / "docs" / "results.md"
    text = results.read_text()
    results.write_text(re.sub(
        r"(<!-- the named bots:[^\n]*-->\n).*?(\n<!-- /named bots -->)",
        lambda m: m.group(1) + "\n" + bots_results() + "\n" + m.group(2),
        text, flags=re.S,
    ))
    SCHEMAS.mkdir(exist_ok=True)
    for path, text in schema_files().items():
        path.write_text(text)


if __name__ == "__main__":
    main()
