"""The ceiling: a bare Falcon app that answers every request with a constant small JSON object.

`benchmarks/run.py` serves it with waitress and the same thread count as the museum
service, so the ratio service ÷ baseline isolates what the service itself costs (routing,
auth, storage, serialisation) from what the WSGI stack and the machine cost.

    python benchmarks/baseline.py --host 127.0.0.1 --port 0 --threads 4

It logs `listening on http://HOST:PORT` to stderr once bound and stops cleanly on SIGTERM.
"""

import argparse
import logging
import signal
import sys

import falcon
import waitress

log = logging.getLogger("baseline")


def answer(req, resp, **params):
    """Any method, any path: the same JSON object, as cheap as Falcon can make it."""
    resp.media = {"status": "ok"}


def create_app():
    app = falcon.App()
    # A sink catches every path and method, so each scenario's request (GET with an id,
    # POST with a body) reaches the baseline unchanged.
    app.add_sink(answer, prefix="/")
    return app


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--threads", type=int, default=4)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    # Under a 16-connection load waitress warns "Task queue depth is N" on nearly every
    # request; writing those lines would measure the log, not Falcon.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    server = waitress.create_server(
        create_app(), host=args.host, port=args.port, threads=args.threads)
    # SIGTERM's default action kills the process mid-response; exiting through
    # SystemExit lets waitress close its sockets first.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    log.info("listening on http://%s:%s", server.effective_host, server.effective_port)
    try:
        server.run()
    finally:
        server.close()


if __name__ == "__main__":
    main()
