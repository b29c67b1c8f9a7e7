"""``python -m service_api_cli``: the same as the ``service-api`` command."""

import sys

from service_api_cli import main

if __name__ == "__main__":
    sys.exit(main())
