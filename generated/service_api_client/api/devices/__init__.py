"""Contains endpoint functions for accessing the API, and ``DevicesResource``: its list
endpoints bound to a client, as ``client.devices``."""

from collections.abc import AsyncGenerator, Generator

from ...client import AuthenticatedClient, Client, ListPage
from ...models.device import Device
from ...models.device_page import DevicePage
from ...types import Unset
from . import list_devices


class DevicesResource:
    """The list endpoints of ``devices``, bound to a client: ``client.devices``.

    ``list`` / ``alist`` send one request with any client. ``iterate`` / ``aiterate`` (the
    items) and ``pages`` / ``apages`` go page after page through the client's paginator,
    which ``service_api.Client`` supplies (the plain generated client raises TypeError).

    Example::

        first = client.devices.list(page_size=10)
        for item in client.devices.iterate(max_items=100):
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
    ) -> DevicePage:
        """List the devices of the account: one page, as ``list_devices.sync_or_raise``.

        Example::

            page = client.devices.list(page_number=1)
        """
        return list_devices.sync_or_raise(
            client=self._client,
            page_number=page_number,
            page_size=page_size,
        )

    async def alist(
        self,
        *,
        page_number: int | Unset = 1,
        page_size: int | Unset = 50,
    ) -> DevicePage:
        """List the devices of the account: one page, as ``list_devices.asyncio_or_raise``.

        Example::

            page = await client.devices.alist(page_number=1)
        """
        return await list_devices.asyncio_or_raise(
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
    ) -> Generator[Device, None, None]:
        """Every Device of ``list_devices``, page after page (needs ``service_api.Client``).

        Example::

            for item in client.devices.iterate(max_items=100):
                print(item)
        """
        return self._client._paginator().items(
            list_devices,
            DevicePage,
            Device,
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
    ) -> AsyncGenerator[Device, None]:
        """Async twin of ``iterate``.

        Example::

            async for item in client.devices.aiterate(max_items=100):
                print(item)
        """
        return self._client._paginator().aitems(
            list_devices,
            DevicePage,
            Device,
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
    ) -> Generator[ListPage[DevicePage, Device], None, None]:
        """The pages of ``list_devices`` in order (needs ``service_api.Client``).

        Example::

            for page in client.devices.pages(max_pages=2):
                print(page.number, len(page.items))
        """
        return self._client._paginator().pages(
            list_devices,
            DevicePage,
            Device,
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
    ) -> AsyncGenerator[ListPage[DevicePage, Device], None]:
        """Async twin of ``pages``.

        Example::

            async for page in client.devices.apages(max_pages=2):
                print(page.number, len(page.items))
        """
        return self._client._paginator().apages(
            list_devices,
            DevicePage,
            Device,
            page_size=page_size,
            start_page=start_page,
            max_items=max_items,
            max_pages=max_pages,
            concurrency=concurrency,
            params={},
        )
