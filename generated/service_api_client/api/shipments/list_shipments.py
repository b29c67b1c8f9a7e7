from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem_details import ProblemDetails
from ...models.shipment_page import ShipmentPage
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    page_number: int | Unset = 1,
    page_size: int | Unset = 50,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["pageNumber"] = page_number

    params["pageSize"] = page_size

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/shipments",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | ProblemDetails | ShipmentPage | str | None:
    if response.status_code == 200:
        response_200 = ShipmentPage.from_dict(response.json())

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
) -> Response[Any | ProblemDetails | ShipmentPage | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    page_number: int | Unset = 1,
    page_size: int | Unset = 50,
) -> Response[Any | ProblemDetails | ShipmentPage | str]:
    """List the shipments of the account

     One page of the account's shipments in the pagination envelope. Sends the
    account header `x-service-account-id` (the document's global security).

    Args:
        page_number (int | Unset): The page to return, counted from 1. With N records and page
            size P,
            pages 1 to ceil(N/P) hold the results. A page past the last one is
            answered 200 with an empty `data` array and the whole set's
            `totalRecords`; its `previous` link is present only when the page before
            it exists.
             Default: 1.
        page_size (int | Unset): Records per page. The default, 50, is also the maximum: the
            service accepts
            a larger value and treats it as 50.
             Default: 50.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ProblemDetails | ShipmentPage | str]
    """

    kwargs = _get_kwargs(
        page_number=page_number,
        page_size=page_size,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    page_number: int | Unset = 1,
    page_size: int | Unset = 50,
) -> Any | ProblemDetails | ShipmentPage | str | None:
    """List the shipments of the account

     One page of the account's shipments in the pagination envelope. Sends the
    account header `x-service-account-id` (the document's global security).

    Args:
        page_number (int | Unset): The page to return, counted from 1. With N records and page
            size P,
            pages 1 to ceil(N/P) hold the results. A page past the last one is
            answered 200 with an empty `data` array and the whole set's
            `totalRecords`; its `previous` link is present only when the page before
            it exists.
             Default: 1.
        page_size (int | Unset): Records per page. The default, 50, is also the maximum: the
            service accepts
            a larger value and treats it as 50.
             Default: 50.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ProblemDetails | ShipmentPage | str
    """

    return sync_detailed(
        client=client,
        page_number=page_number,
        page_size=page_size,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    page_number: int | Unset = 1,
    page_size: int | Unset = 50,
) -> Response[Any | ProblemDetails | ShipmentPage | str]:
    """List the shipments of the account

     One page of the account's shipments in the pagination envelope. Sends the
    account header `x-service-account-id` (the document's global security).

    Args:
        page_number (int | Unset): The page to return, counted from 1. With N records and page
            size P,
            pages 1 to ceil(N/P) hold the results. A page past the last one is
            answered 200 with an empty `data` array and the whole set's
            `totalRecords`; its `previous` link is present only when the page before
            it exists.
             Default: 1.
        page_size (int | Unset): Records per page. The default, 50, is also the maximum: the
            service accepts
            a larger value and treats it as 50.
             Default: 50.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ProblemDetails | ShipmentPage | str]
    """

    kwargs = _get_kwargs(
        page_number=page_number,
        page_size=page_size,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    page_number: int | Unset = 1,
    page_size: int | Unset = 50,
) -> Any | ProblemDetails | ShipmentPage | str | None:
    """List the shipments of the account

     One page of the account's shipments in the pagination envelope. Sends the
    account header `x-service-account-id` (the document's global security).

    Args:
        page_number (int | Unset): The page to return, counted from 1. With N records and page
            size P,
            pages 1 to ceil(N/P) hold the results. A page past the last one is
            answered 200 with an empty `data` array and the whole set's
            `totalRecords`; its `previous` link is present only when the page before
            it exists.
             Default: 1.
        page_size (int | Unset): Records per page. The default, 50, is also the maximum: the
            service accepts
            a larger value and treats it as 50.
             Default: 50.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ProblemDetails | ShipmentPage | str
    """

    return (
        await asyncio_detailed(
            client=client,
            page_number=page_number,
            page_size=page_size,
        )
    ).parsed


SUCCESS_MODEL = ShipmentPage
"""Model of the operation's successful response: one page."""

ID_ATTRIBUTE = "shipment_id"
"""The attribute that identifies a record (its identifier field's), or None."""

PAGE_SIZE: int | None = 50
"""Records per page when none is named: the spec's ``pageSize`` default, else its
maximum; None when it states neither."""

MAX_PAGE_SIZE: int | None = 50
"""The most records per page the service serves, as the spec's ``pageSize`` maximum
says; None when it states none."""


ANSWER_HEADERS: dict[str, frozenset[str]] = {
    "200": frozenset([]),
    "400": frozenset(["x-request-id"]),
    "401": frozenset(["www-authenticate", "x-request-id"]),
    "403": frozenset(["x-request-id"]),
    "429": frozenset(["ratelimit", "ratelimit-policy", "retry-after", "x-request-id"]),
    "5XX": frozenset(["retry-after", "x-request-id"]),
}
"""The headers each declared answer names, by status key: another is drift."""
