"""The desk page (`/desk`): the museum's ticket desk in a browser, for the desk and admin
roles. It sells to a walk-in on the `desk` channel (POST /v1.1/orders, paid cash, card or
free, no email needed), shows and prints the tickets with their QR codes, and finds and
voids a ticket. It is plain HTML, CSS and JavaScript in museum_pages/, served as the
scanner page is (museum_pages.PageFile): no build step, nothing fetched from elsewhere, and
it signs in by itself, so no browser login box ever shows.
"""

from museum_pages import PageFile

# Each path of the page with its file in museum_pages/ and its media type.
DESK_PAGE_FILES = {
    "/desk": ("desk.html", "text/html; charset=utf-8"),
    "/desk/desk.js": ("desk.js", "text/javascript; charset=utf-8"),
    "/desk/desk.css": ("desk.css", "text/css; charset=utf-8"),
}


def add_desk_page(app):
    """The desk page's files, each on its path of `app`."""
    for path, (name, media_type) in DESK_PAGE_FILES.items():
        app.add_route(path, PageFile(name, media_type))
