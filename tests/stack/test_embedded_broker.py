"""The embedded broker (``marketplace.file_broker``, ``atomicfs://``) cannot hand a worker
half a message: kombu's filesystem transport created each message file under its final
name and wrote it afterwards, and a worker that read it in between died of a
``JSONDecodeError`` (TRAPS.md). Unreadable files are set aside and reported, never fatal."""

from __future__ import annotations

import os
import threading
import time
import uuid
from pathlib import Path
from queue import Empty

import kombu
import pytest

from marketplace import file_broker
from tests.stack.stack_process import Stack


def _connection(folder: Path) -> kombu.Connection:
    file_broker.register()
    return kombu.Connection(
        "atomicfs://localhost/",
        transport_options={
            "data_folder_in": str(folder / "broker"),
            "data_folder_out": str(folder / "broker"),
            "control_folder": str(folder / "control"),
            "broken_folder": str(folder / "broken"),
        },
    )


def _message_name(queue: str = "celery") -> str:
    return f"{round(time.monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"


def test_a_message_is_written_whole_under_its_final_name(tmp_path: Path) -> None:
    (tmp_path / "broker").mkdir()
    queue = kombu.Queue("jobs", routing_key="jobs")
    with _connection(tmp_path) as connection:
        producer = kombu.Producer(connection.default_channel)
        producer.publish({"n": 1}, exchange=queue.exchange, routing_key="jobs", declare=[queue])
    names = os.listdir(tmp_path / "broker")
    # One file, complete, and no temporary file left behind.
    assert len(names) == 1
    assert names[0].endswith(".jobs.msg")
    assert b'"body"' in (tmp_path / "broker" / names[0]).read_bytes()


def test_unreadable_files_are_set_aside_and_the_next_message_is_delivered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broker = tmp_path / "broker"
    broker.mkdir()
    queue = kombu.Queue("jobs", routing_key="jobs")
    got: list[dict] = []
    with _connection(tmp_path) as connection:
        producer = kombu.Producer(connection.default_channel)
        producer.publish({"n": 1}, exchange=queue.exchange, routing_key="jobs", declare=[queue])
        # Files older than the good one: empty, cut short, not JSON text, not a message.
        bad = {"0_a.jobs.msg": b"", "0_b.jobs.msg": b'{"body": "eyJ', "0_c.jobs.msg": b"\xff"}
        bad["0_d.jobs.msg"] = b"[1, 2]"
        for name, content in bad.items():
            (broker / name).write_bytes(content)
        consumer = kombu.Consumer(
            connection, [queue], callbacks=[lambda body, message: (got.append(body), message.ack())]
        )
        with consumer:
            connection.drain_events(timeout=5)
    assert got == [{"n": 1}]
    # Nothing lost silently: each bad file is kept, as it was, and named in an ERROR line.
    for name, content in bad.items():
        assert (tmp_path / "broken" / name).read_bytes() == content
        assert any(name in r.getMessage() and r.levelname == "ERROR" for r in caplog.records)
    assert sorted(os.listdir(broker)) == [file_broker.CLAIM_FOLDER]


def test_a_temporary_file_whose_writer_died_is_set_aside(tmp_path: Path) -> None:
    broker = tmp_path / "broker"
    broker.mkdir()
    orphan = broker / f".{_message_name('jobs')}.0123{file_broker.TEMPORARY_SUFFIX}"
    orphan.write_bytes(b'{"body"')
    old = time.time() - file_broker.ORPHAN_AFTER_SECONDS - 5
    os.utime(orphan, (old, old))
    fresh = broker / f".{_message_name('jobs')}.4567{file_broker.TEMPORARY_SUFFIX}"
    fresh.write_bytes(b"{")
    with _connection(tmp_path) as connection:
        channel = connection.default_channel
        with pytest.raises(Empty):
            channel._get("jobs")
    assert (tmp_path / "broken" / orphan.name).exists()
    assert fresh.exists()  # a write may still be under way


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc for leftover processes")
def test_a_real_worker_survives_half_written_messages_and_runs_the_next_task(
    tmp_path: Path,
) -> None:
    # Given a real worker on the embedded broker (as `make run` starts it, supervised)
    procfile = tmp_path / "Procfile"
    procfile.write_text(
        "worker: python -m marketplace.run_alone celery -A marketplace worker"
        " --loglevel INFO --concurrency 1 --hostname worker@%h\n"
    )
    stack = Stack(tmp_path, procfile=procfile)
    stack.prepare(seed=False)
    # A real message, made by the transport in a scratch folder, to be written the old way.
    (tmp_path / "scratch").mkdir()
    scratch = Stack(tmp_path / "scratch")
    scratch.run("-m", "celery", "-A", "marketplace", "call", "celery.accumulate")
    (real_message,) = (tmp_path / "scratch" / "celery" / "broker").glob("*.msg")
    broker = stack.celery_dir / "broker"
    stack.start()
    try:
        stack.wait_for_text("ready.", timeout=90)

        # When a message file is created empty under its final name and written 2 s later
        # (kombu's own writer, slowed down), and another is cut short
        slow = broker / _message_name()

        def write_the_old_way() -> None:
            with open(slow, "wb") as file:
                file.flush()
                time.sleep(2)
                file.write(real_message.read_bytes())

        writer = threading.Thread(target=write_the_old_way)
        writer.start()
        cut = broker / _message_name()
        cut.write_bytes(real_message.read_bytes()[:40])
        # ... and a real task is sent meanwhile
        task_id = stack.run(
            "-m", "celery", "-A", "marketplace", "call",
            "marketplace.orders.tasks.order_sync_sweep_task",
        ).strip()  # fmt: skip
        writer.join()

        # Then the task runs, the worker stays up, and both files are set aside, reported
        stack.wait_for_text(f"order_sync_sweep_task[{task_id}] succeeded", timeout=30)
        stack.wait_for_text("could not be read", count=2, timeout=10)
        assert stack.process is not None
        assert stack.process.poll() is None
        text = stack.log_text()
        assert f"{slow.name} could not be read (JSONDecodeError" in text
        assert f"{cut.name} could not be read (JSONDecodeError" in text
        broken = stack.celery_dir / "broken"
        assert sorted(os.listdir(broken)) == sorted([slow.name, cut.name])
        # The slowly written one ends up whole where it was set aside: not lost.
        assert (broken / slow.name).read_bytes() == real_message.read_bytes()
    finally:
        code = stack.stop()
    text = stack.log_text()
    assert code == 0, text
    assert " exited with " not in text
    assert stack.leftovers() == []


def test_an_exchange_table_is_created_whole_and_bound_into_after(tmp_path: Path) -> None:
    with _connection(tmp_path) as connection:
        channel = connection.default_channel
        channel._queue_bind("jobs", "a", None, "queue-a")
        channel._queue_bind("jobs", "b", None, "queue-b")
        table = channel.get_table("jobs")
    assert sorted(row.queue for row in table) == ["queue-a", "queue-b"]
    assert os.listdir(tmp_path / "control") == ["jobs.exchange"]  # no temporary file left
