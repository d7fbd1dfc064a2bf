"""Sellers' databases of product rows: seeded demo catalogs, row changes by control call,
large generated catalogs for benchmarks."""
