"""What every door of the client shares: ``client.<tag>.<operation>()`` and its awaited
twin ``client.aio.<tag>.<operation>()``.

Written by hand and copied as it is into the generated package by codegen/generate.py;
the doors themselves (the classes behind ``client.<tag>``) are generated from the spec.
Here are what a list door returns (:class:`ListPager`, its pages and a page, as
protocols that ``service_api.Pager`` and ``service_api.Page`` satisfy), the base of the
resource classes, and :class:`ClientDoors`, the hooks every door calls on its client,
which ``service_api.Client`` overrides in part.

Example::

    from service_api_client.doors import ListPager

    def first_ids(pager: ListPager[ShipmentPage, Shipment]) -> list[object]:
        return [shipment.shipment_id for shipment in pager]
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Container, Generator, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import httpx

from . import errors

if TYPE_CHECKING:
    from .client import AuthenticatedClient, Client

__all__ = ["ClientDoors", "ListPage", "ListPager", "ListPages", "Resource"]

_M_co = TypeVar("_M_co", covariant=True)
_T_co = TypeVar("_T_co", covariant=True)


class ListPage(Protocol[_M_co, _T_co]):
    """One page of a list endpoint, as ``client.<tag>.list().pages()`` yields it
    (``service_api.Page`` is one).

    Example::

        for page in client.shipments.list(max_pages=2).pages():
            print(page.number, page.total_records, len(page.items), page.model.page_size)
    """

    @property
    def number(self) -> int: ...

    @property
    def model(self) -> _M_co: ...

    @property
    def items(self) -> Sequence[_T_co]: ...

    @property
    def total_records(self) -> int: ...


class ListPages(Protocol[_M_co, _T_co]):
    """The pages of a list endpoint, as ``client.<tag>.list().pages()`` returns them:
    with ``for`` or ``async for``.

    Example::

        async for page in client.shipments.list().pages():
            print(page.number, len(page.items))
    """

    def __iter__(self) -> Generator[ListPage[_M_co, _T_co], None, None]: ...

    def __aiter__(self) -> AsyncGenerator[ListPage[_M_co, _T_co], None]: ...


class ListPager(Protocol[_M_co, _T_co]):
    """What ``client.<tag>.list()`` returns (``service_api.Pager`` is one): the items
    with ``for`` or ``async for``, the pages with ``pages()``. Iterators left early are
    closed with ``close()`` / ``aclose()``.

    Example::

        for shipment in client.shipments.list(max_items=100):
            print(shipment.shipment_id)
    """

    def __iter__(self) -> Generator[_T_co, None, None]: ...

    def __aiter__(self) -> AsyncGenerator[_T_co, None]: ...

    def pages(self) -> ListPages[_M_co, _T_co]: ...


class Resource:
    """The operations of one tag bound to a client: the base of the generated classes
    behind ``client.<tag>`` and ``client.aio.<tag>``, and of ``client.aio`` itself.

    Example::

        client.shipments  # <ShipmentsResource of Client(base_url='https://...')>
    """

    __slots__ = ("_client",)

    def __init__(self, client: AuthenticatedClient | Client) -> None:
        self._client = client

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self._client!r}>"


class ClientDoors:
    """What the doors ask of the client they are bound to: ``_pager`` (what a list door
    returns), ``_answer`` (the model of one answer) and ``_unexpected_answer`` (the error
    for any other answer). ``service_api.Client`` overrides ``_pager`` and
    ``_unexpected_answer`` with its pager and its typed errors.

    Example::

        client = Client(base_url="https://api.example.com/public/v3")
        client  # Client(base_url='https://api.example.com/public/v3')
    """

    __slots__ = ()

    # The attrs field of the generated clients (their repr shows it alone: their headers
    # and the token of AuthenticatedClient are left out).
    _base_url: str

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._base_url!r})"

    def _pager(self, operation: ModuleType, /, **options: Any) -> ListPager[Any, Any]:
        """The pages of a list endpoint, as ``client.<tag>.list()`` returns them. This
        package sends one request per call only: ``service_api.Client`` overrides this."""
        name = operation.__name__.rpartition(".")[2]
        raise TypeError(
            f"iterating pages needs service_api.Client, not {type(self).__name__}; "
            f"one page with any client: {name}.sync(client=...)"
        )

    def _unexpected_answer(
        self, response: httpx.Response, cause: Exception | None = None
    ) -> Exception:
        """The error to raise for an answer that is not the operation's success
        (``cause``: the reason a success could not be read): ``errors.UnexpectedStatus``,
        or the reason itself. ``service_api.Client`` gives its typed errors instead."""
        return cause or errors.UnexpectedStatus(response.status_code, response.content)

    def _answer(
        self, response: httpx.Response, operation: ModuleType, success: Container[int]
    ) -> Any:
        """What ``operation`` reads from ``response`` if its status is in ``success``
        (every 2xx the operation declares: the door declares the union of their types);
        else the error of :meth:`_unexpected_answer` is raised."""
        if response.status_code not in success:
            raise self._unexpected_answer(response)
        try:
            return operation._parse_response(client=self, response=response)
        except (KeyError, TypeError, ValueError) as exc:
            error = self._unexpected_answer(response, exc)
            if error is exc:
                raise
            raise error from exc
