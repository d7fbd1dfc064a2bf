"""Sellers' databases of product rows (the rows themselves: ``records.databases``): seeded
demo catalogs, row changes by control call, large generated catalogs for benchmarks."""
