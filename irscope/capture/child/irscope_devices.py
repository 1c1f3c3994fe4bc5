"""The device a compile-only run pretends to have, one entry per target.

With no GPU, ``torch.cuda.get_device_properties()``, ``get_device_capability()``
and Triton's driver (its shared-memory limit, its SM count) answer from this
table, so code that sizes grids or picks configs from the device runs as on
that GPU. docs/user-guide.md ("The device in a compile-only run") lists it.

Standard library only: it runs inside the captured script's process, and
irscope's own code reads the same table (``irscope.capture.child.irscope_devices``).
"""

from collections import namedtuple

KIB = 1024
GIB = 1024 ** 3
GB = 1000 ** 3

Device = namedtuple("Device", [
    "target",  # the table's key: sm_90, gfx942...
    "name",  # what torch.cuda.get_device_name() says
    "major", "minor",  # torch.cuda.get_device_capability()
    "multi_processor_count",  # SMs (NVIDIA) or CUs (AMD)
    "total_memory",  # bytes
    "shared_memory_per_block_optin",  # the most shared memory (LDS) one block may use: Triton's max_shared_mem
    "shared_memory_per_multiprocessor",
    "max_threads_per_block",
    "max_threads_per_multi_processor",
    "regs_per_multiprocessor",
    "warp_size",
    "L2_cache_size",  # bytes
    "clock_rate",  # SM clock, kHz
    "memory_clock_rate",  # kHz
    "memory_bus_width",  # bits
    "gcnArchName",  # AMD: the full architecture name; NVIDIA: ""
])


def _nv(sm, name, sms, memory, smem_block_kib, smem_sm_kib, threads_sm, l2_mib, clock_mhz, mem_mhz, bus):
    return Device("sm_%d" % sm, name, sm // 10, sm % 10, sms, memory, smem_block_kib * KIB, smem_sm_kib * KIB, 1024,
                  threads_sm, 64 * KIB, 32, l2_mib * KIB * KIB, clock_mhz * 1000, mem_mhz * 1000, bus, "")


def _amd(arch, name, major, minor, cus, memory, lds_kib, l2_mib, clock_mhz, mem_mhz, bus):
    return Device(arch, name, major, minor, cus, memory, lds_kib * KIB, lds_kib * KIB, 1024, 2048, 128 * KIB, 64,
                  l2_mib * KIB * KIB, clock_mhz * 1000, mem_mhz * 1000, bus, arch + ":sramecc+:xnack-")


# One GPU per target: the data-centre part most often compiled for. Shared memory per
# block and per SM agree with irscope.core.occupancy's table; the other figures are the
# vendors' published specifications (memory in their units: GB = 10^9 bytes).
DEVICES = {d.target: d for d in (
    _nv(70, "Tesla V100-SXM2-32GB", 80, 32 * GIB, 96, 96, 2048, 6, 1530, 877, 4096),
    _nv(75, "Tesla T4", 40, 16 * GIB, 64, 64, 1024, 4, 1590, 5001, 256),
    _nv(80, "NVIDIA A100-SXM4-80GB", 108, 80 * GIB, 163, 164, 2048, 40, 1410, 1593, 5120),
    _nv(86, "NVIDIA A10", 72, 24 * GIB, 99, 100, 1536, 6, 1695, 6251, 384),
    _nv(89, "NVIDIA L40S", 142, 48 * GIB, 99, 100, 1536, 96, 2520, 9001, 384),
    _nv(90, "NVIDIA H200", 132, 141 * GB, 227, 228, 2048, 60, 1980, 3201, 5120),
    _nv(100, "NVIDIA B200", 148, 180 * GB, 227, 228, 2048, 126, 1965, 3996, 8192),
    _nv(120, "NVIDIA GeForce RTX 5090", 170, 32 * GIB, 99, 100, 1536, 96, 2407, 14001, 512),
    _amd("gfx90a", "AMD Instinct MI250X", 9, 0, 110, 64 * GIB, 64, 8, 1700, 1600, 4096),
    _amd("gfx942", "AMD Instinct MI300X", 9, 4, 304, 192 * GIB, 64, 4, 2100, 1300, 8192),
    _amd("gfx950", "AMD Instinct MI355X", 9, 5, 256, 288 * GB, 160, 4, 2400, 2000, 8192),
)}


def device_for(target):
    """The table's device for ``target`` (``sm_90``, ``sm_90a``, ``gfx942``...).

    A target with no entry of its own takes the entry of the nearest lower
    architecture of the same vendor (sm_87 -> sm_86), with its own name,
    capability and architecture; below the table, the lowest entry."""
    t = target.strip().lower()
    if t in DEVICES:
        return DEVICES[t]
    if t.startswith("gfx"):
        same = sorted((k for k in DEVICES if k.startswith("gfx")), key=_gfx_number)
        lower = [k for k in same if _gfx_number(k) <= _gfx_number(t)]
        base = DEVICES[(lower or same)[-1 if lower else 0]]
        return base._replace(target=t, name="AMD GPU %s" % t, gcnArchName=t)
    digits = t[3:] if t.startswith("sm_") else t[2:] if t.startswith("sm") else t
    digits = digits.rstrip("af")
    if not digits.isdigit():
        raise ValueError("unknown target %r (expected e.g. sm_90, sm_80, gfx942)" % target)
    sm = int(digits)
    if "sm_%d" % sm in DEVICES:
        return DEVICES["sm_%d" % sm]
    same = sorted((k for k in DEVICES if k.startswith("sm_")), key=lambda k: int(k[3:]))
    lower = [k for k in same if int(k[3:]) <= sm]
    base = DEVICES[lower[-1] if lower else same[0]]
    return base._replace(target="sm_%d" % sm, name="NVIDIA GPU sm_%d" % sm, major=sm // 10, minor=sm % 10)


def _gfx_number(arch):
    try:
        return int(arch[3:], 16)
    except ValueError:
        return 0


class DeviceProperties:
    """What ``torch.cuda.get_device_properties()`` returns, for a table device."""

    def __init__(self, device):
        self._device = device
        self.shared_memory_per_block = min(48 * KIB, device.shared_memory_per_block_optin)
        self.is_integrated = 0
        self.is_multi_gpu_board = 0
        self.uuid = "00000000-0000-0000-0000-000000000000"
        self.pci_bus_id = self.pci_device_id = self.pci_domain_id = 0

    def __getattr__(self, name):
        """The table's fields: ``name``, ``major``, ``multi_processor_count``..."""
        if name.startswith("_") or name == "target":
            raise AttributeError(name)
        return getattr(self._device, name)

    def __repr__(self):
        return ("_CudaDeviceProperties(name='%s', major=%d, minor=%d, total_memory=%dMB, multi_processor_count=%d, "
                "irscope_compile_only=True)" % (self.name, self.major, self.minor, self.total_memory // (1024 * 1024),
                                                self.multi_processor_count))


def patch_torch_cuda(torch, device):
    """Make ``torch.cuda``'s device queries answer for ``device`` (one GPU, index 0).

    Allocations stay with torch's fake tensors. Streams and events are do-nothing
    stand-ins (:func:`_stand_in_streams`): there is no work to order or wait for."""
    cuda = torch.cuda
    props = DeviceProperties(device)

    def _check(device):
        i = device
        if isinstance(device, str):  # "cuda", "cuda:0"
            i = int(device.split(":", 1)[1]) if ":" in device else None
        elif isinstance(device, torch.device):
            i = device.index
        if i not in (None, 0, -1):
            raise AssertionError("Invalid device id: irscope's compile-only run has one device (0), not %r" % (i,))

    def get_device_properties(device=None):
        _check(device)
        return props

    def get_device_capability(device=None):
        _check(device)
        return (props.major, props.minor)

    def get_device_name(device=None):
        _check(device)
        return props.name

    def mem_get_info(device=None):
        _check(device)
        return (props.total_memory, props.total_memory)

    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    cuda.current_device = lambda: 0
    cuda.set_device = lambda device: _check(device)

    def exchange_device(device):
        # `with torch.cuda.device(i)` / `device_of(x)`: the previous device, always 0
        if device is None or device < 0:
            return -1
        _check(device)
        return 0

    cuda._exchange_device = exchange_device
    cuda._maybe_exchange_device = exchange_device
    cuda.get_device_properties = get_device_properties
    cuda.get_device_capability = get_device_capability
    cuda.get_device_name = get_device_name
    cuda.mem_get_info = mem_get_info
    cuda.get_arch_list = lambda: ["sm_%d%d" % (props.major, props.minor)] if not props.gcnArchName else [device.target]
    # Scripts written for a GPU synchronise before timing or checking; with no
    # device there is nothing to wait for.
    cuda.synchronize = lambda *a, **k: None
    _stand_in_streams(torch)
    return props


def _stand_in_streams(torch):
    """``torch.cuda.Stream``, ``Event``, ``current_stream``, ``set_stream`` and
    ``stream(...)`` that do nothing: scripts written for a GPU make a stream before a
    benchmark (Triton's tutorial 02) or time with events. An event's elapsed time is
    the stand-in benchmarker's 1.0 ms (irscope_fake_driver: every timing is fake)."""
    import contextlib

    cuda = torch.cuda
    dev = torch.device("cuda", 0)

    class Event:
        def __init__(self, enable_timing=False, blocking=False, interprocess=False, **kwargs):
            self.enable_timing = enable_timing

        def record(self, stream=None):
            return None

        def wait(self, stream=None):
            return None

        def query(self):
            return True

        def synchronize(self):
            return None

        def elapsed_time(self, end_event):
            return 1.0

    class Stream:
        def __init__(self, device=None, priority=0, **kwargs):
            self.device = dev
            self.priority = priority
            self.cuda_stream = 0
            self.stream_id = 0
            self.device_index = 0
            self.device_type = 1  # DeviceType.CUDA

        def synchronize(self):
            return None

        def query(self):
            return True

        def wait_stream(self, stream):
            return None

        def wait_event(self, event):
            return None

        def record_event(self, event=None):
            event = event or Event()
            event.record(self)
            return event

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def __eq__(self, other):
            return isinstance(other, Stream)

        def __hash__(self):
            return 0

    default = Stream()
    cuda.Stream = Stream
    cuda.Event = Event
    cuda.current_stream = lambda device=None: default
    cuda.default_stream = lambda device=None: default
    cuda.set_stream = lambda stream: None
    cuda.stream = lambda stream=None: contextlib.nullcontext(stream)
