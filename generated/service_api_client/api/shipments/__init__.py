"""Contains endpoint functions for accessing the API"""

from collections.abc import Callable, Hashable

from ...doors import ListPager, Resource
from ...models.shipment import Shipment
from ...models.shipment_page import ShipmentPage
from . import create_shipment, get_shipment, list_shipments


class ShipmentsResource(Resource):
    """The operations of ``shipments``, bound to a client: ``client.shipments``.

    A list door returns the endpoint's pager: its items with ``for`` / ``async for``, its
    pages with ``.pages()`` (paging needs ``service_api.Client``: the plain generated
    client raises TypeError). Every other door sends one request and returns the model
    of the operation's success, or raises.

    Example::

        for item in client.shipments.list(max_items=10):
            print(item)
        result = client.shipments.create(body=Shipment(...))
        result = client.shipments.get(shipment_id="...")
    """

    __slots__ = ()

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
            page_size: records per page (1 to 50, default 50).
            start_page: the first page to fetch (a failure's ``start_page`` resumes).
            max_items: stop after this many items.
            max_pages: stop after this many pages.
            concurrency: requests in flight at once after the first page.
            key: a record's identity, to drop records served again (default: its id).

        Example::

            for item in client.shipments.list(max_items=10):
                print(item)
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

    def create(
        self,
        *,
        body: Shipment,
    ) -> Shipment:
        """Create a shipment: the Shipment of the 201 answer of ``create_shipment`` (POST
        ``/shipments``).

        Args:
            body (Shipment): A shipment. Every field is optional; a value of another type than
                the one
                guessed here, and any field not named here, is kept as sent
                (`shipment["field"]`), and `to_dict()` gives back the object as it came.

        Raises:
            service_api.ServiceApiError: with ``service_api.Client``, for any other answer
                (an ``ApiStatusError`` per status: ``NotFoundError`` for a 404, ...) or a
                body it cannot read (``InvalidResponseError``).
            errors.UnexpectedStatus: with this package's own ``Client``, for any other
                status.

        Example::

            result = client.shipments.create(body=Shipment(...))
        """
        response = self._client.get_httpx_client().request(
            **create_shipment._get_kwargs(
                body=body,
            )
        )
        answer: Shipment = self._client._answer(response, create_shipment, range(201, 202))
        return answer

    def get(
        self,
        *,
        shipment_id: str,
    ) -> Shipment:
        """Get one shipment: the Shipment of the 200 answer of ``get_shipment`` (GET
        ``/shipments/{shipment_id}``).

        Args:
            shipment_id (str): Identifier of the shipment (its shipmentId).

        Raises:
            service_api.ServiceApiError: with ``service_api.Client``, for any other answer
                (an ``ApiStatusError`` per status: ``NotFoundError`` for a 404, ...) or a
                body it cannot read (``InvalidResponseError``).
            errors.UnexpectedStatus: with this package's own ``Client``, for any other
                status.

        Example::

            result = client.shipments.get(shipment_id="...")
        """
        response = self._client.get_httpx_client().request(
            **get_shipment._get_kwargs(
                shipment_id=shipment_id,
            )
        )
        answer: Shipment = self._client._answer(response, get_shipment, range(200, 201))
        return answer


class AsyncShipmentsResource(Resource):
    """The operations of ``shipments`` to await, bound to a client: ``client.aio.shipments``.

    A list door returns the endpoint's pager: its items with ``for`` / ``async for``, its
    pages with ``.pages()`` (paging needs ``service_api.Client``: the plain generated
    client raises TypeError). Every other door sends one request and returns the model
    of the operation's success, or raises; each is a coroutine.

    Example::

        async for item in client.aio.shipments.list(max_items=10):
            print(item)
        result = await client.aio.shipments.create(body=Shipment(...))
        result = await client.aio.shipments.get(shipment_id="...")
    """

    __slots__ = ()

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
            page_size: records per page (1 to 50, default 50).
            start_page: the first page to fetch (a failure's ``start_page`` resumes).
            max_items: stop after this many items.
            max_pages: stop after this many pages.
            concurrency: requests in flight at once after the first page.
            key: a record's identity, to drop records served again (default: its id).

        Example::

            async for item in client.aio.shipments.list(max_items=10):
                print(item)
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

    async def create(
        self,
        *,
        body: Shipment,
    ) -> Shipment:
        """Create a shipment: the Shipment of the 201 answer of ``create_shipment`` (POST
        ``/shipments``).

        Args:
            body (Shipment): A shipment. Every field is optional; a value of another type than
                the one
                guessed here, and any field not named here, is kept as sent
                (`shipment["field"]`), and `to_dict()` gives back the object as it came.

        Raises:
            service_api.ServiceApiError: with ``service_api.Client``, for any other answer
                (an ``ApiStatusError`` per status: ``NotFoundError`` for a 404, ...) or a
                body it cannot read (``InvalidResponseError``).
            errors.UnexpectedStatus: with this package's own ``Client``, for any other
                status.

        Example::

            result = await client.aio.shipments.create(body=Shipment(...))
        """
        response = await self._client.get_async_httpx_client().request(
            **create_shipment._get_kwargs(
                body=body,
            )
        )
        answer: Shipment = self._client._answer(response, create_shipment, range(201, 202))
        return answer

    async def get(
        self,
        *,
        shipment_id: str,
    ) -> Shipment:
        """Get one shipment: the Shipment of the 200 answer of ``get_shipment`` (GET
        ``/shipments/{shipment_id}``).

        Args:
            shipment_id (str): Identifier of the shipment (its shipmentId).

        Raises:
            service_api.ServiceApiError: with ``service_api.Client``, for any other answer
                (an ``ApiStatusError`` per status: ``NotFoundError`` for a 404, ...) or a
                body it cannot read (``InvalidResponseError``).
            errors.UnexpectedStatus: with this package's own ``Client``, for any other
                status.

        Example::

            result = await client.aio.shipments.get(shipment_id="...")
        """
        response = await self._client.get_async_httpx_client().request(
            **get_shipment._get_kwargs(
                shipment_id=shipment_id,
            )
        )
        answer: Shipment = self._client._answer(response, get_shipment, range(200, 201))
        return answer
