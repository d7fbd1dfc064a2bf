"""The internal JSON intake API (``/api/intake/``), assembled from the order routes
(``orders/api.py``) and the return routes (``returns/api.py``): it sits above both apps, so
neither adds routes to the other's API and orders never imports returns."""
