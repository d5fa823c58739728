"""The scanner page used at the entrance (`/scan`): plain HTML, CSS and JavaScript (with a
service worker that keeps the page for a reload without the network), served by the museum
service as they are (PageFile), with no build step and nothing fetched from elsewhere."""

import importlib.resources


# The page loads nothing but its own script and stylesheet, and no other site may frame it.
PAGE_POLICY = ("default-src 'self'; img-src 'self' data:; base-uri 'none'; "
               "form-action 'none'; frame-ancestors 'none'")


class PageFile:
    """One file of the scanner page, shipped in museum_pages/ and read once at start.

    Served without credentials: the files hold no data, and the page signs in by itself
    with explicit headers, so loading it costs no failed login and shows no login box."""

    auth_required = False

    def __init__(self, name, media_type, headers=None):
        self.data = importlib.resources.files("museum_pages").joinpath(name).read_bytes()
        self.media_type = media_type
        self.headers = headers or {}

    def on_get(self, req, resp):
        resp.content_type = self.media_type
        resp.data = self.data
        resp.cache_control = ["no-cache"]
        resp.set_header("Content-Security-Policy", PAGE_POLICY)
        resp.set_header("Permissions-Policy", "camera=(self)")
        resp.set_headers(self.headers)
