"""What the sandbox's API groups share: the endpoint decorator and error helpers, clock,
faults, violations, switches, the request log and retry-watch middlewares, additive fields,
JSON bodies, query parameters, ISO codes, secret hashing, the schedule core, the settings
merge, the background loop, the reset registry and the /api.php mechanics (``api_php``).
Imports no group."""
