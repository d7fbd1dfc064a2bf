"""Fetching an import's file over HTTP and reading it as delimited records, streaming.

The body is never held whole in memory: a run streams it to a temporary file (so the
database is written only once the download is complete, and a slow server never holds a
write transaction open), then ``io.TextIOWrapper`` decodes it incrementally with the
import's encoding and ``csv.reader`` splits records as they come. The file map's header
check reads only the first record straight off the stream. Undecodable bytes do not stop
the read: they decode to lone surrogates (``surrogateescape``) so that one line is bad.
"""

import csv
import io
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, cast

import requests
import urllib3

from sandbox.platform_api.imports.settings import Dialect

CHUNK_BYTES = 64 * 1024
_UNDECODABLE = re.compile("[\udc80-\udcff]")


class FetchError(Exception):
    """The file could not be fetched to the end (a retry may help)."""


class UnreadableFile(Exception):
    """The file arrived but cannot be read with the import's delimiters (no retry helps)."""


def _auth(settings: dict) -> tuple[str, str] | None:
    if settings.get("username") or settings.get("password"):
        return (settings.get("username", ""), settings.get("password", ""))
    return None


def undecodable(record: list[str]) -> bool:
    return any(_UNDECODABLE.search(value) for value in record)


@contextmanager
def _response(settings: dict) -> Iterator[requests.Response]:
    """The 2xx answer for the import's ``url`` (HTTP Basic from ``username``/``password``,
    each network wait at most ``timeout`` s), streamed; FetchError otherwise."""
    try:
        response = requests.get(
            settings["url"], auth=_auth(settings), timeout=float(settings["timeout"]), stream=True
        )
    except requests.Timeout as exc:
        raise FetchError(f"no answer within {settings['timeout']} s (timeout)") from exc
    except requests.RequestException as exc:
        raise FetchError(f"could not connect: {exc.__class__.__name__}") from exc
    try:
        if not 200 <= response.status_code < 300:
            raise FetchError(f"HTTP {response.status_code}")
        yield response
    finally:
        response.close()


def records_of(stream: BinaryIO, dialect: Dialect) -> Iterator[list[str] | None]:
    """The records of a byte stream; a record the csv module refuses outright comes out as
    ``None`` (a bad line)."""
    text = io.TextIOWrapper(stream, encoding=dialect.codec, errors="surrogateescape", newline="")
    reader = csv.reader(text, **dialect.reader_options())
    while True:
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error:
            yield None
            continue
        except UnicodeDecodeError as exc:
            raise UnreadableFile(f"the file is not {exc.encoding}") from exc
        yield record


@contextmanager
def file_downloaded(*, settings: dict) -> Iterator[BinaryIO]:
    """The whole file in a temporary file, rewound; FetchError if the download fails."""
    with _response(settings) as response, tempfile.TemporaryFile() as spool:
        try:
            for block in response.iter_content(CHUNK_BYTES):
                spool.write(block)
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise FetchError(f"the download broke off: {exc.__class__.__name__}") from exc
        spool.seek(0)
        yield spool


def header_read(*, settings: dict, dialect: Dialect) -> list[str]:
    """The file's first record (its column names), read off the stream; FetchError if the
    file cannot be fetched, is empty or its first line cannot be read."""
    with _response(settings) as response:
        response.raw.decode_content = True  # gzip transfer encoding, if the server used it
        # urllib3 closes a drained body by default, and TextIOWrapper then reads a closed file.
        response.raw.auto_close = False
        try:
            header = next(records_of(cast(BinaryIO, response.raw), dialect), None)
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            raise FetchError(f"the download broke off: {exc.__class__.__name__}") from exc
        except UnreadableFile as exc:
            raise FetchError(str(exc)) from exc
    if not header:
        raise FetchError("the file is empty or its first line cannot be read")
    return header
