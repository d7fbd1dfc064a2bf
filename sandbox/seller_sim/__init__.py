"""The simulated seller: a seller's own order system, as a separate process that speaks
only HTTP to the sandbox (``GET /api/v1/get_token`` and the v2 order API).

``python -m sandbox.seller_sim --sandbox-url URL --seller NAME --api-user U --password P
--client C [behaviour…]`` (or ``--sellers-file`` for several sellers in one process). It
never imports Django or touches the sandbox's tables; the sandbox's control API only
supplies behaviour overrides (``/sandbox/api/v2/sellers/{name}/simulator``).
"""
