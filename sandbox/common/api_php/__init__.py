"""What the Authentication and Platform APIs share under ``/api.php``: rate limits per
group, the error shape, endpoint keys for faults, the control decorator of their additions."""
