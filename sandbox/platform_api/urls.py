"""The Platform API under /api.php (databases, exports, imports), its control-API additions
under /sandbox/api and its pages under /sandbox/platform/."""

from django.urls import path

from sandbox.platform_api import views as platform_views
from sandbox.platform_api.catalog import control_views as catalog_control
from sandbox.platform_api.exports import control_views as export_control
from sandbox.platform_api.exports import views as export_views
from sandbox.platform_api.imports import control_views as import_control
from sandbox.platform_api.imports import views as import_views
from sandbox.platform_api.pages import views as pages

urlpatterns = [
    path(
        "api.php/accounts/<str:account_id>/dbs",
        platform_views.account_dbs,
        name="platform_account_dbs",
    ),
    path(
        "api.php/dbs/<str:db_id>/exports",
        export_views.exports_collection,
        name="platform_exports",
    ),
    path(
        "api.php/dbs/<str:db_id>/exports/<str:export_id>",
        export_views.export_detail,
        name="platform_export",
    ),
    path(
        "api.php/dbs/<str:db_id>/exports/<str:export_id>/schedule",
        export_views.export_schedule_view,
        name="platform_export_schedule",
    ),
    path(
        "api.php/dbs/<str:db_id>/exports/<str:export_id>/run",
        export_views.export_run_view,
        name="platform_export_run",
    ),
    # Issue 13: imports; auto_detected is routed before <import_id>.
    path(
        "api.php/dbs/<str:db_id>/imports",
        import_views.imports_collection,
        name="platform_imports",
    ),
    path(
        "api.php/dbs/<str:db_id>/imports/auto_detected",
        import_views.imports_auto_detected,
        name="platform_imports_auto_detected",
    ),
    path(
        "api.php/dbs/<str:db_id>/imports/<str:import_id>",
        import_views.import_detail,
        name="platform_import",
    ),
    path(
        "api.php/dbs/<str:db_id>/imports/<str:import_id>/schedule",
        import_views.import_schedule_view,
        name="platform_import_schedule",
    ),
    path(
        "api.php/dbs/<str:db_id>/imports/<str:import_id>/delimiters",
        import_views.import_delimiters_view,
        name="platform_import_delimiters",
    ),
    path(
        "api.php/dbs/<str:db_id>/imports/<str:import_id>/file_map",
        import_views.import_file_map_view,
        name="platform_import_file_map",
    ),
]

# Control API additions (local only, no auth) and the pages.
urlpatterns += [
    path("sandbox/api/seed-demo", catalog_control.seed_demo, name="sandbox_seed_demo"),
    path("sandbox/api/dbs", catalog_control.dbs, name="sandbox_dbs"),
    path("sandbox/api/dbs/<int:db_id>/owner", catalog_control.db_owner, name="sandbox_db_owner"),
    path("sandbox/api/dbs/<int:db_id>/rows", catalog_control.db_rows, name="sandbox_db_rows"),
    path(
        "sandbox/api/dbs/<int:db_id>/generate",
        catalog_control.db_generate_view,
        name="sandbox_db_generate",
    ),
    path("sandbox/api/exports/<int:export_id>", export_control.export_view, name="sandbox_export"),
    path(
        "sandbox/api/exports/<int:export_id>/run",
        export_control.export_run_now,
        name="sandbox_export_run",
    ),
    path(
        "sandbox/api/export-runs/<int:run_id>",
        export_control.export_run_view,
        name="sandbox_export_run_detail",
    ),
    path(
        "sandbox/api/export-runs/<int:run_id>/file",
        export_control.export_run_file,
        name="sandbox_export_run_file",
    ),
    path("sandbox/api/imports/<int:import_id>", import_control.import_view, name="sandbox_import"),
    path(
        "sandbox/api/imports/<int:import_id>/run",
        import_control.import_run_now,
        name="sandbox_import_run",
    ),
    path("sandbox/platform/", pages.overview, name="sandbox_platform_page"),
    path("sandbox/platform/outbox/", pages.outbox_page, name="sandbox_platform_outbox"),
    path("sandbox/platform/dbs/<int:db_id>/", pages.db_page, name="sandbox_platform_db"),
    path(
        "sandbox/platform/exports/<int:export_id>/",
        pages.export_page,
        name="sandbox_platform_export",
    ),
    path(
        "sandbox/platform/exports/<int:export_id>/run",
        pages.export_run_post,
        name="sandbox_platform_export_run",
    ),
    path("sandbox/platform/runs/<int:run_id>/", pages.run_page, name="sandbox_platform_run"),
    path(
        "sandbox/platform/imports/<int:import_id>/run",
        pages.import_run_post,
        name="sandbox_platform_import_run",
    ),
]
