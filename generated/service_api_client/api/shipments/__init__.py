"""Contains endpoint functions for accessing the API, and ``ShipmentsResource``: its list
endpoints bound to a client, as ``client.shipments``."""

from collections.abc import Callable, Hashable

from ...client import AuthenticatedClient, Client, ListPager
from ...models.shipment import Shipment
from ...models.shipment_page import ShipmentPage
from . import list_shipments


class ShipmentsResource:
    """The list endpoints of ``shipments``, bound to a client: ``client.shipments``.

    Each ``list`` method returns the endpoint's pager: its items with ``for`` /
    ``async for``, its pages with ``.pages()``. Paging needs ``service_api.Client`` (the
    plain generated client raises TypeError); one page by hand is the endpoint module's
    ``sync`` / ``asyncio``.

    Example::

        for item in client.shipments.list(max_items=100):
            print(item)
    """

    __slots__ = ("_client",)

    def __init__(self, client: AuthenticatedClient | Client) -> None:
        self._client = client

    def list(
        self,
        *,
        page_size: int = 50,
        start_page: int = 1,
        max_items: int | None = None,
        max_pages: int | None = None,
        concurrency: int = 1,
        key: Callable[[Shipment], Hashable | None] | None = None,
    ) -> ListPager[ShipmentPage, Shipment]:
        """List the shipments of the account: every Shipment of ``list_shipments``, page after page.

        Args:
            page_size: records per page (1 to 50).
            start_page: the first page to fetch (a failure's ``start_page`` resumes).
            max_items: stop after this many items.
            max_pages: stop after this many pages.
            concurrency: requests in flight at once after the first page.
            key: a record's identity, to drop records served again (default: its id).

        Example::

            for item in client.shipments.list(max_items=100):
                print(item)
            async for page in client.shipments.list().pages():
                print(page.number, len(page.items))
        """
        return self._client._pager(
            list_shipments,
            page_size=page_size,
            start_page=start_page,
            max_items=max_items,
            max_pages=max_pages,
            concurrency=concurrency,
            key=key,
        )
