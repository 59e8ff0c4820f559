"""Probes: small functions that run a submission's code and return plain observations.

A probe is `probe(mod, *args, **kwargs)`, where `mod` is the exercise module (the student's
in a worker, the reference's or a known mistake's variant in the judge). It returns plain
data only and seeds its own generators, so every subject sees the same inputs.
"""
