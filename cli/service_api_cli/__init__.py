"""The ``service-api`` command line: export any list endpoint, show a token, run the mock.

Example::

    $ service-api list shipments --account acct-1 --account acct-2 -o shipments.jsonl
"""

from service_api_cli._app import main

__all__ = ["main"]
