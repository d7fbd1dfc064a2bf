"""Benchmarks and the fault-injection soak (``make bench``, ``make soak``; docs/benchmarks.md)."""
