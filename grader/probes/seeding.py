"""Seeding torch's global generator for a probe, at the cost of seeding it and nothing more.

`torch.manual_seed(seed)` seeds the CPU generator, then queues the same seeding for every
device module (CUDA, XPU, ...) to run if that device is ever initialised, and records the
caller's formatted stack with each queued call: far more than seeding the CPU generator
itself, most of it formatting stacks, and more in a freshly forked worker. On a torch
built without any accelerator those queues can never run, so seeding the CPU generator is
all `torch.manual_seed` does that matters; where one is built in, `torch.manual_seed` is
called as it is.

    >>> import torch
    >>> seed_global(3); a = torch.rand(2)
    >>> _ = torch.manual_seed(3); b = torch.rand(2)
    >>> bool((a == b).all())
    True
"""

from __future__ import annotations

import functools

import torch

__all__ = ["seed_global"]


@functools.lru_cache(maxsize=None)
def _accelerator_built() -> bool:
    checks = (lambda: torch.cuda._is_compiled(), lambda: torch.backends.mps.is_built(),
              lambda: torch.xpu._is_compiled(), lambda: torch._C._get_privateuse1_backend_name() != "privateuseone")
    for built in checks:
        try:
            if built():
                return True
        except Exception:  # noqa: BLE001  a torch without that module: a device we cannot rule out
            return True
    return False


def seed_global(seed: int) -> None:
    """What `torch.manual_seed(seed)` does to every generator this torch can use."""
    if _accelerator_built():
        torch.manual_seed(seed)
    else:
        torch.default_generator.manual_seed(int(seed))
