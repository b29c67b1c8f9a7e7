from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.o_auth_error import OAuthError
from ...models.token_request import TokenRequest
from ...models.token_response import TokenResponse
from ...types import Response


def _get_kwargs(
    *,
    body: TokenRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/authenticate",
    }

    _kwargs["files"] = body.to_multipart()

    headers["Content-Type"] = "multipart/form-data; boundary=+++"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | OAuthError | TokenResponse | str | None:
    if response.status_code == 200:
        response_200 = TokenResponse.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        # An error body is what the server or a proxy in front of it wrote (nothing,
        # HTML, a truncated JSON): read as its model only when it is one, else None.
        try:
            body_400 = response.json()
            response_400 = OAuthError.from_dict(body_400)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        return response_400

    if response.status_code == 401:
        # An error body is what the server or a proxy in front of it wrote (nothing,
        # HTML, a truncated JSON): read as its model only when it is one, else None.
        try:
            body_401 = response.json()
            response_401 = OAuthError.from_dict(body_401)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        return response_401

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
) -> Response[Any | OAuthError | TokenResponse | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: TokenRequest,
) -> Response[Any | OAuthError | TokenResponse | str]:
    """Obtain a bearer token

     Exchanges the integration's client ID and client secret for a bearer token
    that lives `expires_in` seconds (3600). No bearer token or account header is
    needed for this call. The published client sends `accept: text/plain`; the
    answer is a JSON object either way.

    Args:
        body (TokenRequest): Form fields of `POST /authenticate`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | OAuthError | TokenResponse | str]
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
    body: TokenRequest,
) -> Any | OAuthError | TokenResponse | str | None:
    """Obtain a bearer token

     Exchanges the integration's client ID and client secret for a bearer token
    that lives `expires_in` seconds (3600). No bearer token or account header is
    needed for this call. The published client sends `accept: text/plain`; the
    answer is a JSON object either way.

    Args:
        body (TokenRequest): Form fields of `POST /authenticate`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | OAuthError | TokenResponse | str
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: TokenRequest,
) -> Response[Any | OAuthError | TokenResponse | str]:
    """Obtain a bearer token

     Exchanges the integration's client ID and client secret for a bearer token
    that lives `expires_in` seconds (3600). No bearer token or account header is
    needed for this call. The published client sends `accept: text/plain`; the
    answer is a JSON object either way.

    Args:
        body (TokenRequest): Form fields of `POST /authenticate`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | OAuthError | TokenResponse | str]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: TokenRequest,
) -> Any | OAuthError | TokenResponse | str | None:
    """Obtain a bearer token

     Exchanges the integration's client ID and client secret for a bearer token
    that lives `expires_in` seconds (3600). No bearer token or account header is
    needed for this call. The published client sends `accept: text/plain`; the
    answer is a JSON object either way.

    Args:
        body (TokenRequest): Form fields of `POST /authenticate`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | OAuthError | TokenResponse | str
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
