"""Errors that end a command with a one-line message and a documented exit code."""

from __future__ import annotations


class AnalyzerError(Exception):
    exit_code = 1


class ConfigError(AnalyzerError):
    """Invalid configuration or rule files: the message names the file, the rule and the problem."""

    exit_code = 2


class AwsAccessError(AnalyzerError):
    """AWS cannot be reached or refuses access: the message names the call and the reason."""

    exit_code = 3

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        """AWS's error code where AWS answered; None where it could not be reached."""


class AwsCallError(AnalyzerError):
    """One AWS call failed for a reason that may pass (throttling past retries, a 5xx)."""

    exit_code = 3

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class UnreadableError(AnalyzerError):
    """Nothing could be read: not one of the node's volumes answered its statistics page (the
    message names the device and why)."""

    exit_code = 3
