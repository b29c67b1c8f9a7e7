"""Generate the typed client package from openapi.yaml into DEST/service_api_client.

Usage (``make generate`` runs it)::

    .venv/bin/python codegen/generate.py [--spec openapi.yaml] DEST

1. The spec is checked with openapi-spec-validator (codegen/validate.py): one that is
   not valid OpenAPI 3 stops here, the file, line and rule named.
2. It is read once into the spec model (``service_api_spec.load_spec``).
3. openapi-python-client parses it in this process; the facts the project's templates
   need beyond that parse (each operation's door and kind, its success's statuses and
   type, the page and item models of a list, ...) are computed from the model
   (codegen/facts.py) and put into the templates' globals, and the templates
   (codegen/templates: copies of the generator's own that call the project's) render
   the package. Names the generator would give twice are made distinct first, by the
   rules of codegen/prepare.py; what it still cannot carry stops here, its place named.
4. The hand-written modules of codegen/package are copied in as they are.
5. DEST/service_api_client is replaced only once the whole package is written.

The generator writes a whole project (pyproject, README, the caches of its ruff
post-hooks) in a temporary folder; only the package folder is kept.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from facts import Facts, GenerationError
from openapi_python_client import Project, _get_document
from openapi_python_client.config import Config, ConfigFile, MetaType
from openapi_python_client.parser.errors import GeneratorError
from openapi_python_client.parser.openapi import GeneratorData
from prepare import Prepared
from validate import InvalidSpec, check_spec

from service_api_spec import SpecError, read_document, read_spec

CODEGEN = Path(__file__).resolve().parent
PACKAGE = "service_api_client"


def generate(spec: Path, dest: Path) -> list[str]:
    """Write the package of ``spec`` to ``dest / "service_api_client"``; the notes of
    what got no door, and why.

    Raises InvalidSpec (not OpenAPI 3), SpecError (no model can be read) or
    GenerationError (the generator failed); ``dest`` is then left as it was.

    Example::

        generate(Path("openapi.yaml"), Path("generated"))
    """
    document = read_document(spec)
    check_spec(document)
    model = read_spec(document)
    # The generator's ruff post-hooks: the ruff of this interpreter's environment.
    bin_dir = str(Path(sys.executable).parent)
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    with tempfile.TemporaryDirectory(prefix="generate-") as work:
        project = _project(spec, Path(work) / "project")
        facts = Facts.read(model, project.openapi)
        project.env.globals.update(
            doors=facts.doors,
            tag_doors=facts.tags,
            list_entries=facts.lists,
            tag_attributes=facts.tag_attributes,
            records=facts.records,
        )
        with contextlib.redirect_stdout(io.StringIO()):  # its "Generating ..." line
            problems = project.build()
        # What openapi-python-client leaves out (a schema, an operation, an answer) is
        # never a note: make fails, naming the place.
        if problems:
            raise GenerationError("\n".join(_say(p) for p in problems))
        package = project.package_dir
        for module in sorted((CODEGEN / "package").glob("*.py")):
            shutil.copyfile(module, package / module.name)
        dest.mkdir(parents=True, exist_ok=True)
        old = dest / f".{PACKAGE}.old"
        shutil.rmtree(old, ignore_errors=True)
        if (dest / PACKAGE).exists():
            (dest / PACKAGE).rename(old)
        shutil.move(str(package), str(dest / PACKAGE))
        shutil.rmtree(old, ignore_errors=True)
    return list(facts.notes)


def _project(spec: Path, output: Path) -> Project:
    config = Config.from_sources(
        ConfigFile.load_from_path(CODEGEN / "config.yaml"),
        MetaType.PDM,
        spec,
        "utf-8",
        overwrite=True,
        output_path=output,
    )
    document = _get_document(source=spec, timeout=config.http_timeout)
    if isinstance(document, GeneratorError):
        raise GenerationError(_say(document))
    # Names the generator would give twice are made distinct first (codegen/prepare.py).
    prepared = Prepared.of(document)
    openapi = GeneratorData.from_dict(prepared.document, config=config)
    if isinstance(openapi, GeneratorError):
        raise GenerationError(_say(openapi))
    prepared.restore(openapi)
    return Project(
        openapi=openapi, custom_template_path=CODEGEN / "templates", config=config
    )


def _say(problem: GeneratorError) -> str:
    return " ".join(_text(part) for part in (problem.header, problem.detail) if part)


def _text(part: object) -> str:
    """The generator's text, with the spec's names it keeps apart spelled out."""
    return str(getattr(part, "get_untrusted_value", lambda: part)())


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``generate.py [--spec PATH] DEST``; 1 and the reason on
    stderr when the package cannot be generated."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path, help="the folder of service_api_client")
    parser.add_argument(
        "--spec",
        type=Path,
        default=CODEGEN.parent / "openapi.yaml",
        help="the spec (default: openapi.yaml beside codegen/)",
    )
    args = parser.parse_args(argv)
    try:
        notes = generate(args.spec, args.dest)
    except (InvalidSpec, SpecError, GenerationError) as exc:
        print(f"cannot generate the client: {exc}", file=sys.stderr)
        return 1
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
