"""The log is one format: the libraries' own lines (APScheduler, botocore) come out as JSON
beside the daemon's."""

from __future__ import annotations

import json
import logging

import structlog

from analyzer import logs


def test_library_lines_are_json_lines_too(capsys) -> None:
    logs.configure("info", json_lines=True)
    logging.getLogger("apscheduler.executors.default").warning(
        "Run time of job %r was missed by %s", "cycle", "0:00:05"
    )
    logging.getLogger("apscheduler.scheduler").info("Scheduler started")  # below WARNING
    structlog.get_logger().info("poll.completed", volumes=1)
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(e["event"], e["level"]) for e in lines] == [
        ("Run time of job 'cycle' was missed by 0:00:05", "warning"),
        ("poll.completed", "info"),
    ]
    assert lines[0]["logger"] == "apscheduler.executors.default"
    logs.configure("info", json_lines=True)  # again: one handler, not two
    assert sum(h.get_name() == logs.HANDLER for h in logging.getLogger().handlers) == 1
