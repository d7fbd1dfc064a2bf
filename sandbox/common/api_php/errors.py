"""The error shape of the Authentication and Platform APIs (contract: our choice of body,
``{"status": "fail", "message": "…"}`` with 400/401/403/404)."""

from django.http import JsonResponse


class ApiError(Exception):
    """Raised by services and views; answered as ``{"status": "fail", "message"}``."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def fail(message: str, status: int) -> JsonResponse:
    return JsonResponse({"status": "fail", "message": message}, status=status)


def rate_limit_message(wait_seconds: int) -> str:
    # The contract's wording, word for word.
    return f"Rate Limit Exceeded. Please wait {wait_seconds} seconds before trying again."
