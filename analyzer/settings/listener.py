"""Where the daemon serves /metrics, /healthz and /readyz."""

from __future__ import annotations

import ipaddress
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator


class Listener(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    listen: str = "0.0.0.0:9877"
    """HOST:PORT for /metrics, /healthz and /readyz."""

    @field_validator("listen", mode="before")
    @classmethod
    def _port_alone(cls, value: Any) -> Any:
        """`listen: 9877` in YAML is a number: checked as the text it was written as."""
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("listen")
    @classmethod
    def _listen(cls, value: str) -> str:
        host, sep, port = value.rpartition(":")
        if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
            raise ValueError(
                f"{value!r} is not HOST:PORT: write the address and the port, such as "
                f"0.0.0.0:{port if port.isdigit() else 9877} (every interface) or "
                "127.0.0.1:9877"
            )
        if ":" in host and not (host.startswith("[") and host.endswith("]")):
            raise ValueError(f"{value!r}: an IPv6 address is written in brackets, [::1]:9877")
        if host.startswith("["):
            try:
                ipaddress.IPv6Address(host[1:-1])
            except ValueError:
                raise ValueError(f"{value!r}: {host} is not an IPv6 address") from None
        return value

    @property
    def listen_address(self) -> tuple[str, int]:
        host, _, port = self.listen.rpartition(":")
        return host.strip("[]") or "0.0.0.0", int(port)
