"""The node's EBS volumes, found in sysfs, and each one's statistics page read by ioctl.

The EBS NVMe controller names itself in sysfs: `model` "Amazon Elastic Block Store" and
`serial` the volume id without its dash (ebsnvme `AMZN_NVME_EBS_MN` and `_get_volume_id`; CW
agent `internal/ebs/scraper.go` `Model` and `Identifier`; the CSI driver maps lsblk's SERIAL the
same way). The page is fetched with the NVMe admin passthrough ioctl, which needs
CAP_SYS_ADMIN, on the namespace block device (/dev/nvme1n1): the CSI driver opens the mounted
volume's block device, ebsnvme whatever device it is given; the CW agent tries each /dev entry
of the controller in turn, the controller's own node (/dev/nvme1) first.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import structlog

from analyzer.collect.logpage import LOG_ID, PAGE_BYTES

log = structlog.get_logger(__name__)

EBS_MODEL = "Amazon Elastic Block Store"
"""ebsnvme `AMZN_NVME_EBS_MN`; CW agent `internal/ebs/scraper.go` `Model()`."""
INSTANCE_STORE_MODEL = "Amazon EC2 NVMe Instance Storage"
"""CW agent `internal/instancestore/scraper.go` `Model()`: left alone here."""

NVME_IOCTL_ADMIN_CMD = 0xC0484E41
"""`_IOWR('N', 0x41, struct nvme_admin_cmd)` (linux/nvme_ioctl.h): read-write (3 << 30), the
72-byte command (72 << 16), type 'N' (0x4E << 8), number 0x41. The CSI driver, the CW agent
(`nvmeIoctlAdminCmd`) and ebsnvme use this number."""
ADMIN_COMMAND = struct.Struct("<BBHIIIQQIIIIIIIIII")
"""`struct nvme_passthru_cmd` (linux/nvme_ioctl.h; `nvmePassthruCommand` in the CSI driver and
the CW agent): opcode u8, flags u8, rsvd1 u16, nsid u32, cdw2 u32, cdw3 u32, metadata u64, addr
u64, metadata_len u32, data_len u32, cdw10..cdw15 u32, timeout_ms u32, result u32: 72 bytes."""
GET_LOG_PAGE = 0x02
"""The NVMe admin opcode Get Log Page (ebsnvme `NVME_GET_LOG_PAGE`; CSI driver, CW agent)."""
NAMESPACE = 1
"""An EBS volume is namespace 1 of its controller (nsid 1 in all three readers)."""
CDW10 = LOG_ID | ((PAGE_BYTES // 4 - 1) << 16)
"""The log id in bits 0-7, the number of dwords to read *less one* in bits 16-31 (NVMe base
specification, Get Log Page, NUMDL is zero-based): 1023 for 4,096 bytes, as the CW agent
sends. The CSI driver and ebsnvme send 1024 (4,100 bytes) with a smaller or equal buffer
length, which the device tolerates; the exact figure is asked for here."""

_VOLUME_SERIAL = re.compile(r"vol-?([0-9a-f]{8}|[0-9a-f]{17})")
"""A volume id as the controller's serial writes it: "vol0abc…", the dash left out."""
_NAMESPACE_ENTRY = re.compile(r"nvme(\d+)(?:c\d+)?n1")
"""The controller's namespace 1 in sysfs: `nvme1n1`, or `nvme0c1n1` under native NVMe
multipath, whose block device is then `nvme0n1`."""
_GONE = frozenset({errno.ENOENT, errno.ENODEV, errno.ENXIO})
_REFUSED = frozenset({errno.EACCES, errno.EPERM})

Ioctl = Callable[[int, int, bytearray, bool], int]
"""`fcntl.ioctl`'s form with a mutable buffer: returns what the ioctl returned."""


@dataclass(frozen=True, slots=True)
class Device:
    """An attached EBS volume: its id, its NVMe controller (`nvme1`) and the device node the
    statistics ioctl goes to."""

    volume_id: str
    controller: str
    path: Path

    @property
    def where(self) -> str:
        """How messages name it: `vol-0abc (/dev/nvme1n1)`."""
        return f"{self.volume_id} ({self.path})"


class DeviceError(Exception):
    """A device's statistics could not be read: the message says which, why and what to do."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.errno = code
        """The OS error number where the OS refused; None for an NVMe status."""


def _number(controller: str) -> int:
    digits = controller.removeprefix("nvme")
    return int(digits) if digits.isdigit() else -1


def discover(sys_root: Path = Path("/sys"), dev_root: Path = Path("/dev")) -> list[Device]:
    """The EBS volumes attached to this node, by volume id, each once (a volume reached by two
    controllers is read through the lower-numbered one). Instance store and other NVMe
    devices are left alone; a controller whose files cannot be read is skipped, logged."""
    found: dict[str, Device] = {}
    controllers = sorted(
        (sys_root / "class" / "nvme").glob("nvme*"), key=lambda p: (_number(p.name), p.name)
    )
    for ctrl in controllers:
        try:
            model = (ctrl / "model").read_text(encoding="utf-8", errors="replace").strip()
            if model != EBS_MODEL:
                continue
            serial = (ctrl / "serial").read_text(encoding="utf-8", errors="replace").strip()
            namespaces = sorted(
                (m[1] for e in ctrl.iterdir() if (m := _NAMESPACE_ENTRY.fullmatch(e.name))),
                key=int,
            )
        except OSError as exc:
            log.warning("node.controller_unreadable", controller=ctrl.name, error=str(exc))
            continue
        if not (match := _VOLUME_SERIAL.fullmatch(serial)):
            log.warning("node.serial_unknown", controller=ctrl.name, serial=serial)
            continue
        volume_id = f"vol-{match[1]}"
        block = f"nvme{namespaces[0]}n1" if namespaces else f"{ctrl.name}n1"
        found.setdefault(volume_id, Device(volume_id, ctrl.name, dev_root / block))
    return [found[v] for v in sorted(found)]


def read_page(device: Device, ioctl: Ioctl = fcntl.ioctl) -> bytes:
    """The device's 4,096-byte statistics page, as the controller returned it (`logpage.parse`
    reads it). Raises DeviceError saying why it could not be read."""
    buffer = ctypes.create_string_buffer(PAGE_BYTES)
    command = bytearray(
        ADMIN_COMMAND.pack(
            GET_LOG_PAGE,
            0,  # flags
            0,  # rsvd1
            NAMESPACE,
            0,  # cdw2
            0,  # cdw3
            0,  # metadata
            ctypes.addressof(buffer),
            0,  # metadata_len
            PAGE_BYTES,
            CDW10,
            0,  # cdw11
            0,  # cdw12
            0,  # cdw13
            0,  # cdw14
            0,  # cdw15
            0,  # timeout_ms: the driver's default
            0,  # result
        )
    )
    try:
        fd = os.open(device.path, os.O_RDONLY)
        try:
            status = ioctl(fd, NVME_IOCTL_ADMIN_CMD, command, True)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _os_error(device, exc) from exc
    if status != 0:
        raise DeviceError(
            f"{device.where}: reading log page 0x{LOG_ID:02X} failed with NVMe status 0x{status:X}"
        )
    return buffer.raw


def _os_error(device: Device, exc: OSError) -> DeviceError:
    if exc.errno in _REFUSED:
        why = (
            "reading the NVMe log page needs CAP_SYS_ADMIN and read access to the device "
            "(run as root with the SYS_ADMIN capability)"
        )
    elif exc.errno in _GONE:
        why = "the device is gone (the volume was detached?)"
    else:
        why = exc.strerror or str(exc)
    return DeviceError(f"{device.where}: {why}", exc.errno)
