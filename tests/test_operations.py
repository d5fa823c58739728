"""What an operator relies on while the service runs for years: a build that names its
version, a database and a socket served by one process only, files that stay the service
user's, contacts that expire however the app is hosted, and logs that can be followed."""

import museum
from openapi_document import DOCUMENT


# -- versions ---------------------------------------------------------------------------

def test_health_names_the_software_and_the_interface_version(client):
    res = client.get("/healthz", status=200)
    assert res.json == {"status": "ok", "version": "1.2.0", "interface": "1.1.1"}


def test_the_openapi_document_keeps_the_interface_version():
    assert DOCUMENT["info"]["version"] == museum.INTERFACE_VERSION == "1.1.1"
    assert museum.__version__ == "1.2.0"

