"""`museum` whose outbox sender never starts: every message a request queues stays queued.
run.py's outbox case measures what a sale with mail and webhooks costs the request itself
(the rows written in its transaction), apart from their delivery later.

    python benchmarks/unsent.py serve --config museum.ini --port 0
"""

import sys

import museum_cli
import museum_outbox

museum_outbox.Sender.run_in_background = lambda sender, stop: None

if __name__ == "__main__":
    sys.exit(museum_cli.main())
