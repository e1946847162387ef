"""MkDocs hooks of the documentation site (``mkdocs.yml``; issue 38).

- The API reference: one generated page per public module in :data:`API_MODULES` (a new
  subpackage is one line there), listed in the navigation under "API reference".
- Every public name of those modules must have a docstring: a missing one is a warning,
  which ``mkdocs build --strict`` (``nox -s docs``) turns into a failure
  (``scripts/check_docstrings.py``).
- The command line page's ``aorc --help`` and each subcommand's help come from the parser
  (``aorc.cli.main``) at build time: ``<!-- cli-help -->`` in a page is replaced by them.
- ``index.md`` is ``README.md`` (links into ``docs/`` rewritten), ``changelog.md`` is
  ``CHANGELOG.md``; the charts of ``benchmarks/results/`` are copied to
  ``assets/benchmarks/``.
"""

from __future__ import annotations

import contextlib
import html
import io
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

log = logging.getLogger("mkdocs.hooks.aorc")

#: The public modules the API reference documents: (module, page title). One line each.
API_MODULES: list[tuple[str, str]] = [
    ("aorc", "aorc"),
    ("aorc.sync", "aorc.sync (blocking)"),
    ("aorc.errors", "aorc.errors"),
    ("aorc.options", "aorc.options"),
    ("aorc.io", "aorc.io (stores)"),
    ("aorc.sink", "aorc.sink (rolling sink)"),
    ("aorc.iceberg", "aorc.iceberg"),
    ("aorc.spark", "aorc.spark"),
    ("aorc.kafka", "aorc.kafka"),
    ("aorc.keys", "aorc.keys (encryption keys)"),
    ("aorc.ray", "aorc.ray"),
    ("aorc.dask", "aorc.dask"),
    ("aorc.daft", "aorc.daft"),
    ("aorc.polars", "aorc.polars"),
    ("aorc.progress", "aorc.progress"),
]

CLI_MARKER = "<!-- cli-help -->"
API_MARKER = "<!-- api-modules -->"
#: A block the tests do not run says why (``tests/docs/test_doc_blocks.py``); the site shows it.
NORUN = re.compile(r"^( *)<!--\s*norun:\s*(.+?)\s*-->\n", re.MULTILINE)


def _page(module: str) -> str:
    return f"reference/{module}.md"


def on_config(config: Any) -> Any:
    """Lists the generated API pages in the navigation, under "API reference"."""
    for entry in config["nav"]:
        if isinstance(entry, dict) and "API reference" in entry:
            entry["API reference"] = [{"Overview": "reference/index.md"}] + [
                {title: _page(module)} for module, title in API_MODULES]
    return config


def _reference_page(module: str) -> str:
    return (f"# `{module}`\n\n::: {module}\n    options:\n      show_root_heading: false\n"
            "      members_order: alphabetical\n")


def _module_list() -> str:
    return "\n".join(f"- [{title}]({module}.md)" for module, title in API_MODULES) + "\n"


def front_page() -> str:
    """The site's front page: README.md, its links into ``docs/`` made relative to it."""
    text = (ROOT / "README.md").read_text()
    text = text.replace("](docs/", "](").replace("](CHANGELOG.md)", "](changelog.md)")
    return text.replace("(open `site/index.html`); the pages read as they are on GitHub too",
                        "(this site)")


def on_files(files: Files, config: Any) -> Files:
    """Adds the generated pages (API reference, changelog) and the benchmark charts."""
    for module, _ in API_MODULES:
        files.append(File.generated(config, _page(module), content=_reference_page(module)))
    files.append(File.generated(config, "index.md", content=front_page()))
    changelog = (ROOT / "CHANGELOG.md").read_text()
    files.append(File.generated(config, "changelog.md", content=changelog))
    for chart in sorted((ROOT / "benchmarks" / "results").glob("*.png")):
        files.append(File.generated(config, f"assets/benchmarks/{chart.name}",
                                    abs_src_path=str(chart)))
    return files


def undocumented(modules: list[str]) -> list[str]:
    """Public names of ``modules`` (their ``__all__``) and public methods of their classes
    without a docstring, found statically (griffe: nothing is imported, so the docs build
    needs none of the optional dependencies)."""
    import griffe

    package = griffe.load("aorc", search_paths=[str(ROOT)], resolve_aliases=True,
                          resolve_external=False)
    problems = []
    for name in modules:
        module = package if name == "aorc" else package[name.removeprefix("aorc.")]
        for export in module.exports or []:
            try:
                obj = module[str(export)]
                target = obj.final_target if obj.is_alias else obj
            except (griffe.AliasResolutionError, griffe.CyclicAliasError, KeyError) as exc:
                problems.append(f"{name}.{export}: cannot be resolved ({exc})")
                continue
            kind = target.kind.value
            if kind in ("function", "class") and not target.docstring:
                problems.append(f"{name}.{export} has no docstring")
            if kind != "class":
                continue
            for member_name, member in target.members.items():
                if member_name.startswith("_") or member.is_alias:
                    continue
                if member.kind.value == "function" and not member.docstring:
                    problems.append(f"{name}.{export}.{member_name} has no docstring")
    return problems


def on_pre_build(config: Any) -> None:
    """Fails a strict build on a public name without a docstring."""
    for problem in undocumented([m for m, _ in API_MODULES]):
        log.warning("docstring: %s", problem)


def _help(argv: list[str]) -> str:
    from aorc.cli import main

    out = io.StringIO()
    env = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main(argv)
    finally:
        if env is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = env
    return out.getvalue().rstrip()


def cli_help_markdown() -> str:
    """``aorc --help`` and each subcommand's ``--help``, as Markdown."""
    top = _help(["--help"])
    block = re.search(r"^ +\{([\w,-]+)\}", top, re.MULTILINE)
    commands = block.group(1).split(",") if block else re.findall(
        r"^    (\w+)\s{2,}", top.split("COMMAND", 1)[-1], re.MULTILINE)
    parts = ["### `aorc --help`", "", "```text", top, "```", ""]
    for command in commands:
        parts += [f"### `aorc {command} --help`", "", "```text", _help([command, "--help"]),
                  "```", ""]
    return "\n".join(parts)


def _norun_note(match: re.Match[str]) -> str:
    reason = html.escape(match.group(2)).replace("*", "&#42;").replace("_", "&#95;")
    return f"{match.group(1)}<small><em>(Not run by the tests: {reason}.)</em></small>\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Replaces the markers: the CLI page's with the parser's help, the API reference
    index's with the list of module pages, and each ``norun`` comment with a visible note."""
    if page.file.src_uri == "reference/index.md":
        markdown = markdown.replace(API_MARKER, _module_list())
    markdown = NORUN.sub(_norun_note, markdown)
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_help_markdown())
    return markdown
