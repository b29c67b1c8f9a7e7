"""Reading the ``www-authenticate`` header of a 401 answer.

The service writes, for an expired token, exactly what ASP.NET's JwtBearer handler
writes::

    Bearer error="invalid_token", error_description="The token expired at '05/31/2024 13:45:10'"

The parser reads that, and tolerates anything else (no header, another scheme,
unquoted values, garbage) by returning what it could read: it never raises.
"""

from __future__ import annotations

import datetime
import re

import attrs

# auth-param = token BWS "=" BWS ( token / quoted-string ), RFC 9110 section 11.2.
_PARAM = re.compile(
    r"""(?P<name>[A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*=\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<token>[^\s,"]+))"""
)
_EXPIRED_AT = re.compile(r"expired at '?(\d{1,2}/\d{1,2}/\d{4} \d{1,2}:\d{2}:\d{2})")


@attrs.frozen
class WwwAuthenticate:
    """What a ``www-authenticate`` header says, as far as it could be read.

    Attributes:
        scheme: the challenge's scheme in lower case (``"bearer"``), or ``None``.
        error: the ``error`` parameter (such as ``"invalid_token"``), or ``None``.
        error_description: the ``error_description`` parameter, or ``None``.
        expired_at: the expiry time in the description as an aware UTC datetime, or ``None``.
    """

    scheme: str | None = None
    error: str | None = None
    error_description: str | None = None

    @property
    def expired_at(self) -> datetime.datetime | None:
        """The expiry time in the description, in UTC, or ``None``."""
        return parse_expiry_time(self.error_description)

    @property
    def says_expired(self) -> bool:
        """True when the server says the token expired."""
        return self.expired_at is not None or "expired" in (self.error_description or "").lower()


def parse_www_authenticate(value: str | None) -> WwwAuthenticate:
    """Parse a ``www-authenticate`` value; never raises.

    Example::

        parse_www_authenticate('Bearer error="invalid_token"').error   # "invalid_token"
    """
    # Headers longer than 4096 characters are not worth reading; the cap keeps parsing cheap.
    scheme, _, rest = (value or "")[:4096].strip().partition(" ")
    if "=" in scheme:  # no scheme, parameters only
        scheme, rest = "", f"{scheme} {rest}"
    params: dict[str, str] = {}
    for name, quoted, token in _PARAM.findall(rest):
        # The first occurrence counts; a token value is never empty, a quoted one may be.
        params.setdefault(name.lower(), token or re.sub(r"\\(.)", r"\1", quoted))
    return WwwAuthenticate(
        scheme.lower() or None, params.get("error"), params.get("error_description")
    )


def parse_expiry_time(description: str | None) -> datetime.datetime | None:
    """The ``MM/DD/YYYY HH:mm:ss`` time of "The token expired at '...'", in UTC, or ``None``.

    Example::

        parse_expiry_time("The token expired at '05/31/2024 13:45:10'")
        # datetime.datetime(2024, 5, 31, 13, 45, 10, tzinfo=datetime.timezone.utc)
    """
    match = _EXPIRED_AT.search(description or "")
    try:
        when = datetime.datetime.strptime(match[1], "%m/%d/%Y %H:%M:%S") if match else None
    except ValueError:  # 13/45/2024 and such
        return None
    return when.replace(tzinfo=datetime.UTC) if when else None
