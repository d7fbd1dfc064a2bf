"""What the marketplace made of each SKU, back to the seller: the listing-status file
(``status_file``), who may read it (``status_file_auth``, ``views``), and the join import in
the seller's platform database that reads it (``join_import``). The live path, EDRTS, is
``catalog/listing_status/status_outbox.py`` and ``catalog/listing_status/edrts_sender.py``."""
