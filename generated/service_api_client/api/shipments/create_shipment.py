from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem_details import ProblemDetails
from ...models.shipment import Shipment
from ...types import Response


def _get_kwargs(
    *,
    body: Shipment,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/shipments",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | ProblemDetails | Shipment | str | None:
    if response.status_code == 201:
        response_201 = Shipment.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        # An error body is what the server or a proxy in front of it wrote (nothing,
        # HTML, a truncated JSON): read as its model only when it is one, else None.
        try:
            body_400 = response.json()
            response_400 = ProblemDetails.from_dict(body_400)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        return response_400

    if response.status_code == 401:
        response_401 = cast(Any, None)
        return response_401

    if response.status_code == 403:
        # An error body is what the server or a proxy in front of it wrote (nothing,
        # HTML, a truncated JSON): read as its model only when it is one, else None.
        try:
            body_403 = response.json()
            response_403 = ProblemDetails.from_dict(body_403)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        return response_403

    if response.status_code == 429:
        response_429 = response.text
        return response_429

    if 500 <= response.status_code <= 599:
        response_5xx = cast(Any, None)
        return response_5xx

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Any | ProblemDetails | Shipment | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: Shipment,
) -> Response[Any | ProblemDetails | Shipment | str]:
    """Create a shipment

     Creates a shipment of the account from the fields given and answers it with
    the identifier the service gave it. Not retried by the client after it may
    have reached the service: a create sent twice would make two shipments.

    Args:
        body (Shipment): A shipment. Every field is optional; a value of another type than the one
            guessed here, and any field not named here, is kept as sent
            (`shipment["field"]`), and `to_dict()` gives back the object as it came.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ProblemDetails | Shipment | str]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: Shipment,
) -> Any | ProblemDetails | Shipment | str | None:
    """Create a shipment

     Creates a shipment of the account from the fields given and answers it with
    the identifier the service gave it. Not retried by the client after it may
    have reached the service: a create sent twice would make two shipments.

    Args:
        body (Shipment): A shipment. Every field is optional; a value of another type than the one
            guessed here, and any field not named here, is kept as sent
            (`shipment["field"]`), and `to_dict()` gives back the object as it came.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ProblemDetails | Shipment | str
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: Shipment,
) -> Response[Any | ProblemDetails | Shipment | str]:
    """Create a shipment

     Creates a shipment of the account from the fields given and answers it with
    the identifier the service gave it. Not retried by the client after it may
    have reached the service: a create sent twice would make two shipments.

    Args:
        body (Shipment): A shipment. Every field is optional; a value of another type than the one
            guessed here, and any field not named here, is kept as sent
            (`shipment["field"]`), and `to_dict()` gives back the object as it came.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ProblemDetails | Shipment | str]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: Shipment,
) -> Any | ProblemDetails | Shipment | str | None:
    """Create a shipment

     Creates a shipment of the account from the fields given and answers it with
    the identifier the service gave it. Not retried by the client after it may
    have reached the service: a create sent twice would make two shipments.

    Args:
        body (Shipment): A shipment. Every field is optional; a value of another type than the one
            guessed here, and any field not named here, is kept as sent
            (`shipment["field"]`), and `to_dict()` gives back the object as it came.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ProblemDetails | Shipment | str
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed


ANSWER_HEADERS: dict[str, frozenset[str]] = {
    "201": frozenset([]),
    "400": frozenset(["x-request-id"]),
    "401": frozenset(["www-authenticate", "x-request-id"]),
    "403": frozenset(["x-request-id"]),
    "429": frozenset(["ratelimit", "ratelimit-policy", "retry-after", "x-request-id"]),
    "5XX": frozenset(["retry-after", "x-request-id"]),
}
"""The headers each declared answer names, by status key: another is drift."""
