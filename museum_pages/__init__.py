"""The service's pages, plain HTML, CSS and JavaScript served as they are (PageFile), with no
build step and nothing fetched from elsewhere: the scanner page used at the entrance
(`/scan`, with a service worker that keeps the page for a reload without the network) and
the public booking page (`/shop`, served by museum_shop_page)."""

import importlib.resources


def page_policy(frame_ancestors="'none'"):
    """A page's Content-Security-Policy: it loads nothing but its own scripts and
    stylesheets, and only `frame_ancestors` may frame it (by default no site at all)."""
    return ("default-src 'self'; img-src 'self' data:; base-uri 'none'; "
            f"form-action 'none'; frame-ancestors {frame_ancestors}")


PAGE_POLICY = page_policy()


class PageFile:
    """One file of a page, shipped in museum_pages/ and read once at start.

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
