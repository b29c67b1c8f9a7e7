"""Contains endpoint functions for accessing the API, and ``ShipmentsResource``: its list
endpoints bound to a client, as ``client.shipments``."""

from collections.abc import AsyncGenerator, Generator

from ...client import AuthenticatedClient, Client, ListPage
from ...models.shipment import Shipment
from ...models.shipment_page import ShipmentPage
from ...types import Unset
from . import list_shipments


class ShipmentsResource:
    """The list endpoints of ``shipments``, bound to a client: ``client.shipments``.

    ``list`` / ``alist`` send one request with any client. ``iterate`` / ``aiterate`` (the
    items) and ``pages`` / ``apages`` go page after page through the client's paginator,
    which ``service_api.Client`` supplies (the plain generated client raises TypeError).

    Example::

        first = client.shipments.list(page_size=10)
        for item in client.shipments.iterate(max_items=100):
            print(item)
    """

    __slots__ = ("_client",)

    def __init__(self, client: AuthenticatedClient | Client) -> None:
        self._client = client

    def list(
        self,
        *,
        page_number: int | Unset = 1,
        page_size: int | Unset = 50,
    ) -> ShipmentPage:
        """List the shipments of the account: one page, as ``list_shipments.sync_or_raise``.

        Example::

            page = client.shipments.list(page_number=1)
        """
        return list_shipments.sync_or_raise(
            client=self._client,
            page_number=page_number,
            page_size=page_size,
        )

    async def alist(
        self,
        *,
        page_number: int | Unset = 1,
        page_size: int | Unset = 50,
    ) -> ShipmentPage:
        """List the shipments of the account: one page, as ``list_shipments.asyncio_or_raise``.

        Example::

            page = await client.shipments.alist(page_number=1)
        """
        return await list_shipments.asyncio_or_raise(
            client=self._client,
            page_number=page_number,
            page_size=page_size,
        )

    def iterate(
        self,
        *,
        page_size: int = 50,
        start_page: int = 1,
        max_items: int | None = None,
        max_pages: int | None = None,
        concurrency: int = 1,
    ) -> Generator[Shipment, None, None]:
        """Every Shipment of ``list_shipments``, page after page (needs ``service_api.Client``).

        Example::

            for item in client.shipments.iterate(max_items=100):
                print(item)
        """
        return self._client._paginator().items(
            list_shipments,
            ShipmentPage,
            Shipment,
            page_size=page_size,
            start_page=start_page,
            max_items=max_items,
            max_pages=max_pages,
            concurrency=concurrency,
            params={},
        )

    def aiterate(
        self,
        *,
        page_size: int = 50,
        start_page: int = 1,
        max_items: int | None = None,
        max_pages: int | None = None,
        concurrency: int = 1,
    ) -> AsyncGenerator[Shipment, None]:
        """Async twin of ``iterate``.

        Example::

            async for item in client.shipments.aiterate(max_items=100):
                print(item)
        """
        return self._client._paginator().aitems(
            list_shipments,
            ShipmentPage,
            Shipment,
            page_size=page_size,
            start_page=start_page,
            max_items=max_items,
            max_pages=max_pages,
            concurrency=concurrency,
            params={},
        )

    def pages(
        self,
        *,
        page_size: int = 50,
        start_page: int = 1,
        max_items: int | None = None,
        max_pages: int | None = None,
        concurrency: int = 1,
    ) -> Generator[ListPage[ShipmentPage, Shipment], None, None]:
        """The pages of ``list_shipments`` in order (needs ``service_api.Client``).

        Example::

            for page in client.shipments.pages(max_pages=2):
                print(page.number, len(page.items))
        """
        return self._client._paginator().pages(
            list_shipments,
            ShipmentPage,
            Shipment,
            page_size=page_size,
            start_page=start_page,
            max_items=max_items,
            max_pages=max_pages,
            concurrency=concurrency,
            params={},
        )

    def apages(
        self,
        *,
        page_size: int = 50,
        start_page: int = 1,
        max_items: int | None = None,
        max_pages: int | None = None,
        concurrency: int = 1,
    ) -> AsyncGenerator[ListPage[ShipmentPage, Shipment], None]:
        """Async twin of ``pages``.

        Example::

            async for page in client.shipments.apages(max_pages=2):
                print(page.number, len(page.items))
        """
        return self._client._paginator().apages(
            list_shipments,
            ShipmentPage,
            Shipment,
            page_size=page_size,
            start_page=start_page,
            max_items=max_items,
            max_pages=max_pages,
            concurrency=concurrency,
            params={},
        )
