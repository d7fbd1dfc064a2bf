"""The catalog's staff pages (under ``/dashboard/catalog/``): thin views over the services
of the other rooms, their forms, and what every action on one seller shares
(``seller_actions``, through ``marketplace.staff_confirm``)."""
