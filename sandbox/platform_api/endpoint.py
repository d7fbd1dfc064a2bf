"""The Platform API's endpoints: /api.php with the caller's API token in both headers."""

from collections.abc import Callable

from sandbox.common.api_php.endpoint import View, api_php_endpoint
from sandbox.records.api_users.callers import platform_user


def platform_endpoint(
    *,
    group: str,
    methods: tuple[str, ...],
    parameters: frozenset[str] | None = frozenset(),
    pass_params: bool = False,
) -> Callable[[View], View]:
    """Authenticated views get the ``PlatformUser`` after the request."""
    return api_php_endpoint(
        group=group,
        methods=methods,
        auth=platform_user,
        parameters=parameters,
        pass_params=pass_params,
    )
