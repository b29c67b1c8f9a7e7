"""Which output format an export writes: ``--format``, else the extension of ``--output``.

Kept apart from the writers (and free of their dependencies) so that the parser can list
the formats without importing them.
"""

import os

from service_api_cli._exit_codes import UsageError

FORMATS = ("jsonl", "csv", "table")  # the first when nothing names one

#: Extensions that name a format. ``.json`` is deliberately absent: JSON Lines is not one
#: JSON document, so a ``.json`` file needs ``--format jsonl`` to say it is meant.
FORMAT_BY_EXTENSION = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}


def choose_format(explicit: str | None, output: str | None) -> str:
    """The format to write: ``explicit`` (``--format``) if given, else the one the
    extension of ``output`` names, else JSON Lines. A contradiction is a :class:`UsageError`.

    Example::

        >>> choose_format(None, "shipments.csv")
        'csv'
        >>> choose_format("jsonl", None)
        'jsonl'
    """
    extension = os.path.splitext(output or "")[1].lower()  # none for "-" (stdout)
    implied = FORMAT_BY_EXTENSION.get(extension)
    if explicit is None:
        if extension == ".json":
            raise UsageError(
                f"--output {output!r}: the export is JSON Lines (one object per line), not "
                "a JSON document; name the file .jsonl or pass --format jsonl"
            )
        return implied or FORMATS[0]
    if implied is not None and implied != explicit:
        raise UsageError(
            f"--format {explicit} contradicts --output {output!r} (a {extension} file is "
            f"{implied}); drop --format or change the file name"
        )
    return explicit
