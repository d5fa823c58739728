"""The public booking page at /shop: its files (museum_pages/shop.html, shop.js, shop.css and
qr.js, which draws the tickets' QR codes) served only while `[shop] enabled` is true, and 404
otherwise, as if there were no page. It may be framed by the museum's own sites (`[shop]
allowed_origins`), and nowhere else; it loads nothing from elsewhere. The page asks the API
without credentials, as the shop lets any visitor (docs/shop.md).
"""

import html

from museum_http import Problem
from museum_pages import PageFile, page_policy

SHOP_FILES = {"/shop/shop.js": ("shop.js", "text/javascript; charset=utf-8"),
              "/shop/shop.css": ("shop.css", "text/css; charset=utf-8"),
              "/shop/qr.js": ("qr.js", "text/javascript; charset=utf-8")}


def shop_policy(shop):
    """The page's Content-Security-Policy: the scanner's, framed only by the page's own
    origin and the museum's sites that [shop] allowed_origins lists."""
    return page_policy(" ".join(("'self'", *shop["allowed_origins"])))


class ShopFile(PageFile):
    """One of the booking page's files; 404 while the shop is off (a reload may turn it
    on or off)."""

    def __init__(self, live, name, media_type):
        super().__init__(name, media_type)
        self.live = live  # museum_config.LiveConfig

    def on_get(self, req, resp):
        shop = self.shop()
        super().on_get(req, resp)
        resp.set_header("Content-Security-Policy", shop_policy(shop))
        resp.set_header("Permissions-Policy", "camera=()")

    def shop(self):
        shop = self.live.config["shop"]
        if not shop["enabled"]:
            raise Problem(404, "There is nothing at this path.")
        return shop


class ShopPage(ShopFile):
    """The page itself, carrying the shop's settings the script reads (data attributes
    of <body>): whether priced tickets are paid at the desk, the most tickets an order
    may have, and whether the tickets are also sent by email."""

    def __init__(self, live):
        super().__init__(live, "shop.html", "text/html; charset=utf-8")

    def on_get(self, req, resp):
        super().on_get(req, resp)
        resp.data = self.data.replace(b"<body>", self.body_tag(self.live.config), 1)

    @staticmethod
    def body_tag(config):
        shop = config["shop"]
        facts = {"pay-at-desk": shop["pay_at_desk"], "max-tickets": shop["max_tickets"],
                 "mail": mails_tickets(config)}
        attributes = " ".join(f'data-{name}="{html.escape(str(value).lower())}"'
                              for name, value in facts.items())
        return f"<body {attributes}>".encode()


def mails_tickets(config):
    """Whether an order's tickets are also sent to the buyer: `[mail] url` is set (the
    section comes with the outbox; a service without it sends none)."""
    return bool(config.settings.get("mail", {}).get("url"))


def add_shop_routes(app, live):
    """/shop and its files, on `app`."""
    app.add_route("/shop", ShopPage(live))
    for path, (name, media_type) in SHOP_FILES.items():
        app.add_route(path, ShopFile(live, name, media_type))
