# museum:app under gunicorn; docs/production.md says how. Install as
# /etc/museum/gunicorn.conf.py, then: gunicorn -c /etc/museum/gunicorn.conf.py museum:app
bind = "unix:/run/museum/museum.sock"
workers = 4
# On SIGTERM the workers answer the requests under way, for at most 10 s.
graceful_timeout = 10
# The museum's log lines with a time, a level and a logger, on stderr (the journal) beside
# gunicorn's own; without this its INFO lines are dropped and its warnings bare. The access
# log is the museum's own ([log] access), so gunicorn's stays off.
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "museum": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "formatter": "museum",
                   "stream": "ext://sys.stderr"},
    },
    "root": {"handlers": ["stderr"], "level": "WARNING"},
    "loggers": {
        "museum": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "gunicorn.error": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
    },
}
