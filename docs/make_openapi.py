"""Write docs/openapi.json, the interface description the service serves, as a file to read
and to diff between versions.

    .venv/bin/python docs/make_openapi.py

writes the document that `museum.openapi_description()` assembles from the app's resources
(the one `GET /v1.1/openapi.json` answers and `museum openapi` prints), in the layout
`museum openapi` prints it. tests/test_openapi_file.py fails while the file differs from
what this writes, so a change to any resource's description comes with its file. The file
lives in docs/, beside the API page that explains it and the configuration reference made the
same way, not among the package's modules at the top.
"""

import json
from pathlib import Path

import museum

FILE = Path(__file__).resolve().parent / "openapi.json"


def text():
    """The file's content: the document as `museum openapi` prints it."""
    return json.dumps(museum.openapi_description(), indent=2) + "\n"


def main():
    FILE.write_text(text(), encoding="utf-8")


if __name__ == "__main__":
    main()
