from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem_details import ProblemDetails
from ...models.shipment import Shipment
from ...types import Response


def _get_kwargs(
    shipment_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/shipments/{shipment_id}".format(
            shipment_id=quote(str(shipment_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | ProblemDetails | Shipment | str | None:
    if response.status_code == 200:
        response_200 = Shipment.from_dict(response.json())

        return response_200

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

    if response.status_code == 404:
        # An error body is what the server or a proxy in front of it wrote (nothing,
        # HTML, a truncated JSON): read as its model only when it is one, else None.
        try:
            body_404 = response.json()
            response_404 = ProblemDetails.from_dict(body_404)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        return response_404

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
    shipment_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Any | ProblemDetails | Shipment | str]:
    """Get one shipment

     The shipment of the account with this identifier.

    Args:
        shipment_id (str): Identifier of the shipment (its shipmentId).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ProblemDetails | Shipment | str]
    """

    kwargs = _get_kwargs(
        shipment_id=shipment_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    shipment_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Any | ProblemDetails | Shipment | str | None:
    """Get one shipment

     The shipment of the account with this identifier.

    Args:
        shipment_id (str): Identifier of the shipment (its shipmentId).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ProblemDetails | Shipment | str
    """

    return sync_detailed(
        shipment_id=shipment_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    shipment_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Any | ProblemDetails | Shipment | str]:
    """Get one shipment

     The shipment of the account with this identifier.

    Args:
        shipment_id (str): Identifier of the shipment (its shipmentId).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ProblemDetails | Shipment | str]
    """

    kwargs = _get_kwargs(
        shipment_id=shipment_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    shipment_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Any | ProblemDetails | Shipment | str | None:
    """Get one shipment

     The shipment of the account with this identifier.

    Args:
        shipment_id (str): Identifier of the shipment (its shipmentId).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ProblemDetails | Shipment | str
    """

    return (
        await asyncio_detailed(
            shipment_id=shipment_id,
            client=client,
        )
    ).parsed


ANSWER_HEADERS: dict[str, frozenset[str]] = {
    "200": frozenset([]),
    "400": frozenset(["x-request-id"]),
    "401": frozenset(["www-authenticate", "x-request-id"]),
    "403": frozenset(["x-request-id"]),
    "404": frozenset(["x-request-id"]),
    "429": frozenset(["ratelimit", "ratelimit-policy", "retry-after", "x-request-id"]),
    "5XX": frozenset(["retry-after", "x-request-id"]),
}
"""The headers each declared answer names, by status key: another is drift."""
