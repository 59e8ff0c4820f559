"""Probes: small functions that run a submission's code and return plain observations.

A probe is `probe(mod, *args, **kwargs)`, where `mod` is the exercise module (the student's
in a worker, the reference's or a known mistake's variant in the judge). It returns plain
data only and seeds its own generators, so every subject sees the same inputs.
"""


def import_all() -> None:
    """Import every probe module (in the zygote, so that each worker starts with them loaded)."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        try:
            importlib.import_module(f"{__name__}.{info.name}")
        except Exception:  # a probe module being written: the worker imports it (and fails) itself
            pass
