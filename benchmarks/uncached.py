"""`museum` with a listing cache that keeps nothing: every listing is a cache miss, as the
first request for a page is. run.py's scale cases measure the listing query this way.

    python benchmarks/uncached.py serve --config museum.ini --port 0

A miss still reads `events_version` first, exactly as in `museum serve`; only the keeping
of the page is skipped.
"""

import sys

import museum_cli
import museum_events

museum_events.ListingCache.LIMIT = 0

if __name__ == "__main__":
    sys.exit(museum_cli.main())
