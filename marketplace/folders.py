"""The local folders the settings point at, made when a process starts (not when the
settings are imported): the SQLite file's folder, the embedded broker's folders and
beat's schedule folder (TRAPS.md: beat crashed on a fresh checkout without it).

The catalog's feed folder needs nothing here: its storage creates it on the first save.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings


def local_folders() -> list[Path]:
    """The folders this configuration writes to outside the database server."""
    folders = [Path(settings.CELERY_DATA_DIR)]
    for folder in (
        settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("data_folder_in"),
        settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("processed_folder"),
        settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("broken_folder"),
        settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("control_folder"),
    ):
        if isinstance(folder, str) and folder:
            folders.append(Path(folder))
    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3" and str(database["NAME"]) != ":memory:":
        folders.append(Path(database["NAME"]).parent)
    return folders


def local_folders_create() -> None:
    for folder in local_folders():
        folder.mkdir(parents=True, exist_ok=True)
