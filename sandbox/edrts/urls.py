"""EDRTS under its own base path, ``/catalog/rest.php`` (the app's ``EDRTS_BASE_URL``, e.g.
``http://127.0.0.1:8100/catalog/rest.php``), its control API under ``/sandbox/api/edrts``
and its page under ``/sandbox/edrts/``."""

from django.urls import path

from sandbox.edrts import control_views, page, views

BASE = "catalog/rest.php/"

urlpatterns = [
    path(BASE + "db/<str:db_id>", views.db_records, name="edrts_db"),
    # The reference's job path: two segments after db (details_url names the job's id; a
    # client without one builds it from the correlation id).
    path(BASE + "db/<str:db_id>/<str:key>", views.job_detail, name="edrts_job"),
    # The older path with a batch index: served under reading B of edrts_job_path only.
    path(
        BASE + "db/<str:db_id>/<str:correlation_id>/<str:batch_index>",
        views.batch_detail,
        name="edrts_batch",
    ),
    path("sandbox/api/edrts", control_views.edrts_state, name="sandbox_edrts"),
    path("sandbox/api/edrts/jobs", control_views.jobs, name="sandbox_edrts_jobs"),
    path("sandbox/api/edrts/stamps", control_views.stamps, name="sandbox_edrts_stamps"),
    path("sandbox/api/edrts/products", control_views.products, name="sandbox_edrts_products"),
    path("sandbox/edrts/dbs/<int:db_id>/", page.db_page, name="sandbox_edrts_db"),
]
