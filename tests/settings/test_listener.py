"""The HTTP listener's address."""

import pytest

from analyzer import settings
from analyzer.errors import ConfigError


@pytest.mark.parametrize(
    ("listen", "address"),
    [
        ("0.0.0.0:9877", ("0.0.0.0", 9877)),
        ("127.0.0.1:0", ("127.0.0.1", 0)),
        (":9000", ("0.0.0.0", 9000)),
        ("[::1]:80", ("::1", 80)),
        ("[::]:9877", ("::", 9877)),
    ],
)
def test_the_listen_address_is_a_host_and_a_port(listen, address):
    assert settings.load({"listen": listen}).listen_address == address


@pytest.mark.parametrize(
    ("listen", "message"),
    [
        ("::1:80", "--listen: '::1:80': an IPv6 address is written in brackets, [::1]:9877"),
        ("[zz]:80", "--listen: '[zz]:80': [zz] is not an IPv6 address"),
        ("localhost:65536", "--listen: 'localhost:65536' is not HOST:PORT"),
    ],
)
def test_a_listen_address_that_is_not_one_says_how_to_write_it(listen, message):
    with pytest.raises(ConfigError) as info:
        settings.load({"listen": listen})
    assert str(info.value).startswith(message)
