"""What the Authentication and Platform APIs share under ``/api.php``: the x-api-key check,
rate limits per group, the error shape, endpoint keys for faults, early-retry watching."""
