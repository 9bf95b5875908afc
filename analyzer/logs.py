"""structlog on stderr: a console renderer on a terminal, JSON lines elsewhere.

stdout stays free for reports. Every line is scrubbed of secrets as it is written, whatever
its level and wherever the secret hides in it (a value under a key that names a secret, an
error message, an exception, a nested value): one redaction here, rather than care at each
call site, so that a line added tomorrow cannot print a password. Lines of the libraries that
log through the standard library (botocore, slack_sdk) go through the same
renderer and the same redaction, from WARNING up: one format in the log, JSON where JSON is
asked for.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from analyzer.redaction import redact, secrets_from_environment

HANDLER = "ebs-analyzer"
"""The name of the handler that renders the standard library's records: replaced, not
added again, when logging is configured again."""


class _Stderr:
    """Whatever sys.stderr is when a line is written (it may be replaced after configure)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure(level: str = "info", json_lines: bool | None = None) -> None:
    if json_lines is None:
        json_lines = not sys.stderr.isatty()
    secrets_from_environment()
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if json_lines
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    shared: list[Any] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    handler = logging.StreamHandler(_Stderr())
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                redact,
                renderer,
            ],
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
        )
    )
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "name", None) == HANDLER]:
        root.removeHandler(old)
    handler.set_name(HANDLER)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            *shared,
            structlog.processors.format_exc_info,
            redact,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(file=_Stderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
