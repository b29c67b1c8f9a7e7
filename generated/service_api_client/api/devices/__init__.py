"""Contains endpoint functions for accessing the API"""

from collections.abc import Callable, Hashable

from ...doors import ListPager, Resource
from ...models.device import Device
from ...models.device_page import DevicePage
from . import list_devices


class DevicesResource(Resource):
    """The operations of ``devices``, bound to a client: ``client.devices``.

    A list door returns the endpoint's pager: its items with ``for`` / ``async for``, its
    pages with ``.pages()`` (paging needs ``service_api.Client``: the plain generated
    client raises TypeError). Every other door sends one request and returns the model
    of the operation's success, or raises.

    Example::

        for item in client.devices.list(max_items=10):
            print(item)
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
        key: Callable[[Device], Hashable | None] | None = None,
    ) -> ListPager[DevicePage, Device]:
        """List the devices of the account: every Device of ``list_devices``, page after page.

        Args:
            page_size: records per page (1 to 50, default 50).
            start_page: the first page to fetch (a failure's ``start_page`` resumes).
            max_items: stop after this many items.
            max_pages: stop after this many pages.
            concurrency: requests in flight at once after the first page.
            key: a record's identity, to drop records served again (default: its id).

        Example::

            for item in client.devices.list(max_items=10):
                print(item)
        """
        return self._client._pager(
            list_devices,
            page_size=page_size,
            start_page=start_page,
            max_items=max_items,
            max_pages=max_pages,
            concurrency=concurrency,
            key=key,
        )


class AsyncDevicesResource(Resource):
    """The operations of ``devices`` to await, bound to a client: ``client.aio.devices``.

    A list door returns the endpoint's pager: its items with ``for`` / ``async for``, its
    pages with ``.pages()`` (paging needs ``service_api.Client``: the plain generated
    client raises TypeError). Every other door sends one request and returns the model
    of the operation's success, or raises; each is a coroutine.

    Example::

        async for item in client.aio.devices.list(max_items=10):
            print(item)
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
        key: Callable[[Device], Hashable | None] | None = None,
    ) -> ListPager[DevicePage, Device]:
        """List the devices of the account: every Device of ``list_devices``, page after page.

        Args:
            page_size: records per page (1 to 50, default 50).
            start_page: the first page to fetch (a failure's ``start_page`` resumes).
            max_items: stop after this many items.
            max_pages: stop after this many pages.
            concurrency: requests in flight at once after the first page.
            key: a record's identity, to drop records served again (default: its id).

        Example::

            async for item in client.aio.devices.list(max_items=10):
                print(item)
        """
        return self._client._pager(
            list_devices,
            page_size=page_size,
            start_page=start_page,
            max_items=max_items,
            max_pages=max_pages,
            concurrency=concurrency,
            key=key,
        )
