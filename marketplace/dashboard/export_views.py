"""CSV export of the staff orders list: exactly the orders the list's filters show, in the
list's order, streamed row by row (``StreamingHttpResponse`` over the selector's
iterator), so a large export holds one chunk of orders in memory, not the whole file."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator

from django.http import HttpRequest, StreamingHttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from marketplace.access import staff_required
from marketplace.dashboard import order_lists
from marketplace.dashboard.forms import OrderFilterForm

# A cell a spreadsheet would run as a formula (a buyer's name is the buyer's own text).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class _Echo:
    """A file that hands back what is written to it: csv.writer formats, we stream."""

    def write(self, value: str) -> str:
        return value


def _safe(cell: str) -> str:
    return f"'{cell}" if cell.startswith(FORMULA_STARTS) else cell


def csv_lines(rows: Iterable[Iterable[str]]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    for row in rows:
        yield writer.writerow([_safe(cell) for cell in row])


@require_GET
@staff_required
def orders_csv(request: HttpRequest) -> StreamingHttpResponse:
    form = OrderFilterForm(request.GET)
    now = timezone.now()
    orders = order_lists.order_list_for_staff(filters=form.filters(), now=now)
    response = StreamingHttpResponse(
        csv_lines(order_lists.orders_csv_rows(orders)), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = (
        f'attachment; filename="orders-{timezone.localtime(now):%Y%m%d-%H%M}.csv"'
    )
    return response
