"""The ceiling: a bare Falcon app on waitress that answers every request with a constant
small JSON object, so service ÷ baseline isolates what the service itself costs (routing,
auth, storage, serialisation) from what the WSGI stack and the machine cost.

    python benchmarks/baseline.py --threads 4

It logs `listening on http://127.0.0.1:PORT` once bound and stops cleanly on SIGTERM.
"""

import argparse
import logging
import signal
import sys

import falcon
import waitress


def answer(req, resp, **params):
    resp.media = {"status": "ok"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=4)
    threads = parser.parse_args().threads
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    # Under 16 connections waitress warns "Task queue depth is N" on nearly every request;
    # writing those lines would measure the log, not Falcon.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    app = falcon.App()
    app.add_sink(answer, prefix="/")  # every method and path: each scenario's request as sent
    server = waitress.create_server(app, host="127.0.0.1", port=0, threads=threads)
    # SIGTERM's default action kills mid-response; SystemExit lets waitress close first.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    logging.getLogger("baseline").info("listening on http://127.0.0.1:%s", server.effective_port)
    try:
        server.run()
    finally:
        server.close()


if __name__ == "__main__":
    main()
