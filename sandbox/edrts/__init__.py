"""The Event-Driven Sync API (EDRTS, ``../shared/spec/edrts-contract.md``): batched
insert, update and delete of a database's records, applied asynchronously by a worker
thread, under its own base path ``/catalog/rest.php``."""
