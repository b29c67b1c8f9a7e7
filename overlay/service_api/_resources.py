"""The page iteration behind the resource accessors: ``client.shipments.iterate()``,
``.pages()`` and their async twins.

The accessors themselves are generated (``service_api_client.api.<tag>``, one class per
tag with list endpoints, a property per tag on the generated client), so that an
endpoint added to ``openapi.yaml`` gains its accessor with ``make`` alone. The generated
package cannot iterate pages on its own (it may not import this package); it asks its
client for a :class:`~service_api_client.client.Paginator`, and ``service_api.Client``
answers with a :class:`ResourcePaginator`, which is :func:`service_api.paginate`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator
from types import ModuleType
from typing import Any, TypeVar

from service_api._pagination import Page, paginate
from service_api_client import Client

M = TypeVar("M")
T = TypeVar("T")


class ResourcePaginator:
    """Page iteration for the generated resource accessors, bound to one client: each
    method is :func:`service_api.paginate` with the accessor's options (a page failing
    after its page retries raises its typed error, whose ``start_page`` resumes).

    Example::

        for shipment in client.shipments.iterate(concurrency=4):   # uses this class
            print(shipment.shipment_id)
    """

    __slots__ = ("_client",)

    def __init__(self, client: Client) -> None:
        self._client = client

    def _pager(self, operation: ModuleType, page_model: type[Any], options: dict[str, Any]) -> Any:
        # The accessor names its page model to type the result; a module whose model is
        # another would give items of another type than the accessor declares.
        if getattr(operation, "SUCCESS_MODEL", None) is not page_model:
            raise TypeError(f"{operation.__name__} does not return {page_model.__name__}")
        params = options.pop("params")
        return paginate(operation, self._client, **options, **params)

    # Each method takes the options the Paginator protocol names (page_size, start_page,
    # max_items, max_pages, concurrency) and ``params``, all passed on to paginate.

    def items(
        self, operation: ModuleType, page_model: type[M], item_model: type[T], /, **options: Any
    ) -> Generator[T, None, None]:
        """The items, as ``iter(paginate(operation, client, ...))``.

        Example::

            paginator.items(list_shipments, ShipmentPage, Shipment, page_size=50,
                            start_page=1, max_items=None, max_pages=None,
                            concurrency=1, params={})
        """
        items: Generator[T, None, None] = iter(self._pager(operation, page_model, options))
        return items

    def aitems(
        self, operation: ModuleType, page_model: type[M], item_model: type[T], /, **options: Any
    ) -> AsyncGenerator[T, None]:
        """Async twin of :meth:`items`.

        Example::

            async for shipment in paginator.aitems(list_shipments, ...):
                print(shipment.shipment_id)
        """
        items: AsyncGenerator[T, None] = self._pager(operation, page_model, options).__aiter__()
        return items

    def pages(
        self, operation: ModuleType, page_model: type[M], item_model: type[T], /, **options: Any
    ) -> Generator[Page[Any], None, None]:
        """The pages, each a :class:`service_api.Page`, as ``paginate(...).pages()``.

        Example::

            for page in paginator.pages(list_shipments, ...):
                print(page.number, len(page.items))
        """
        pages: Generator[Page[Any], None, None] = self._pager(
            operation, page_model, options
        ).pages()
        return pages

    def apages(
        self, operation: ModuleType, page_model: type[M], item_model: type[T], /, **options: Any
    ) -> AsyncGenerator[Page[Any], None]:
        """Async twin of :meth:`pages`.

        Example::

            async for page in paginator.apages(list_shipments, ...):
                print(page.number, len(page.items))
        """
        pager = self._pager(operation, page_model, options)
        pages: AsyncGenerator[Page[Any], None] = pager.apages()
        return pages

    def __repr__(self) -> str:
        return f"ResourcePaginator({type(self._client).__name__})"
