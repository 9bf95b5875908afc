"""Finding the node's EBS volumes in a sysfs tree built here, and reading a page through an
ioctl that stands in for the kernel: the command it is handed, checked field by field, and
the buffer it fills."""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from analyzer.collect import devices
from analyzer.collect.devices import Device, DeviceError, discover, read_page
from analyzer.collect.logpage import Stats, pack, parse

EBS = "Amazon Elastic Block Store"


def _controller(
    sys_root: Path, name: str, model: str, serial: str, namespace: str | None = None
) -> Path:
    """One controller as the kernel shows it: fixed-width, space-padded model and serial."""
    ctrl = sys_root / "class" / "nvme" / name
    ctrl.mkdir(parents=True)
    (ctrl / "model").write_text(f"{model:<40}\n")
    (ctrl / "serial").write_text(f"{serial:<20}\n")
    (ctrl / (namespace or f"{name}n1")).mkdir()
    return ctrl


def test_discover_lists_each_ebs_volume_once_by_volume_id(tmp_path: Path) -> None:
    sys_root = tmp_path / "sys"
    _controller(sys_root, "nvme0", EBS, "vol0bbbbbbbbbbbbbbbb")
    _controller(sys_root, "nvme1", EBS, "vol0aaaaaaaaaaaaaaaa")
    _controller(sys_root, "nvme2", "Amazon EC2 NVMe Instance Storage", "AWS1234567890ABCDEF")
    unreadable = _controller(sys_root, "nvme3", EBS, "vol0cccccccccccccccc")
    (unreadable / "serial").unlink()
    _controller(sys_root, "nvme11", EBS, "vol0aaaaaaaaaaaaaaaa")  # a second path to nvme1's
    _controller(sys_root, "nvme4", "Some Other NVMe Disk", "S3XYZ")

    with capture_logs() as logs:
        found = discover(sys_root, tmp_path / "dev")

    assert found == [
        Device("vol-0aaaaaaaaaaaaaaaa", "nvme1", tmp_path / "dev" / "nvme1n1"),
        Device("vol-0bbbbbbbbbbbbbbbb", "nvme0", tmp_path / "dev" / "nvme0n1"),
    ]
    assert [(e["event"], e["log_level"], e["controller"]) for e in logs] == [
        ("node.controller_unreadable", "warning", "nvme3")
    ]


def test_a_multipath_namespace_names_the_subsystems_block_device(tmp_path: Path) -> None:
    _controller(tmp_path, "nvme2", EBS, "vol0aaaaaaaaaaaaaaaa", namespace="nvme1c2n1")
    assert [d.path for d in discover(tmp_path, Path("/dev"))] == [Path("/dev/nvme1n1")]


def test_an_ebs_controller_without_a_volume_serial_is_skipped_and_logged(tmp_path: Path) -> None:
    _controller(tmp_path, "nvme1", EBS, "not-a-volume")
    _controller(tmp_path, "nvme2", EBS, "vol-0aaaaaaaaaaaaaaaa")  # already dashed: still read
    _controller(tmp_path, "nvme3", EBS, "vol1a2b3c4d")  # the old 8-digit form
    with capture_logs() as logs:
        found = discover(tmp_path)
    assert [d.volume_id for d in found] == ["vol-0aaaaaaaaaaaaaaaa", "vol-1a2b3c4d"]
    assert [(e["event"], e["serial"]) for e in logs] == [("node.serial_unknown", "not-a-volume")]


def test_no_nvme_at_all_is_no_volumes(tmp_path: Path) -> None:
    assert discover(tmp_path) == []


class FakeKernel:
    """The NVMe admin ioctl: records the command, copies `page` into the buffer it points to
    and returns `status`, or raises `error`."""

    def __init__(self, page: bytes = b"", status: int = 0, error: OSError | None = None):
        self.page = page
        self.status = status
        self.error = error
        self.calls: list[tuple[int, int, bytes]] = []

    def __call__(self, fd: int, request: int, arg: bytearray, mutate: bool) -> int:
        assert mutate and isinstance(arg, bytearray)
        os.fstat(fd)  # an open descriptor
        self.calls.append((fd, request, bytes(arg)))
        if self.error is not None:
            raise self.error
        addr = struct.unpack_from("<Q", arg, 24)[0]
        ctypes.memmove(addr, self.page, len(self.page))
        return self.status


@pytest.fixture
def device(tmp_path: Path) -> Device:
    node = tmp_path / "nvme1n1"
    node.write_bytes(b"")  # os.open needs something to open
    return Device("vol-0abc", "nvme1", node)


def test_read_page_sends_get_log_page_0xd0_for_4096_bytes(device: Device) -> None:
    page = pack(Stats(read_ops=42, queue_length=3))
    kernel = FakeKernel(page)

    assert read_page(device, ioctl=kernel) == page
    assert parse(read_page(device, ioctl=kernel)).read_ops == 42

    (_, request, command), _ = kernel.calls
    assert request == 0xC0484E41
    assert len(command) == 72
    (
        opcode,
        flags,
        rsvd1,
        nsid,
        cdw2,
        cdw3,
        metadata,
        addr,
        metadata_len,
        data_len,
        cdw10,
        *cdw11_to_15,
        timeout_ms,
        result,
    ) = struct.unpack("<BBHIIIQQIIIIIIIIII", command)
    assert opcode == 0x02
    assert nsid == 1
    assert data_len == 4096
    assert cdw10 == 0xD0 | (1023 << 16) == 0x03FF00D0
    assert addr != 0
    assert (flags, rsvd1, cdw2, cdw3, metadata, metadata_len, timeout_ms, result) == (0,) * 8
    assert cdw11_to_15 == [0] * 5


def test_the_descriptor_is_closed_even_when_the_ioctl_fails(device: Device) -> None:
    kernel = FakeKernel(error=OSError(errno.EIO, "Input/output error"))
    with pytest.raises(DeviceError):
        read_page(device, ioctl=kernel)
    (fd, _, _) = kernel.calls[0]
    with pytest.raises(OSError):
        os.fstat(fd)


@pytest.mark.parametrize(
    ("error", "message", "code"),
    [
        (
            PermissionError(errno.EACCES, "Permission denied"),
            "reading the NVMe log page needs CAP_SYS_ADMIN and read access to the device "
            "(run as root with the SYS_ADMIN capability)",
            errno.EACCES,
        ),
        (
            PermissionError(errno.EPERM, "Operation not permitted"),
            "reading the NVMe log page needs CAP_SYS_ADMIN",
            errno.EPERM,
        ),
        (
            FileNotFoundError(errno.ENOENT, "No such file or directory"),
            "the device is gone (the volume was detached?)",
            errno.ENOENT,
        ),
        (OSError(errno.ENODEV, "No such device"), "the device is gone", errno.ENODEV),
        (OSError(errno.ENXIO, "No such device or address"), "the device is gone", errno.ENXIO),
        (OSError(errno.EIO, "Input/output error"), "Input/output error", errno.EIO),
    ],
)
def test_an_os_error_says_which_volume_and_what_to_do(
    device: Device, error: OSError, message: str, code: int
) -> None:
    with pytest.raises(DeviceError) as raised:
        read_page(device, ioctl=FakeKernel(error=error))
    assert str(raised.value).startswith(f"vol-0abc ({device.path}): {message}")
    assert "\n" not in str(raised.value)
    assert raised.value.errno == code


def test_a_device_node_that_is_not_there_is_gone(tmp_path: Path) -> None:
    missing = Device("vol-0abc", "nvme1", tmp_path / "nvme1n1")
    with pytest.raises(DeviceError, match=r"the device is gone \(the volume was detached\?\)"):
        read_page(missing, ioctl=FakeKernel())


def test_a_non_zero_nvme_status_is_an_error(device: Device) -> None:
    with pytest.raises(DeviceError) as raised:
        read_page(device, ioctl=FakeKernel(pack(Stats()), status=0x4002))
    assert str(raised.value) == (
        f"vol-0abc ({device.path}): reading log page 0xD0 failed with NVMe status 0x4002"
    )
    assert raised.value.errno is None


def test_the_published_figures() -> None:
    """`_IOWR('N', 0x41, struct nvme_admin_cmd)` worked out, and the command's size."""
    iowr = (3 << 30) | (72 << 16) | (ord("N") << 8) | 0x41
    assert devices.NVME_IOCTL_ADMIN_CMD == iowr == 0xC0484E41
    assert devices.ADMIN_COMMAND.size == 72
    assert devices.GET_LOG_PAGE == 0x02
    assert devices.NAMESPACE == 1
    assert devices.CDW10 == 0xD0 | ((4096 // 4 - 1) << 16)
    assert devices.EBS_MODEL == "Amazon Elastic Block Store"
    assert devices.INSTANCE_STORE_MODEL == "Amazon EC2 NVMe Instance Storage"
