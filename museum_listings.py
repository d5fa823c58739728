"""The special events' listing pages, kept serialized while no event changes: the listing
is the service's most asked read, and a page is the same for everyone who asks."""

import threading

from museum_http import to_json


class ListingCache:
    """Serialized listing pages, kept while the store's `events_version` stays the same.

    Every event change bumps that version in its own transaction, and each lookup reads it
    first (one cheap query), so no page outlives a write, from this instance or another
    one sharing the database. A page is cached under the version read before its query.
    """

    LIMIT = 512

    def __init__(self, store):
        self.store = store
        self._version = None
        self._pages = {}
        self._lock = threading.Lock()

    def page(self, start, end, offset, limit):
        """(JSON bytes of the page, total in the window)."""
        version = self.store.events_version()
        key = (start, end, offset, limit)
        with self._lock:
            if version != self._version:
                self._version, self._pages = version, {}
            cached = self._pages.get(key)
        if cached is None:
            events, total = self.store.list_events(start, end, offset, limit)
            cached = to_json(events), total
            with self._lock:
                if version == self._version and len(self._pages) < self.LIMIT:
                    self._pages[key] = cached
        return cached
